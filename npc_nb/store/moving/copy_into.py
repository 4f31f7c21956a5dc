"""Writing the target of a move (``move``): the source attached read-only through
DuckDB, the target written in one transaction.

A DuckDB file is filled by ``INSERT ... SELECT`` from the attached source, a PostgreSQL
schema by ``COPY`` on a psycopg connection, the source read in the same DuckDB
transaction (one snapshot, on PostgreSQL too). The tables are read from the target's
schema and must match the source's, column for column. ``_migrations`` and
``store_state`` are filled by the target's own migrations, so their rows are replaced;
a schema's record of its project (``_project``) and the rows proposals lock
(``proposal_locks``) are neither compared nor copied; any other row in the target is
refused over unless ``force``. The sequences that number
events and memories (``contract``'s list, checked against the schema's) end after the
copied values.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..._foundations.locations import ensure_store_dir, make_private, store_path
from ..._foundations.redact import url_secrets
from ..._foundations.store_url import redact, redact_text
from ...errors import StoreError
from ..contract import _SEQUENCED as SEQUENCED
from ..embedded.faults import STORAGE_ERRORS, is_storage_fault, storage_fault
from ..schema.migrations import apply_migrations

__all__ = [
    "NOT_COPIED",
    "REPLACED",
    "StoreEnd",
    "catalog_tables",
    "duckdb_file",
    "first_line",
    "into_file",
    "into_postgres",
    "postgres_connection",
]

#: Tables the migrations themselves fill: the copy replaces their rows.
REPLACED = ("_migrations", "store_state")
#: Left alone at both ends: a PostgreSQL schema's record of its project (``pg_project``),
#: which each end keeps, and the rows proposals lock, which hold no data (re-made on use).
NOT_COPIED = ("_project", "proposal_locks")
_BATCH = 5000


@dataclasses.dataclass(frozen=True)
class StoreEnd:
    """One end of a move: an embedded store folder, or a schema on a PostgreSQL server."""

    folder: Path | None = None
    url: str | None = None
    schema: str | None = None
    project: str | None = None  # the name the schema records (``pg_project``)

    def __str__(self) -> str:
        if self.folder is not None:
            return str(store_path(self.folder))
        return f"{redact(self.url or '')} (schema {self.schema})"


def _attach_source(con: duckdb.DuckDBPyConnection, end: StoreEnd) -> None:
    """``end`` attached read-only to ``con`` as ``src``."""
    if end.folder is not None:
        literal = str(store_path(end.folder)).replace("'", "''")
        con.execute(f"ATTACH '{literal}' AS src (READ_ONLY)")
        return
    from ..server.attach import _extension_file

    con.execute(f"LOAD '{_extension_file()}'")
    literal = (end.url or "").replace("'", "''")
    con.execute(f"ATTACH '{literal}' AS src (TYPE postgres, READ_ONLY, SCHEMA '{end.schema}')")


def _source_schema(end: StoreEnd) -> str:
    """The schema holding the tables of the attached source ``src``."""
    return "main" if end.folder is not None else str(end.schema)


def catalog_tables(con: duckdb.DuckDBPyConnection, catalog: str, schema: str) -> dict[str, list]:
    """Each base table of ``catalog.schema`` and its columns, in column order (but
    ``NOT_COPIED``): read from the catalog, so a table a later migration adds is found
    without anyone listing it (a move copies it, a bundle carries it)."""
    found = con.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_catalog = c.table_catalog "
        "AND t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.table_catalog = ? AND c.table_schema = ? AND t.table_type = 'BASE TABLE' "
        "ORDER BY c.table_name, c.ordinal_position",
        [catalog, schema],
    ).fetchall()
    return _grouped(found)


def _grouped(found: list[tuple]) -> dict[str, list]:
    tables: dict[str, list] = {}
    for table, column in found:
        if table not in NOT_COPIED:
            tables.setdefault(table, []).append(column)
    return tables


def _check_alike(source: dict[str, list], target: dict[str, list], end: StoreEnd) -> None:
    if source != target:
        differ = sorted(
            name for name in set(source) | set(target) if source.get(name) != target.get(name)
        )
        raise StoreError(
            f"The source {end} and the target differ in tables or columns "
            f"({', '.join(differ)}): both must be at the same npc_nb schema. Nothing was copied."
        )


# -- into an embedded file -----------------------------------------------------------------


def into_file(
    origin: StoreEnd, folder: Path, force: bool
) -> tuple[list[str], dict[str, int], bool]:
    """Copy ``origin`` into the store file in ``folder`` (created if need be); the
    migrations the target needed, rows per table, and whether ``force`` cleared rows."""
    ensure_store_dir(folder)
    target = store_path(folder)
    with duckdb_file(target) as con:
        migrated = apply_migrations(con)
        try:
            _attach_source(con, origin)
        except duckdb.Error as exc:
            raise _copy_fault(exc, origin, target) or _unreadable(origin, exc) from None
        try:
            counts, cleared = _copy_into_file(con, origin, target, force)
        except STORAGE_ERRORS as exc:
            if (fault := _copy_fault(exc, origin, target)) is None:
                raise
            raise fault from None
        finally:
            with contextlib.suppress(duckdb.Error):
                con.execute("DETACH src")
    return migrated, counts, cleared


def _copy_into_file(
    con: duckdb.DuckDBPyConnection, origin: StoreEnd, target: Path, force: bool
) -> tuple[dict[str, int], bool]:
    """The attached source's rows into the target's tables, in one transaction."""
    target_tables = catalog_tables(con, _current_catalog(con), "main")
    source_tables = catalog_tables(con, "src", _source_schema(origin))
    _check_alike(source_tables, target_tables, origin)
    con.execute("BEGIN TRANSACTION")
    try:
        cleared = _clear_or_refuse(con, target_tables, force, target)
        counts = {}
        for table, columns in target_tables.items():
            listed = ", ".join(_quoted(c) for c in columns)
            con.execute(
                f"INSERT INTO {_quoted(table)} ({listed}) SELECT {listed} "
                f"FROM src.{_source_schema(origin)}.{_quoted(table)}"
            )
            counts[table] = _count(con, _quoted(table))
        _advance_file_sequences(con)
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):  # the error that got here tells more
            con.execute("ROLLBACK")
        raise
    return counts, cleared


def _copy_fault(exc: Exception, origin: StoreEnd, target: Path | None) -> StoreError | None:
    """A fault of a file the move reads (``embedded.faults``), blamed on the file it names, else
    on the source: the copy reads the source's pages, and of the target's only those a
    migration just read; None if ``exc`` is not a file's fault."""
    if target is not None and f'"{target}' in str(exc):
        return _not_copied(storage_fault(target, exc, doing="write"))
    if origin.folder is None or not is_storage_fault(exc, store_path(origin.folder)):
        return None
    return _not_copied(storage_fault(store_path(origin.folder), exc, doing="read"))


