"""``npc-nb import {bundle,npcpy,mem0,letta} PATH`` and ``npc-nb export {bundle,...} PATH``.

The work is the facade's (``import_bundle``, ``nb.imports.npcpy``, ``nb.export_bundle``,
...); this module parses, refuses options that do not apply to a kind (``--trust`` is
for mem0 and Letta, whose memories carry no human decision; ``--into-nonempty`` for a
bundle), runs it and prints what it did. A long import shows a line that updates in
place on standard error (``interop.summary.Progress``). A bundle is imported into the
project folder given (created if it does not exist, as a new project is).
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import NpcError
from .console import Console

__all__ = ["EXPORT_KINDS", "IMPORT_KINDS", "add_transfer", "run_export", "run_import"]

IMPORT_KINDS = ("bundle", "npcpy", "mem0", "letta")
EXPORT_KINDS = ("bundle", "mem0", "letta", "npcpy")


def add_transfer(commands: Any) -> None:
    """The ``import`` and ``export`` subcommands."""
    into = commands.add_parser(
        "import", help="import a bundle, or memories from npcpy, mem0 or Letta, into a project"
    )
    into.add_argument("kind", choices=IMPORT_KINDS, help="what the file is")
    into.add_argument("path", metavar="PATH", help="the file (for npcpy, or its folder)")
    into.add_argument("--project", help="project folder (default: found from here)")
    into.add_argument("--store", help="a shared store, postgresql://user@host:port/db")
    into.add_argument(
        "--trust",
        action="store_true",
        help="mem0 and letta: import approved, not as candidates for review (audited)",
    )
    into.add_argument(
        "--into-nonempty",
        action="store_true",
        help="bundle: merge into a project that holds memories (duplicates skipped)",
    )
    out = commands.add_parser(
        "export", help="export the project as a bundle, or its approved memories for another tool"
    )
    out.add_argument("kind", choices=EXPORT_KINDS, help="bundle, or the tool to export for")
    out.add_argument("path", metavar="PATH", help="the file to write (for npcpy, a folder)")
    out.add_argument("--project", help="project folder (default: found from here)")
    out.add_argument("--store", help="a shared store, postgresql://user@host:port/db")


def run_import(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb import KIND PATH``: the import, then its summary."""
    from .._project import import_bundle, open_project

    shared = {"store": args.store} if args.store else {}
    try:
        _check_options(args)
        if args.kind == "bundle":
            folder = args.project or "."
            result: Any = import_bundle(
                args.path, folder, create=True, into_nonempty=args.into_nonempty, **shared
            )
        else:
            project = open_project(args.project, **shared)
            try:
                method = getattr(project.imports, args.kind)
                trust = {"trust": True} if args.trust else {}
                result = method(args.path, **trust)
            finally:
                project.close()
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(result))
    return 0


def _check_options(args: argparse.Namespace) -> None:
    from ..errors import ConfigError

    if args.trust and args.kind not in ("mem0", "letta"):
        raise ConfigError(
            f"--trust is for mem0 and letta, whose memories record no human decision; "
            f"{args.kind} keeps the decisions it records."
        )
    if args.into_nonempty and args.kind != "bundle":
        raise ConfigError(
            "--into-nonempty is for a bundle; other imports always add to the project."
        )


def run_export(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb export KIND PATH``: the file written."""
    from .._project import open_project

    shared = {"store": args.store} if args.store else {}
    try:
        project = open_project(args.project, **shared)
        try:
            if args.kind == "bundle":
                written = project.export_bundle(args.path)
            else:
                written = project.exports.to(args.kind, args.path)
        finally:
            project.close()
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(f"Wrote {written}")
    return 0
