"""Which tables a bundle carries, their columns and types, and the checksum of a
table's rows.

The tables are read from the store's own catalog (``moving.copy_into.catalog_tables``,
as ``npc-nb migrate-store`` reads them), never listed here: a table a later migration
adds travels without a change to this code. Only ``EXCLUDED`` stays behind, each for
a reason it gives. Columns and types come from the schema the migrations build (a
migrated in-memory DuckDB: ``schema_columns``), in its column order, so a bundle
written from PostgreSQL and one written from a file are the same bytes of data.

The checksum of a table (``table_digest``) is defined on values, not on a file: each
row becomes one canonical line (``canonical_line``: a JSON array of its values in
column order), each line is hashed with SHA-256, the digests are sorted bytewise, and
the checksum is the SHA-256 of their concatenation. The order of rows, the file
format and its compression do not change it; a changed value, a lost or an added row
does. docs/bundle.md gives the encoding of each type.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ...errors import StoreError
from ..schema.migrations import apply_migrations

__all__ = [
    "EXCLUDED",
    "Column",
    "canonical_line",
    "quoted",
    "schema_columns",
    "schema_keys",
    "store_home",
    "table_digest",
]

#: The tables a bundle leaves behind, and why. Every other table of the schema travels.
EXCLUDED: dict[str, str] = {
    "_migrations": "bookkeeping: the manifest lists the migrations instead, and the "
    "importing store records its own",
    "store_state": "the decision generation, a cache key of the store itself: an import "
    "starts a new one",
    "proposal_locks": "rows proposals lock on PostgreSQL; they hold no data",
    "_project": "a PostgreSQL schema's record of the project it holds; each store keeps its own",
}
_BATCH = 10_000


@dataclass(frozen=True)
class Column:
    """One column of a bundled table: its name and DuckDB type."""

    name: str
    type: str


def quoted(name: str) -> str:
    """A name from a catalog, quoted for SQL text."""
    return '"' + name.replace('"', '""') + '"'


def schema_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[Column]]:
    """Each base table of ``con``'s own database (a migrated DuckDB) but ``EXCLUDED``,
    with its columns and types in column order, tables by name."""
    found = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE NOT internal AND database_name = current_database() AND schema_name = 'main' "
        "AND table_name IN (SELECT table_name FROM duckdb_tables() "
        "WHERE database_name = current_database() AND schema_name = 'main') "
        "ORDER BY table_name, column_index"
    ).fetchall()
    tables: dict[str, list[Column]] = {}
    for table, column, data_type in found:
        if table not in EXCLUDED:
            tables.setdefault(table, []).append(Column(column, data_type))
    return tables


def schema_keys(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Each table's primary key columns (none listed for a table without one)."""
    found = con.execute(
        "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
        "WHERE constraint_type = 'PRIMARY KEY' AND database_name = current_database()"
    ).fetchall()
    return {table: list(columns) for table, columns in found}


@functools.cache
def current_schema() -> tuple[dict[str, list[Column]], dict[str, list[str]], tuple[str, ...]]:
    """The schema this npc_nb builds: columns, primary keys and migration names."""
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        names = apply_migrations(con)
        return schema_columns(con), schema_keys(con), tuple(names)
    finally:
        con.close()


def store_home(con: duckdb.DuckDBPyConnection) -> tuple[str, str]:
    """The catalog and schema holding the store's tables on an analysis connection (a
    DuckDB file's own database, or the attached PostgreSQL schema)."""
    found = con.execute(
        "SELECT table_catalog, table_schema FROM information_schema.tables "
        "WHERE table_name = 'memories' AND table_type = 'BASE TABLE'"
    ).fetchall()
    if len(found) != 1:
        raise StoreError("Cannot find this project's tables to export; is the store open?")
    return str(found[0][0]), str(found[0][1])


# -- the canonical checksum ------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A value JSON has no type for, as the text that stands for it."""
    if isinstance(value, dt.datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    raise TypeError(f"no canonical form for a value of type {type(value).__name__}")


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=True, default=_plain
)


def canonical_line(row: Sequence[Any]) -> bytes:
    """One row as its canonical line: a compact JSON array, UTF-8 (docs/bundle.md)."""
    return _ENCODER.encode(list(row)).encode("utf-8")


def digest_rows(rows: Iterable[Sequence[Any]]) -> tuple[int, str]:
    """How many rows, and their checksum (see the module docstring)."""
    digests = [hashlib.sha256(canonical_line(row)).digest() for row in rows]
    digests.sort()
    whole = hashlib.sha256()
    for digest in digests:
        whole.update(digest)
    return len(digests), whole.hexdigest()


def table_digest(con: duckdb.DuckDBPyConnection, sql: str) -> tuple[int, str]:
    """The row count and checksum of a query's rows, read in batches."""
    cursor = con.execute(sql)

    def batches() -> Iterable[Sequence[Any]]:
        while batch := cursor.fetchmany(_BATCH):
            yield from batch

    return digest_rows(batches())
