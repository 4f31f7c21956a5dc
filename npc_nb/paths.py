"""Where stores live: project discovery and the refusal of symlinked store paths.

A project is the nearest folder (walking up from the start) holding ``.npc_nb/``,
``pyproject.toml`` or ``.git``; else the start folder itself. Its store is
``<project>/.npc_nb/memory.duckdb``; ``global`` memories live in the user store under
``$NPC_NB_HOME`` (default ``~/.npc_nb``). A symlinked store folder or file could make a
write land in somebody else's store, so writes through one are refused.
"""

from __future__ import annotations

from pathlib import Path

from .errors import SymlinkedStoreError

__all__ = ["STORE_DIR", "STORE_FILE", "ensure_store_dir", "find_project_root", "store_path"]

STORE_DIR = ".npc_nb"
STORE_FILE = "memory.duckdb"
_MARKERS = (STORE_DIR, "pyproject.toml", ".git")


def find_project_root(start: Path | str | None = None) -> Path:
    """The nearest folder at or above ``start`` that marks a project, else ``start``."""
    origin = Path(start or Path.cwd()).expanduser().resolve()
    for folder in (origin, *origin.parents):
        if any((folder / marker).exists() for marker in _MARKERS):
            return folder
    return origin


def store_path(folder: Path) -> Path:
    """The DuckDB file inside a project's (or the user's) store folder."""
    return folder / STORE_FILE


def ensure_store_dir(folder: Path) -> Path:
    """Create the store folder if needed; refuse if it or the store file is a symlink."""
    refuse_symlinks(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def refuse_symlinks(folder: Path) -> None:
    """Raise SymlinkedStoreError if the store folder or any store file is a symlink."""
    for path in (folder, store_path(folder), store_path(folder).with_suffix(".duckdb.wal")):
        if path.is_symlink():
            raise SymlinkedStoreError(
                f"Refusing to write through the symlink {path} -> {path.readlink()}. "
                "Replace it with a real folder or file (or point npc_nb at the target)."
            )
