"""``npc-nb verify``: the project's history recomputed (``nb.verify()``), for a script
or CI: exit status 0 when every check held, 1 when the history is broken (each problem
printed on its own line), 2 for a mistake the user can fix (no such project, ...).
"""

from __future__ import annotations

import argparse

from ..errors import NpcError
from .console import Console
from .opening import open_to_review
from .options import add_project_options

__all__ = ["add_verify", "run_verify"]


def add_verify(commands: argparse._SubParsersAction) -> None:
    verify = commands.add_parser(
        "verify",
        help="recompute the hash chains (audit events, votes, recorded replies), every "
        "memory against its audit events and every snapshot's hash; exit status 1 if "
        "anything was changed after it was written",
    )
    add_project_options(verify)


def run_verify(args: argparse.Namespace, console: Console) -> int:
    """Verify the project ``args`` name (opened as it is: nothing is created)."""
    try:
        project = open_to_review(args)
        try:
            found = project.verify()
        finally:
            project.close()
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(found))
    return 0 if found.ok else 1
