"""What a declaration of the schema is made of: tables, columns, CHECKs, indexes.

The schema is data (``tables``, ``lab_tables``), declared once for both backends and
rendered to each one's DDL by ``dialect``. The key choice: every closed set a column
holds is a ``OneOf`` naming a tuple of ``npc_nb.vocabulary``, so Python and both
databases enforce the very same set, and a CHECK is never written as SQL by hand. A
``Check`` (an expression) is kept for the few rules that are not a closed set
(``scope <> 'npc' OR npc IS NOT NULL``); it is SQL both engines take as it is.

Types are the logical ones DuckDB names (``VARCHAR``, ``BIGINT``, ``DOUBLE``,
``VARCHAR[]``, ...); the dialect says how PostgreSQL spells each. Nothing here holds a
user value: every name and literal comes from this package.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BOTH", "Check", "Column", "Index", "OneOf", "Sequence", "Table"]

#: The backends an object exists on (``Index.backends``).
BOTH = ("duckdb", "postgres")


@dataclass(frozen=True)
class OneOf:
    """A CHECK that ``column`` holds one of ``values`` (a vocabulary tuple)."""

    column: str
    values: tuple[str, ...]

    def sql(self) -> str:
        listed = ", ".join(f"'{value}'" for value in self.values)
        return f"{self.column} IN ({listed})"


@dataclass(frozen=True)
class Check:
    """A CHECK that is not a closed set: ``expression`` (SQL both engines take), and
    the name PostgreSQL gives it (its constraints are named; DuckDB's are not)."""

    expression: str
    name: str

    def sql(self) -> str:
        return self.expression


@dataclass(frozen=True)
class Column:
    """One column: its logical type, NOT NULL, its default (SQL both engines take) and
    a default only PostgreSQL has (``SESSION_USER``: the connected role)."""

    name: str
    type: str
    not_null: bool = False
    default: str | None = None
    pg_default: str | None = None
    doc: str = ""


@dataclass(frozen=True)
class Table:
    """One table: its columns in order, its keys and its CHECKs (closed sets first)."""

    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    checks: tuple[OneOf | Check, ...] = ()
    doc: str = ""

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def check_name(self, check: OneOf | Check) -> str:
        """The constraint's name on PostgreSQL (as it names a column's own CHECK)."""
        if isinstance(check, Check):
            return check.name
        return f"{self.name}_{check.column}_check"


@dataclass(frozen=True)
class Index:
    """An index on ``table`` (``columns``), on the backends it exists on."""

    name: str
    table: str
    columns: tuple[str, ...]
    unique: bool = False
    backends: tuple[str, ...] = BOTH


@dataclass(frozen=True)
class Sequence:
    """A sequence (both backends): numbers the audit log and the memories' inserts."""

    name: str
    doc: str = ""
