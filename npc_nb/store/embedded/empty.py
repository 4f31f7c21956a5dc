"""A store file that does not exist yet, read as an empty store: nothing is created.

Opening a project creates no file (``FileStore``): the file, its folder and its schema
are made by the first write. Until then every read is served by an in-memory DuckDB
database with the same schema, so a reader gets the tables, views and column types it
would get from a new file, with no rows. One such database is migrated per process (a
tenth of a second, once) and each read gets a connection of its own to it
(``cursor``), inside a transaction that is always rolled back: whatever a reader did
to it, the next reader finds it empty again.

A caller's SQL (``nb.sql``) reads an empty store too, with the very restrictions of a
read-only query on a store file (``lease.READ_ONLY_CONFIG``: the file opened
read-only, no other files, no extensions, no settings), so a query is refused or
answered exactly as it will be once the store exists. The engine opens only a file
read-only, so that empty store is a file: migrated once per process into a private
temporary folder (never the project's), removed at exit.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..schema.migrations import apply_migrations
from .lease import READ_ONLY_CONFIG

__all__ = ["empty_read_only", "empty_store"]

_template: duckdb.DuckDBPyConnection | None = None
_template_file: Path | None = None
_template_lock = threading.Lock()
#: As the store file's own connection (``lease``): npc_nb's reads may export to files.
_ENGINE: dict[str, str | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


@contextmanager
def empty_store() -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to this process's empty store, in a transaction rolled back after."""
    global _template
    with _template_lock:
        if _template is None:
            _template = _migrated()
        con = _template.cursor()
    try:
        con.execute("BEGIN TRANSACTION")
        yield con
    finally:
        con.close()  # an open transaction is rolled back with its connection


@contextmanager
def empty_read_only() -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to an empty store file, for a caller's read-only SQL."""
    global _template_file
    with _template_lock:
        if _template_file is None:
            _template_file = _migrated_file()
    options: dict[str, Any] = dict(READ_ONLY_CONFIG)  # the very config of a store file's
    con = duckdb.connect(str(_template_file), config=options)
    try:
        yield con
    finally:
        con.close()


def _migrated(path: str = ":memory:") -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(path, config=dict(_ENGINE))
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    apply_migrations(con)
    return con


def _migrated_file() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="npc_nb-empty-store-"))  # 0700
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "empty.duckdb"
    _migrated(str(path)).close()
    return path