def _not_copied(fault: StoreError) -> StoreError:
    return StoreError(f"{fault} Nothing was copied.")


def _unreadable(origin: StoreEnd, exc: Exception) -> StoreError:
    return StoreError(f"Cannot read the source {origin}: {first_line(exc, origin)}")


def _current_catalog(con: duckdb.DuckDBPyConnection) -> str:
    return str(con.execute("SELECT current_database()").fetchone()[0])  # type: ignore[index]


def _clear_or_refuse(con: Any, tables: dict[str, list], force: bool, where: object) -> bool:
    """Empty the target's tables; True if it held rows, which only ``force`` allows."""
    held = _refuse_unless_empty(con, tables, force, where)
    for table in tables:
        con.execute(f"DELETE FROM {_quoted(table)}")
    return held


def _refuse_unless_empty(con: Any, tables: dict[str, list], force: bool, where: object) -> bool:
    """A StoreError saying what the target holds, unless it is empty (but for the rows
    in ``REPLACED``) or ``force``; whether it held anything."""
    held = {table: _count(con, _quoted(table)) for table in tables if table not in REPLACED}
    held = {table: count for table, count in held.items() if count}
    if held and not force:
        listed = ", ".join(f"{count} {table}" for table, count in sorted(held.items()))
        raise StoreError(
            f"The target {where} is not empty ({listed}). Nothing was copied. Move into an "
            "empty store, or pass --force (force=True) to replace everything in it."
        )
    return bool(held)


