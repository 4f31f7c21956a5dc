"""The options that say which project a command opens, shared by the commands that
open one: ``--project DIR`` (its folder), ``--project-name NAME`` (its name on a
shared store) and ``--store URL`` (the shared store), and opening it from them.

Each defaults to the settings (``NPC_NB_PROJECT``, ``NPC_NB_STORE``, ``.env``, the TOML
file), exactly as ``npc_nb.open()`` reads them, so a command and a notebook opened in
the same folder open the same project.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._project import Project

__all__ = ["add_project_options", "open_from"]


def add_project_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--project``, ``--project-name`` and ``--store`` to a command's parser."""
    parser.add_argument(
        "--project", metavar="DIR", help="project folder (default: found from here)"
    )
    parser.add_argument(
        "--project-name",
        metavar="NAME",
        help="with --store: the project's name on the server (default: the project "
        "setting, NPC_NB_PROJECT, else the project folder's name)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="a shared store, postgresql://user@host:port/db (default: the store "
        "setting, NPC_NB_STORE, else the project's file)",
    )


def open_from(args: argparse.Namespace) -> Project:
    """The project the options name (settings given on the command line win)."""
    from .._project import open_project

    settings: dict[str, Any] = {}
    if args.store:
        settings["store"] = args.store
    if args.project_name:
        settings["project"] = args.project_name
    return open_project(args.project, **settings)
