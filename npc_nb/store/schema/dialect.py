"""The one dialect layer: the declared schema rendered as DuckDB's or PostgreSQL's DDL.

``TABLES``, ``SEQUENCES`` and ``INDEXES`` are the declaration (``tables``,
``lab_tables``, ``audit_tables``); ``schema_ddl(DUCKDB)`` and ``schema_ddl(POSTGRES)``
are the statements that build it, in an order that needs nothing built later. The two
dialects differ only where the engines do: a type's spelling (``DOUBLE PRECISION``, ``BYTEA``), a
default only PostgreSQL has (the connected role), the indexes DuckDB leaves out, and
the CHECK names PostgreSQL keeps (each named as PostgreSQL names a column's own CHECK,
so a later step can drop one by name). A CHECK is always rendered from its ``OneOf``
or ``Check``: no CHECK is written twice.

The views are DuckDB's SQL (``view_sql``), run on DuckDB only; PostgreSQL's own
additions (triggers, row-level security, functions) are ``pg_extras``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .audit_tables import AUDIT_TABLES
from .lab_tables import LAB_TABLES
from .model import Column, Index, Table
from .tables import CORE_TABLES, INDEXES, SEQUENCES
from .view_sql import VIEWS

__all__ = [
    "DUCKDB",
    "POSTGRES",
    "TABLES",
    "Dialect",
    "add_column",
    "create_index",
    "create_table",
    "schema_ddl",
    "table",
]

#: Every table of the schema, in the order the documentation lists them.
TABLES: tuple[Table, ...] = (*CORE_TABLES, *LAB_TABLES, *AUDIT_TABLES)

#: Rows a new store starts with (``store_state``'s decision generation).
SEED_ROWS = ("INSERT INTO store_state VALUES ('decision_generation', 0)",)


@dataclass(frozen=True)
class Dialect:
    """How one engine spells the declaration."""

    name: str
    types: dict[str, str]

    def type_of(self, column: Column) -> str:
        return self.types.get(column.type, column.type)

    def default_of(self, column: Column) -> str | None:
        if self.name == "postgres" and column.pg_default is not None:
            return column.pg_default
        return column.default


DUCKDB = Dialect("duckdb", {})
POSTGRES = Dialect("postgres", {"DOUBLE": "DOUBLE PRECISION", "BLOB": "BYTEA"})


def table(name: str) -> Table:
    """The declared table ``name`` (a KeyError for one the schema does not have)."""
    found = {t.name: t for t in TABLES}
    return found[name]


def _column_sql(column: Column, dialect: Dialect) -> str:
    parts = [column.name, dialect.type_of(column)]
    if column.not_null:
        parts.append("NOT NULL")
    if (default := dialect.default_of(column)) is not None:
        parts.append(f"DEFAULT {default}")
    return " ".join(parts)


def create_table(declared: Table, dialect: Dialect) -> str:
    """``CREATE TABLE`` for one declared table."""
    lines = [_column_sql(column, dialect) for column in declared.columns]
    if declared.primary_key:
        lines.append(f"PRIMARY KEY ({', '.join(declared.primary_key)})")
    lines += [f"UNIQUE ({', '.join(columns)})" for columns in declared.unique]
    lines += [
        f"CONSTRAINT {declared.check_name(check)} CHECK ({check.sql()})"
        for check in declared.checks
    ]
    body = ",\n    ".join(lines)
    return f"CREATE TABLE {declared.name} (\n    {body}\n)"


def add_column(table_name: str, column_name: str, dialect: Dialect) -> str:
    """``ALTER TABLE ... ADD COLUMN`` for a declared column: what a step of the ladder
    that adds one runs, so the column is still written once (its declaration)."""
    column = table(table_name).column(column_name)
    return f"ALTER TABLE {table_name} ADD COLUMN {_column_sql(column, dialect)}"


def create_index(index: Index) -> str:
    unique = "UNIQUE " if index.unique else ""
    return f"CREATE {unique}INDEX {index.name} ON {index.table} ({', '.join(index.columns)})"


def schema_ddl(dialect: Dialect) -> list[str]:
    """Every statement that builds the declared schema on ``dialect``'s engine: the
    sequences, the tables, their indexes, the seed rows and (DuckDB) the views."""
    statements = [f"CREATE SEQUENCE {sequence.name} START 1" for sequence in SEQUENCES]
    statements += [create_table(declared, dialect) for declared in TABLES]
    statements += [create_index(i) for i in INDEXES if dialect.name in i.backends]
    statements += list(SEED_ROWS)
    if dialect is DUCKDB:
        statements += list(VIEWS)
    return statements