def _advance_file_sequences(con: duckdb.DuckDBPyConnection) -> None:
    """DuckDB has no setval: each numbering sequence is recreated to start after the
    largest copied value."""
    _check_sequences(
        {row[0] for row in con.execute("SELECT sequence_name FROM duckdb_sequences() "
                                        "WHERE database_name = current_database()").fetchall()}
    )  # fmt: skip
    for table, (column, sequence) in SEQUENCED.items():
        last = con.execute(f"SELECT coalesce(max({column}), 0) FROM {table}").fetchone()
        con.execute(f"CREATE OR REPLACE SEQUENCE {sequence} START {int(last[0]) + 1}")  # type: ignore[index]


def _check_sequences(found: set[str]) -> None:
    known = {sequence for _, sequence in SEQUENCED.values()}
    if found != known:
        raise StoreError(
            f"The schema's sequences ({', '.join(sorted(found))}) are not the ones a move "
            f"advances ({', '.join(sorted(known))}): npc_nb's SEQUENCED needs updating."
        )


# -- into PostgreSQL --------------------------------------------------------------------


def into_postgres(
    origin: StoreEnd, end: StoreEnd, force: bool
) -> tuple[list[str], dict[str, int], bool]:
    """Copy ``origin`` into ``end``'s schema in one PostgreSQL transaction (the schema
    created and migrated inside it); as ``into_file``."""
    from ..schema.pg_migrations import apply_pg_migrations

    schema = end.schema or ""
    reader = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        try:
            _attach_source(reader, origin)
        except duckdb.Error as exc:
            raise _copy_fault(exc, origin, None) or _unreadable(origin, exc) from None
        source_tables = catalog_tables(reader, "src", _source_schema(origin))
        reader.execute("BEGIN TRANSACTION")  # one snapshot of the source
        with postgres_connection(end) as con, con.transaction():
            migrated = apply_pg_migrations(con, schema, project=end.project)
            con.execute(f"SET LOCAL search_path TO {schema}")
            target_tables = _pg_tables(con, schema)
            _check_alike(source_tables, target_tables, origin)
            cleared = _clear_postgres(con, target_tables, force, end)
            try:
                counts = {
                    table: _copy_rows(reader, con, f"src.{_source_schema(origin)}", table, cols)
                    for table, cols in target_tables.items()
                }
            except STORAGE_ERRORS as exc:  # the reader reads the source alone
                if (fault := _copy_fault(exc, origin, None)) is None:
                    raise
                raise fault from None
            _advance_pg_sequences(con, schema)
        reader.execute("COMMIT")
    finally:
        reader.close()
    return migrated, counts, cleared


def _pg_tables(con: Any, schema: str) -> dict[str, list]:
    found = con.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
        "AND t.table_name = c.table_name "
        "WHERE c.table_schema = %s AND t.table_type = 'BASE TABLE' "
        "ORDER BY c.table_name, c.ordinal_position",
        [schema],
    ).fetchall()
    return _grouped(found)


