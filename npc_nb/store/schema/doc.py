"""The store schema as a Markdown page, generated from the declaration itself.

``python -m npc_nb.store.schema.doc > docs/schema.md`` renders the declared tables
(``dialect.TABLES``: every column with its type on each backend, NOT NULL, key and
default; the CHECKs, each closed set named by its ``npc_nb.vocabulary`` tuple; the
indexes and the backends they exist on), the views (their columns read from a new
in-memory store, described from ``VIEW_COLUMNS``), the sequences and the ladder's steps.
The order is stable (tables and views by name, columns by position), so
``tests/test_docs.py`` regenerates the page and compares it with the file: the page
cannot drift from the schema. ``fresh_schema`` is a new store's schema, as
``npc_nb.open()`` builds it.
"""

from __future__ import annotations

import html

import duckdb

import npc_nb.vocabulary as vocabulary

from .dialect import DUCKDB, POSTGRES, TABLES
from .migrations import MIGRATIONS, apply_migrations
from .model import Check, OneOf, Table
from .tables import INDEXES, SEQUENCES
from .views import VIEW_COLUMNS

__all__ = ["COMMAND", "fresh_schema", "render_schema"]

#: The command that writes the page; the page and the test failure message quote it.
COMMAND = "python -m npc_nb.store.schema.doc > docs/schema.md"


def fresh_schema() -> duckdb.DuckDBPyConnection:
    """A new in-memory database with the schema a new store gets."""
    con = duckdb.connect(":memory:")
    apply_migrations(con)
    return con


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def _prose(text: str) -> str:
    """Text for a table cell: no pipes, and no ``<name>`` a renderer would take as a tag."""
    return html.escape(text, quote=False).replace("|", "\\|")


def _vocabulary_name(values: tuple[str, ...]) -> str:
    """The name of the vocabulary tuple a closed set is (``vocabulary.STATUSES``)."""
    names = [name for name in vocabulary.__all__ if getattr(vocabulary, name) is values]
    return names[0] if names else "?"


def _check_line(check: OneOf | Check) -> str:
    if isinstance(check, OneOf):
        return f"- {_code(check.sql())} (`vocabulary.{_vocabulary_name(check.values)}`)"
    return f"- {_code(check.sql())}"


def _column_rows(table: Table) -> list[str]:
    rows = [
        "| Column | Type | PostgreSQL | NOT NULL | Key | Default |",
        "|---|---|---|---|---|---|",
    ]
    for column in table.columns:
        duck, pg = DUCKDB.type_of(column), POSTGRES.type_of(column)
        defaults = {DUCKDB.default_of(column), POSTGRES.default_of(column)} - {None}
        default = " / ".join(_code(d) for d in sorted(str(d) for d in defaults))
        not_null = "yes" if column.not_null or column.name in table.primary_key else ""
        key = "yes" if column.name in table.primary_key else ""
        rows.append(
            f"| {_code(column.name)} | {_code(duck)} | {_code(pg) if pg != duck else ''} "
            f"| {not_null} | {key} | {default} |"
        )
    return rows


def render_table(table: Table) -> list[str]:
    """One table: what it holds, its columns, keys, CHECK constraints and indexes."""
    lines = [f"### {_code(table.name)}", "", _prose(table.doc), "", *_column_rows(table), ""]
    if len(table.primary_key) > 1:
        lines += [f"Primary key: ({', '.join(_code(c) for c in table.primary_key)}).", ""]
    for unique in table.unique:
        lines += [f"Unique: ({', '.join(_code(c) for c in unique)}).", ""]
    if table.checks:
        lines += ["CHECK constraints:", "", *(_check_line(c) for c in table.checks), ""]
    indexes = [i for i in INDEXES if i.table == table.name]
    if indexes:
        lines += ["Indexes:", ""]
        for index in indexes:
            on = "both backends" if len(index.backends) == 2 else f"{index.backends[0]} only"
            kind = "unique, " if index.unique else ""
            columns = _code(", ".join(index.columns))
            lines.append(f"- {_code(index.name)} on {columns} ({kind}{on})")
        lines.append("")
    return lines


def _views(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(name, definition, [(column, type)]) of every view, by name."""
    views = con.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
        "AND schema_name = 'main' ORDER BY view_name"
    ).fetchall()
    return [
        (name, sql, con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
            "ORDER BY column_index", [name]).fetchall())
        for name, sql in views
    ]  # fmt: skip


def render_view(name: str, definition: str, columns: list[tuple[str, str]]) -> list[str]:
    """One view: its columns, described from ``VIEW_COLUMNS`` when it is documented."""
    described = VIEW_COLUMNS.get(name)
    lines = [f"### {_code(name)}", ""]
    if described is None:
        lines += ["Not one of the documented analytical views "
                  "(`npc_nb.store.schema.views.VIEW_COLUMNS`).", "",
                  "| Column | Type |", "|---|---|"]  # fmt: skip
        lines += [f"| {_code(c)} | {_code(t)} |" for c, t in columns]
    else:
        lines += ["| Column | Type | Meaning |", "|---|---|---|"]
        lines += [
            f"| {_code(c)} | {_code(t)} | {_prose(described.get(c, '(undocumented)'))} |"
            for c, t in columns
        ]
    lines += ["", "<details><summary>Definition</summary>", "", "```sql"]
    return [*lines, definition, "```", "", "</details>", ""]


def render_ladder() -> list[str]:
    """The ladder's steps in the order they apply, each with what it does."""
    lines = ["| Step | What it does |", "|---|---|"]
    return [*lines, *(f"| `{s.name}` | {_prose(s.doc)} |" for s in MIGRATIONS), ""]


def _header() -> list[str]:
    return [
        "# The store schema",
        "",
        f"This page is generated by `{COMMAND}`",
        "from the schema's declaration in `npc_nb/store/schema/` (`tables.py`, `lab_tables.py`).",
        "Do not edit it by hand: `tests/test_docs.py` fails when it is out of date. The",
        "project store, the user store and a project on PostgreSQL have this schema; the",
        "type is DuckDB's, with PostgreSQL's where it is spelled otherwise. What the",
        "columns mean is explained in [the store](store.md) and, for the analytical",
        "views, in [analytics](analytics.md#the-views).",
        "",
    ]


def render_schema() -> str:
    """The whole page: tables, views, sequences and the ladder, in a stable order."""
    con = fresh_schema()
    try:
        views = _views(con)
    finally:
        con.close()
    lines = [*_header(), "## Tables", ""]
    for table in sorted(TABLES, key=lambda t: t.name):
        lines += render_table(table)
    lines += ["## Views", ""]
    for view in views:
        lines += render_view(*view)
    lines += ["## Sequences", ""]
    lines += [f"- {_code(s.name)}: {_prose(s.doc)}" for s in SEQUENCES]
    lines += ["", "## The ladder", "",
              "A new store is built from the declaration and records every step; an existing",
              "store gets the steps it lacks, in this order, each in its own transaction",
              "(`npc_nb/store/schema/migrations.py` says how to add one).", ""]  # fmt: skip
    lines += render_ladder()
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render_schema(), end="")
