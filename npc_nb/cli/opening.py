"""Which project a command opens, and that its store is there: a command that only reads
or reviews never creates one.

``npc-nb review`` opens the project as it is (``open_existing``). Its store is the
project folder's file (``--project DIR``, else the project found from here); a folder
whose project has none yet is refused with advice for the command line, and nothing is
made there. With ``--store URL`` it is a project on a PostgreSQL server, named by
``--project-name NAME`` (else, as in a notebook, by the project folder's name or the
project setting); a project the server does not hold is refused with the projects it
does, and no schema is created.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._foundations.locations import STORE_DIR, store_path
from ..errors import ConfigError, StoreError

if TYPE_CHECKING:
    from .._project import Project

__all__ = ["no_store_message", "open_to_review", "refuse_absent_source"]

_START = "Start one in a notebook (%load_ext npc_nb, then a %%npc cell)"


def no_store_message(folder: Path, path: Path, elsewhere: str) -> str:
    """What a command says in a project with no store yet; ``elsewhere`` says how to
    name another project."""
    return (
        f"No npc_nb store in {folder} ({path}): nothing has been proposed in this project "
        f"yet. {_START} or {elsewhere}."
    )


def open_to_review(args: argparse.Namespace) -> Project:
    """The project to review, as it is: nothing is created (see the module docstring)."""
    from .._project import open_existing  # pandas, DuckDB: only when a command runs

    if args.project is not None and not Path(args.project).expanduser().is_dir():
        raise ConfigError(
            f"No folder {args.project}: --project DIR names a project folder that exists "
            "(leave it out to use the project found from here); a project on a lab's "
            "server is named with --store URL --project-name NAME."
        )
    settings: dict[str, Any] = {"store": args.store} if args.store else {}
    if args.project_name:
        settings["project"] = args.project_name
    if getattr(args, "by", None):  # --by NAME: who reviews here, as the reviewer setting
        settings["reviewer"] = args.by
    project = open_existing(args.project, **settings)
    if "reviewer" in settings:  # "recording as ada (--by)", not "(npc_nb.open())"
        project.settings.mark_source("reviewer", "--by")
    where = project.store_path
    if isinstance(where, Path) and (args.project_name or not where.exists()):
        project.close()  # the embedded file: opening it made nothing
        if args.project_name:
            raise ConfigError(
                "--project-name names a project on a PostgreSQL server (--store URL); "
                "a project folder is named with --project DIR."
            )
        raise StoreError(
            no_store_message(project.root, where, "pass --project DIR for another project")
        )
    return project


def refuse_absent_source(folder: str, *, user: bool) -> None:
    """A StoreError if ``folder`` (a move's FROM, when it is a folder) holds no store."""
    if "://" in folder or user:
        return  # a URL, or the user's folder: the move says what is missing there
    root = Path(folder).expanduser().absolute()
    path = store_path(root / STORE_DIR)
    if root.is_dir() and not path.exists():
        raise StoreError(no_store_message(root, path, "name another project's folder as FROM"))