def _clear_postgres(con: Any, tables: dict[str, list], force: bool, end: StoreEnd) -> bool:
    """As ``_clear_or_refuse``; the audit log's append-only triggers are set aside for
    the clearing alone (only the tables' owner may), inside the same transaction."""
    held = _refuse_unless_empty(con, tables, force, end)
    names = ", ".join(_quoted(table) for table in tables)
    for table in tables:
        con.execute(f"ALTER TABLE {_quoted(table)} DISABLE TRIGGER USER")
    con.execute(f"TRUNCATE {names}")
    for table in tables:
        con.execute(f"ALTER TABLE {_quoted(table)} ENABLE TRIGGER USER")
    return bool(held)


def _copy_rows(
    reader: duckdb.DuckDBPyConnection, con: Any, source: str, table: str, columns: list
) -> int:
    listed = ", ".join(_quoted(c) for c in columns)
    result = reader.execute(f"SELECT {listed} FROM {source}.{_quoted(table)}")
    copied = 0
    with (
        con.cursor() as cursor,
        cursor.copy(f"COPY {_quoted(table)} ({listed}) FROM STDIN") as copy,
    ):
        while batch := result.fetchmany(_BATCH):
            for row in batch:
                copy.write_row(row)
            copied += len(batch)
    return copied


def _advance_pg_sequences(con: Any, schema: str) -> None:
    _check_sequences(
        {row[0] for row in con.execute("SELECT sequence_name FROM information_schema.sequences "
                                        "WHERE sequence_schema = %s", [schema]).fetchall()}
    )  # fmt: skip
    for table, (column, sequence) in SEQUENCED.items():
        con.execute(
            f"SELECT setval('{sequence}', coalesce(max({column}), 0) + 1, false) FROM {table}"
        )


# -- connections ---------------------------------------------------------------------------


@contextmanager
def duckdb_file(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the store file ``path``, private like every store file: DuckDB
    creates a file (and its write-ahead log) with the umask's mode, so both are made
    0600 once open and again once closed. Its folder is 0700 before the file can exist
    (``ensure_store_dir`` comes first), so nobody else can reach it in between."""
    try:
        con = duckdb.connect(str(path), config={"autoinstall_known_extensions": False})
    except duckdb.Error as exc:
        if not any(sign in str(exc) for sign in ("Could not set lock", "Conflicting lock")):
            raise _not_copied(storage_fault(path, exc)) from None
        raise StoreError(
            f"Cannot open {path}: {first_line(exc)}. Close the notebooks and terminals "
            "using this project, then retry."
        ) from None
    try:
        make_private(path.parent)
        con.execute("SET TimeZone = 'UTC'")
        yield con
    except duckdb.Error as exc:
        if is_storage_fault(exc, path):
            raise _not_copied(storage_fault(path, exc, doing="read")) from None
        raise StoreError(
            f"The move failed on {path}: {first_line(exc)}. Nothing was copied."
        ) from None
    finally:
        con.close()
        make_private(path.parent)  # a write-ahead log left behind


@contextmanager
def postgres_connection(end: StoreEnd) -> Iterator[Any]:
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "Moving a store to or from PostgreSQL needs psycopg 3: pip install 'npc_nb[postgres]'."
        ) from None
    try:
        con = psycopg.connect(end.url or "", autocommit=True, options="-c TimeZone=UTC")
    except psycopg.Error as exc:
        raise StoreError(f"Cannot connect to {end}: {first_line(exc, end)}") from None
    try:
        yield con
    except (psycopg.Error, duckdb.Error) as exc:
        raise StoreError(
            f"The move failed on {end}: {first_line(exc, end)}. Nothing was copied."
        ) from None
    finally:
        con.close()


def _count(con: Any, table: str) -> int:
    return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _quoted(name: str) -> str:
    """A name from the schema's own catalog, quoted for SQL text."""
    return '"' + name.replace('"', '""') + '"'


def first_line(exc: BaseException, end: StoreEnd | None = None) -> str:
    """The engine's message, without the secrets of ``end``'s URL."""
    text = str(exc).strip()
    known = url_secrets(end.url) if end is not None and end.url else []
    return redact_text(text.splitlines()[0] if text else type(exc).__name__, *known)
