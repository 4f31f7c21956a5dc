"""What a store's schema is, read from the database's own catalog, as plain data.

The squashed baseline (``0001``) must build exactly the schema the old ladder
(m001..m027) left. ``tests/data/schema-m027-duckdb.json`` and
``tests/data/schema-m027-postgres.json`` are these dumps of stores made by that ladder;
the schema tests compare a fresh store's dump with them. Every list is sorted and a
PostgreSQL schema's name is written ``{schema}``, so two dumps of one schema are equal.
"""

from __future__ import annotations

from typing import Any

#: The bookkeeping tables (which migrations ran): not part of the compared schema.
BOOKKEEPING = ("_migrations", "_schema_versions")


def duckdb_catalog(con: Any) -> dict[str, list[list[Any]]]:
    """The tables, columns, constraints, indexes, views and sequences of a DuckDB store."""
    return {
        "columns": _rows(con, _DUCK_COLUMNS),
        "constraints": _rows(con, _DUCK_CONSTRAINTS),
        "indexes": _rows(con, _DUCK_INDEXES),
        "views": _rows(con, _DUCK_VIEWS),
        "sequences": _rows(con, _DUCK_SEQUENCES),
    }


def postgres_catalog(con: Any, schema: str) -> dict[str, list[list[Any]]]:
    """The same for one PostgreSQL schema (psycopg connection), plus what only
    PostgreSQL has: triggers, functions, row-level security and its policies."""
    dump = {
        key: _rows(con, query.replace("%(schema)s", "%s"), [schema] * query.count("%(schema)s"))
        for key, query in _PG_QUERIES.items()
    }
    return {
        key: sorted(
            [[_unschema(v, schema) for v in row] for row in rows], key=lambda r: [str(v) for v in r]
        )
        for key, rows in dump.items()
    }


def _rows(con: Any, query: str, params: list[Any] | None = None) -> list[list[Any]]:
    rows = con.execute(query, params or []).fetchall()
    return sorted(([_plain(v) for v in row] for row in rows), key=lambda r: [str(v) for v in r])


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _unschema(value: Any, schema: str) -> Any:
    if isinstance(value, str):
        return value.replace(schema, "{schema}")
    if isinstance(value, list):
        return [_unschema(v, schema) for v in value]
    return value


_NOT_BOOKKEEPING = "NOT IN ('_migrations', '_schema_versions')"

_DUCK_COLUMNS = f"""SELECT table_name, ordinal_position, column_name, data_type, is_nullable,
    column_default FROM information_schema.columns
    WHERE table_schema = 'main' AND table_name {_NOT_BOOKKEEPING}"""
_DUCK_CONSTRAINTS = f"""SELECT table_name, constraint_type, constraint_text,
    constraint_column_names FROM duckdb_constraints()
    WHERE schema_name = 'main' AND table_name {_NOT_BOOKKEEPING}"""
_DUCK_INDEXES = """SELECT index_name, table_name, is_unique, sql FROM duckdb_indexes()
    WHERE schema_name = 'main'"""
_DUCK_VIEWS = """SELECT view_name, sql FROM duckdb_views()
    WHERE NOT internal AND schema_name = 'main'"""
_DUCK_SEQUENCES = """SELECT sequence_name, start_value, increment_by FROM duckdb_sequences()
    WHERE schema_name = 'main'"""

_PG_QUERIES = {
    "columns": f"""SELECT table_name, ordinal_position, column_name, data_type, udt_name,
        is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = %(schema)s AND table_name {_NOT_BOOKKEEPING}""",
    "constraints": f"""SELECT c.conrelid::regclass::text, c.conname, c.contype,
        pg_get_constraintdef(c.oid) FROM pg_constraint c
        JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = %(schema)s AND c.conrelid::regclass::text {_NOT_BOOKKEEPING}
        AND c.conrelid <> 0""",
    "indexes": f"""SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = %(schema)s AND tablename {_NOT_BOOKKEEPING}""",
    "sequences": """SELECT sequence_name, data_type, start_value, increment
        FROM information_schema.sequences WHERE sequence_schema = %(schema)s""",
    "triggers": """SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t
        JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = %(schema)s AND NOT t.tgisinternal""",
    "functions": """SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p
        JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = %(schema)s""",
    "row_security": """SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = %(schema)s AND c.relkind = 'r' AND c.relrowsecurity""",
    "policies": """SELECT tablename, policyname, permissive, roles::text, cmd, qual, with_check
        FROM pg_policies WHERE schemaname = %(schema)s""",
}
