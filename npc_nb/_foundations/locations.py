"""Where stores live: project discovery, the user store, and refusals that keep them apart.

A project is the nearest folder (walking up from the start) holding ``.npc_nb/``,
``pyproject.toml`` or ``.git``; else the start folder itself. Its store is
``<project>/.npc_nb/memory.duckdb``; ``global`` memories live in the user store under
``$NPC_NB_HOME`` (default ``~/.npc_nb``).

Two stores must never be one file: the user store is read as ``global`` by every
project, so a project store that *was* the user store would leak one project's npc-
and project-scoped memories into every other project's prompts. The user store's folder
is therefore never taken as a project marker, and a project whose store would be the
user store (JupyterLab started in ``~`` with no marker) is refused. A symlinked store
folder or file could make a write land in somebody else's store, so writes through one
are refused too. Store folders are private (0700), store files 0600: memories are
personal data.

Opening a project creates nothing (``check_store_dir`` only looks at a folder that is
already there); the store folder is made when something is first written
(``ensure_store_dir``), and it then holds a ``.gitignore`` of ``*``, as a virtual
environment does: the store keeps raw chats, and ``git add .`` in the project must
never take them along by accident. A store made before that gets the file the next
time npc_nb opens it. A step that may create a project and then refuse (importing a
bundle into a new folder) runs inside ``removed_on_failure``: a refusal leaves no
folder and no empty store behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from ..errors import ConfigError, StoreError, SymlinkedStoreError

__all__ = [
    "GITIGNORE",
    "STORE_DIR",
    "STORE_FILE",
    "check_store_dir",
    "ensure_store_dir",
    "find_project_root",
    "keep_out_of_git",
    "make_private",
    "make_wal_private",
    "output_path",
    "store_path",
    "user_home",
]

STORE_DIR = ".npc_nb"
STORE_FILE = "memory.duckdb"
_MARKERS = ("pyproject.toml", ".git")
FOLDER_MODE = 0o700
FILE_MODE = 0o600


def user_home() -> Path:
    """The user-level folder: ``$NPC_NB_HOME``, else ``~/.npc_nb``."""
    # Absolute, so a later chdir (%cd in a notebook) cannot switch to another store.
    return Path(os.environ.get("NPC_NB_HOME") or Path.home() / ".npc_nb").expanduser().absolute()


def find_project_root(start: Path | str | None = None, *, create: bool = False) -> Path:
    """The nearest folder at or above ``start`` that marks a project, else ``start``.

    A ``start`` that does not exist is an error (a typo must never start a new, empty
    store) unless ``create`` is true, which creates it.
    """
    origin = _start_folder(start, create)
    home = user_home().resolve()
    root = next((f for f in (origin, *origin.parents) if _is_marked(f, home)), origin)
    if (root / STORE_DIR).resolve() == home:
        raise ConfigError(
            f"{root} has no project marker, so its memories would go into {home}, the user "
            "store that every project reads as global memory. Open a project folder instead: "
            "npc_nb.open('path/to/project') (any folder; one holding pyproject.toml, .git or "
            ".npc_nb is found from its subfolders), or start Jupyter there."
        )
    return root


def _start_folder(start: Path | str | None, create: bool) -> Path:
    if start is None:
        return Path.cwd().resolve()
    if not isinstance(start, str | os.PathLike) or not str(start).strip():
        raise ConfigError(f"project_dir must be a folder path (a str or Path), not {start!r}.")
    folder = Path(start).expanduser()
    if not folder.exists():
        if not create:
            raise ConfigError(
                f"No folder {folder}: check the path, or pass create=True to start a new "
                "project there."
            )
        try:
            folder.mkdir(parents=True)
        except OSError as exc:
            raise ConfigError(
                f"Cannot create the project folder {folder}: {exc.strerror}."
            ) from exc
    if not folder.is_dir():
        raise ConfigError(f"{folder} is a file, not a folder; open the folder that holds it.")
    return folder.resolve()


def _is_marked(folder: Path, home: Path) -> bool:
    store = folder / STORE_DIR
    if store.exists() and store.resolve() != home:  # the user store marks no project
        return True
    return any((folder / marker).exists() for marker in _MARKERS)


def output_path(path: str | os.PathLike[str], *, is_folder: bool = False) -> Path:
    """Where an export goes: its folder is created if needed; a path that cannot be
    written is a clear error, never an OSError from deep inside a writer."""
    target = Path(path).expanduser()
    try:
        if "\x00" in str(target):
            raise ValueError("the path holds a NUL character")
        if not is_folder and (not str(path).strip() or target.is_dir()):
            raise ValueError("it is a folder; name the file to write")
        (target if is_folder else target.parent).mkdir(parents=True, exist_ok=True)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"Cannot write to {str(target)!r}: {reason}.") from exc
    return target


def store_path(folder: Path) -> Path:
    """The DuckDB file inside a project's (or the user's) store folder."""
    return folder / STORE_FILE


def ensure_store_dir(folder: Path) -> Path:
    """Create the store folder if needed (private, with its ``.gitignore``); refuse if
    it or a store file is a symlink."""
    refuse_symlinks(folder)
    try:
        folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"Cannot create the store folder {folder}: {exc.strerror}. Check that you may "
            "write there, or open a project in a folder you own."
        ) from exc
    make_private(folder)
    keep_out_of_git(folder)
    return folder


@contextlib.contextmanager
def removed_on_failure(folder: Path) -> Iterator[None]:
    """Run a step that may create ``folder`` (and missing folders above it) and its store
    folder; if the step fails, remove the highest of them it created, and re-raise.
    What was there before the step is never touched."""
    created = _highest_missing(Path(folder).expanduser().absolute() / STORE_DIR)
    try:
        yield
    except BaseException:
        if created is not None and created.is_dir() and not created.is_symlink():
            shutil.rmtree(created, ignore_errors=True)
        raise


def _highest_missing(path: Path) -> Path | None:
    """The highest folder on the way to ``path`` (itself included) that does not exist."""
    missing = None
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return missing
        missing = candidate
    return missing


def check_store_dir(folder: Path) -> None:
    """At open, a store folder that is already there: refused if it (or a store file)
    is a symlink, made private. Nothing is created."""
    if folder.is_dir() or folder.is_symlink():
        refuse_symlinks(folder)
        make_private(folder)


#: What a store folder's ``.gitignore`` says (``*`` ignores the file itself too).
GITIGNORE = (
    "# Created by npc_nb: this folder is a memory store (raw chats included) and stays out\n"
    "# of git. To share memories on purpose: nb.exports.tables(), npc-nb migrate-store, or a lab\n"
    "# store (store=postgresql://...).\n"
    "*\n"
)


def keep_out_of_git(folder: Path) -> None:
    """Write ``folder/.gitignore`` unless one is there (see the module docstring). Never
    through a symlink, never over a file the user wrote; a folder npc_nb may not write
    to is left as it is."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(folder / ".gitignore", flags, FILE_MODE)
    except OSError:  # there already (or a symlink), or not ours to write
        return
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(GITIGNORE)


