"""A store file that does not exist yet, read as an empty store: nothing is created.

Opening a project creates no file (``FileStore``): the file, its folder and its schema
are made by the first write. Until then every read is served by an in-memory DuckDB
database with the same schema, so a reader gets the tables, views and column types it
would get from a new file, with no rows. One such database is migrated per process (a
tenth of a second, once) and each read gets a connection of its own to it
(``cursor``), inside a transaction that is always rolled back: whatever a reader did
to it, the next reader finds it empty again.

A caller's SQL (``nb.sql``) gets a fresh database of its own instead, opened with the
same restrictions as a read-only query on a file (``lease.READ_ONLY_CONFIG``: no files,
no extensions, no settings): the shared one stays npc_nb's alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from ..schema.migrations import apply_migrations

__all__ = ["empty_read_only", "empty_store"]

_template: duckdb.DuckDBPyConnection | None = None
_template_lock = threading.Lock()
_NO_OUTSIDE = {
    "enable_external_access": False,
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
    """A database of its own with the empty schema, for a caller's read-only SQL."""
    con = _migrated()
    con.execute("SET lock_configuration = true")
    try:
        yield con
    finally:
        con.close()


def _migrated() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config=dict(_NO_OUTSIDE))
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    apply_migrations(con)
    return con
