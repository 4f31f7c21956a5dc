"""Every table of a project's store into a folder of Parquet files, in one snapshot.

The tables are those of the store's catalog (``catalog_tables``, as a move finds them)
but ``tables.EXCLUDED``; each must have the columns this npc_nb's migrations give it
(a store is migrated when opened, so a difference means a damaged or foreign schema,
refused). Each is read in one read transaction (on PostgreSQL one snapshot through
the attached schema), its columns cast to the schema's DuckDB types in the schema's
order, written by DuckDB as ``<table>.parquet`` (the path a Python argument, never SQL
text) and checksummed (``tables.table_digest``) from the same snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ...errors import StoreError
from ..contract import Store
from ..moving.copy_into import catalog_tables
from .tables import EXCLUDED, Column, current_schema, quoted, store_home, table_digest

__all__ = ["Dumped", "TableDump", "dump_store"]


@dataclass(frozen=True)
class TableDump:
    """One table as written: its file, columns, row count and checksum."""

    name: str
    file: Path
    columns: tuple[Column, ...]
    rows: int
    sha256: str


@dataclass(frozen=True)
class Dumped:
    """What a dump wrote: every table, and the migrations the store had applied."""

    tables: tuple[TableDump, ...]
    migrations: tuple[str, ...]


def dump_store(store: Store, folder: Path) -> Dumped:
    """Write every bundled table of ``store`` into ``folder`` (which exists)."""
    columns, _, _ = current_schema()
    with store.analysis() as con:
        catalog, schema = store_home(con)
        _check_tables(catalog_tables(con, catalog, schema), columns, store)
        with _one_read(con, own=store.exists):
            migrations = [
                str(name)
                for (name,) in con.execute(
                    f"SELECT name FROM {quoted(catalog)}.{quoted(schema)}._migrations ORDER BY name"
                ).fetchall()
            ]
            dumped = [
                _dump_table(con, f"{quoted(catalog)}.{quoted(schema)}", name, cols, folder)
                for name, cols in columns.items()
            ]
    return Dumped(tuple(dumped), tuple(migrations))


@contextmanager
def _one_read(con: duckdb.DuckDBPyConnection, *, own: bool) -> Iterator[None]:
    """Every table read in one transaction: its own (``own``), or the one ``con`` is
    already in (a project with no store file yet reads the empty store's, rolled back
    after)."""
    if not own:
        yield
        return
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    finally:
        con.execute("COMMIT")


def _check_tables(found: dict[str, list], expected: dict[str, list[Column]], store: Store) -> None:
    """The store's tables and columns are the schema's (in any column order)."""
    found = {name: sorted(cols) for name, cols in found.items() if name not in EXCLUDED}
    wanted = {name: sorted(c.name for c in cols) for name, cols in expected.items()}
    if found != wanted:
        differ = sorted(n for n in set(found) | set(wanted) if found.get(n) != wanted.get(n))
        raise StoreError(
            f"The store {store.path} has tables or columns this npc_nb does not know "
            f"({', '.join(differ)}); it cannot be exported faithfully. Open it with the "
            "npc_nb that wrote it, or migrate it."
        )


def _dump_table(
    con: duckdb.DuckDBPyConnection, where: str, name: str, columns: list[Column], folder: Path
) -> TableDump:
    listed = ", ".join(f"CAST({quoted(c.name)} AS {c.type}) AS {quoted(c.name)}" for c in columns)
    sql = f"SELECT {listed} FROM {where}.{quoted(name)}"
    path = folder / f"{name}.parquet"
    relation = con.sql(sql)
    try:
        relation.to_parquet(str(path), compression="zstd")
    finally:
        del relation  # a live relation would keep the file lock
    rows, digest = table_digest(con, sql)
    return TableDump(name, path, tuple(columns), rows, digest)
