"""Storage faults: a store file that cannot be read or written is a StoreError that
names the file and says what to do, never a driver exception.

DuckDB reads a file lazily, so damage shows wherever a damaged page is first read: when
the file is opened (its header, the replay of its write-ahead log), in the migrations
run on every open, or in any later read. Every way of opening a store (``FileStore``'s
lease, the read-only connection of ``nb.sql``, both ends of ``migrate-store``) passes
what the engine raised through ``storage_fault``, which tells damage (cut short,
overwritten, not a DuckDB file, a folder in its place, a log that cannot be replayed)
from the rest (permissions, a full disk) and gives the advice that fits: a damaged
file is moved aside and a backup put back, which npc_nb never does by itself.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ...errors import StoreError

__all__ = ["STORAGE_ERRORS", "is_storage_fault", "storage_fault", "write_fault"]

#: Errors of the file, not of the statement: a full disk, a read-only folder, a lost or
#: damaged file.
STORAGE_ERRORS = (duckdb.IOException, duckdb.TransactionException, duckdb.FatalException)
#: What DuckDB says of a file that is not (or no longer) a whole database.
_DAMAGE = (
    "not a valid DuckDB database file",
    "Could not read enough bytes",
    "Corrupt database file",
    "Corrupt WAL file",
    "replaying WAL",
    "Is a directory",
)
_WAL = ".wal"


def is_storage_fault(exc: BaseException, path: Path) -> bool:
    """Whether ``exc``, raised by a statement on the store at ``path``, is the file's
    fault rather than the statement's: it names the file or its log, or says the file
    is damaged. (A statement's own file, such as an export's, is named otherwise.)"""
    if not isinstance(exc, STORAGE_ERRORS):
        return False
    text = str(exc)
    named = f'"{path}"' in text or f'"{path}{_WAL}"' in text
    return named or isinstance(exc, duckdb.FatalException) or _damaged(text)


def storage_fault(path: Path, exc: BaseException, *, doing: str = "open") -> StoreError:
    """The StoreError for ``exc``, raised while ``doing`` (open, read) the store file at
    ``path``: one line, the file, the engine's reason and what to do."""
    reason = _first_line(exc)
    if _damaged(reason) and f'"{path}{_WAL}"' in reason:
        return StoreError(
            f"The write-ahead log {path}{_WAL} of the store cannot be replayed: {reason}. "
            "Move the log aside (rename it, and keep it): the store then opens as it was "
            "at its last checkpoint, without the writes only the log held. Or put back "
            "a backup of both files."
        )
    if _damaged(reason):
        return StoreError(
            f"The store {path} is damaged (cut short, overwritten or not a store): "
            f"{reason}. Move it aside (rename it, e.g. to {path.name}.damaged, and keep "
            "it) and put back a backup copy, or a copy made with npc-nb migrate-store; "
            "with no file there, the project starts a new, empty store."
        )
    return StoreError(
        f"Cannot {doing} the store {path}: {reason}. Check that the file and its folder "
        "are yours to read and write and that the disk has space, then retry."
    )


def write_fault(path: Path, exc: BaseException) -> StoreError:
    """The StoreError for a write transaction that failed on the file (rolled back)."""
    if _damaged(_first_line(exc)):
        return storage_fault(path, exc, doing="write")
    return StoreError(
        f"Could not write to the store {path}: {_first_line(exc)}. "
        "Nothing of this operation was saved; everything saved before is intact. "
        "Is the disk full or the folder read-only? Free space or fix the "
        "permissions, then retry."
    )


def _damaged(text: str) -> bool:
    return any(sign in text for sign in _DAMAGE)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].rstrip(".!") if text else type(exc).__name__