def make_private(folder: Path) -> None:
    """The store folder 0700 and its store files 0600, where this process owns them
    (others are left). Each path gets the mode of what it is, read without following a
    link (``lstat``): a regular file 0600, a folder 0700 (also a folder sitting where
    the file should be, so its owner can still open it and move it aside); a link is
    never followed (the store refuses symlinked paths anyway), anything else left."""
    for path in (folder, store_path(folder), _wal(folder)):
        _make_private(os.fspath(path))


def make_wal_private(folder: Path) -> None:
    """After a commit: the write-ahead log 0600 if this process owns it. Only the log can
    be new then (the folder and the file were made private when the store was opened),
    so one ``lstat`` is all a commit pays."""
    _make_private(os.fspath(_wal(folder)))


def _make_private(path: str) -> None:
    with contextlib.suppress(OSError):  # not there, or not ours to change
        found = os.lstat(path)
        if stat.S_ISREG(found.st_mode):
            mode = FILE_MODE
        elif stat.S_ISDIR(found.st_mode):
            mode = FOLDER_MODE
        else:  # a link (never followed), a FIFO, a socket, a device
            return
        if stat.S_IMODE(found.st_mode) != mode:
            os.chmod(path, mode)


def _wal(folder: Path) -> Path:
    return store_path(folder).with_suffix(".duckdb.wal")


def refuse_symlinks(folder: Path) -> None:
    """Raise SymlinkedStoreError if the store folder or any store file is a symlink."""
    for path in (folder, store_path(folder), _wal(folder)):
        if path.is_symlink():
            raise SymlinkedStoreError(
                f"Refusing to write through the symlink {path} -> {path.readlink()}. "
                "Replace it with a real folder or file (or point npc_nb at the target)."
            )
