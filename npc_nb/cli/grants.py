"""``npc-nb grant ROLE --reader|--reviewer`` and ``npc-nb revoke ROLE``: the owner of a
project on a shared store lets a database role read or review it, or takes that back.

The same as ``nb.access.grant`` and ``nb.access.revoke`` (the store does the work: ``roles``); this
module only parses, opens the project (``options``) and says what the role may do now.
The role must exist: creating roles and their passwords is the database
administrator's job, never this command's.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import NpcError
from .console import Console
from .options import add_project_options, open_from

__all__ = ["add_grant_commands", "grant_command"]


def add_grant_commands(commands: Any) -> None:
    grant = commands.add_parser(
        "grant",
        help="let a database role read or review a project on a shared store (as its owner)",
        description="Give a database role exactly one level of access to this project on "
        "its PostgreSQL store, as the owner of the project's schema. The role must exist "
        "(a database administrator creates it).",
    )
    grant.add_argument("role", metavar="ROLE", help="the database role (it must exist)")
    level = grant.add_mutually_exclusive_group(required=True)
    level.add_argument(
        "--reader",
        dest="level",
        action="store_const",
        const="reader",
        help="may query the project (nb.sql, %%npc_sql, metrics, exports), not decide",
    )
    level.add_argument(
        "--reviewer",
        dest="level",
        action="store_const",
        const="reviewer",
        help="may query and decide (the panel, npc-nb review); the audit log only grows",
    )
    add_project_options(grant)
    revoke = commands.add_parser(
        "revoke",
        help="take back every grant a database role has on a project (as its owner)",
        description="Take back every privilege the owner gave a database role on this "
        "project's PostgreSQL schema: it can no longer open or read the project.",
    )
    revoke.add_argument("role", metavar="ROLE", help="the database role")
    add_project_options(revoke)


def grant_command(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb grant`` or ``npc-nb revoke``: what the role may do now, or the error."""
    try:
        project = open_from(args)
        try:
            if args.command == "grant":
                access = project.access.grant(args.role, args.level)
            else:
                access = project.access.revoke(args.role)
        finally:
            project.close()
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(access))
    return 0
