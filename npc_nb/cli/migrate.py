"""``npc-nb migrate-store FROM TO``: its options, and the move with its summary.

The move itself (every row of every table, file or PostgreSQL at either end) is the
store's (``store.moving``); this module only parses, runs it and says what it did.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import NpcError
from .console import Console
from .opening import refuse_absent_source

__all__ = ["add_migrate_store", "migrate_store"]


def add_migrate_store(commands: Any) -> None:
    move = commands.add_parser(
        "migrate-store",
        help="copy a store, every row of it, into another (a project folder or PostgreSQL)",
    )
    move.add_argument("source", metavar="FROM", help="a project folder or a PostgreSQL URL")
    move.add_argument("target", metavar="TO", help="a project folder or a PostgreSQL URL")
    move.add_argument(
        "--project-name",
        "--project",
        dest="project",
        metavar="NAME",
        help="the project's name, for an end that is a URL",
    )
    move.add_argument(
        "--user",
        action="store_true",
        help="move the user's store of global memories: a folder end is a user folder "
        "such as ~/.npc_nb ($NPC_NB_HOME)",
    )
    move.add_argument(
        "--force", action="store_true", help="replace whatever the target already holds"
    )


def migrate_store(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb migrate-store FROM TO``: the move, then its summary (rows per table)."""
    from ..store.moving.move import migrate_store as move
    from ..store.moving.move import store_end

    try:
        for end in (args.source, args.target):  # a URL without --project, ... first
            store_end(end, project=args.project, user=args.user)
        refuse_absent_source(args.source, user=args.user)
        moved = move(
            args.source, args.target, project=args.project, user=args.user, force=args.force
        )
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(moved))
    return 0
