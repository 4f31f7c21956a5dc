"""``npc-nb rerun NOTEBOOK [--live] [--output OUT]``: a saved notebook executed again.

The re-run itself (a kernel of its own, the replay forced from outside, each cell
compared with what was saved) is ``reruns``'; this module parses, runs it and prints the
report. The exit status says what a script needs: 0 when every cell is identical, 1
when any changed or failed, 2 for a problem to fix first (no such notebook, no kernel).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import NpcError
from ..reruns import rerun
from .console import Console

__all__ = ["add_rerun", "run_rerun"]


def add_rerun(commands: Any) -> None:
    again = commands.add_parser(
        "rerun",
        help="execute a saved notebook again, every model reply replayed from its "
        "recordings, and say per cell: identical, changed (with a diff) or failed",
    )
    again.add_argument("notebook", metavar="NOTEBOOK", help="the saved .ipynb file")
    again.add_argument(
        "--live",
        action="store_true",
        help="call the model again instead (nothing is recorded): drift shows as changed",
    )
    again.add_argument(
        "--output", metavar="OUT", help="write the re-run notebook here (the saved one is kept)"
    )


def run_rerun(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb rerun``: the report, one line per code cell (and each diff)."""
    try:
        report = rerun(args.notebook, live=args.live, output=args.output)
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(report))
    return 0 if report.identical else 1
