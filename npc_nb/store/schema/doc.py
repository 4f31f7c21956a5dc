"""The store schema as a Markdown page, generated from the migrations themselves.

``python -m npc_nb.store.schema.doc > docs/schema.md`` builds a fresh in-memory DuckDB,
applies every migration with ``apply_migrations`` (exactly what ``npc_nb.open()`` does
to a new store), reads the resulting catalogue and renders it: every table (columns,
types, NOT NULL, primary key, CHECK constraints, indexes), every view (its columns,
described from ``VIEW_COLUMNS`` where the view is one of the documented analytical
views), the sequences, and the migrations with the first sentence of each one's
docstring or leading comment. The order is stable (tables, views and migrations by
name, columns by position), so ``tests/test_docs.py`` can regenerate the page and
compare it with the file: the page cannot drift from the schema.

To learn which migration added what, the migrations are also replayed one by one on a
second in-memory database and the catalogue is compared after each step.
"""

from __future__ import annotations

import ast
import html
import inspect
import re
import textwrap
from dataclasses import dataclass, field

import duckdb

from .migrations import MIGRATIONS, Migration, apply_migrations
from .views import VIEW_COLUMNS

__all__ = ["COMMAND", "fresh_schema", "migration_summary", "render_schema"]

#: The command that writes the page; the page and the test failure message quote it.
COMMAND = "python -m npc_nb.store.schema.doc > docs/schema.md"


@dataclass(frozen=True)
class Column:
    """One column of a table or view, as the catalogue reports it."""

    name: str
    data_type: str
    not_null: bool


@dataclass
class Relation:
    """A table or a view: its columns and what constrains or indexes it."""

    name: str
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    indexes: list[tuple[str, str]] = field(default_factory=list)  # (name, expressions)
    definition: str = ""


@dataclass
class History:
    """Which migration created each object, and which ones redefined a view."""

    created: dict[str, str] = field(default_factory=dict)  # object key -> migration
    redefined: dict[str, list[str]] = field(default_factory=dict)  # view -> migrations


# -- building and reading the schema ---------------------------------------------------


def fresh_schema() -> duckdb.DuckDBPyConnection:
    """A new in-memory database with every migration applied, as a new store gets it."""
    con = duckdb.connect(":memory:")
    apply_migrations(con)
    return con


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return con.execute(sql).fetchall()


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[Column]]:
    found: dict[str, list[Column]] = {}
    for table, name, data_type, nullable in _rows(
        con,
        "SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns() "
        "WHERE NOT internal AND schema_name = 'main' ORDER BY table_name, column_index",
    ):
        found.setdefault(table, []).append(Column(name, data_type, not nullable))
    return found


def read_tables(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    """Every table, by name, with its columns, primary key, CHECKs and indexes."""
    columns = _columns(con)
    tables = {
        name: Relation(name, columns.get(name, []))
        for (name,) in _rows(
            con, "SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY table_name"
        )
    }
    for table, kind, expression, names in _rows(
        con,
        "SELECT table_name, constraint_type, expression, constraint_column_names "
        "FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'CHECK') "
        "ORDER BY table_name, constraint_index",
    ):
        if kind == "PRIMARY KEY":
            tables[table].primary_key = list(names)
        else:
            tables[table].checks.append(expression)
    for name, table, expressions in _rows(
        con,
        "SELECT index_name, table_name, expressions FROM duckdb_indexes() "
        "ORDER BY table_name, index_name",
    ):
        tables[table].indexes.append((name, expressions))
    return list(tables.values())


def read_views(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    """Every view of the schema (not DuckDB's own), by name, with its columns."""
    columns = _columns(con)
    return [
        Relation(name, columns.get(name, []), definition=sql)
        for name, sql in _rows(
            con,
            "SELECT view_name, sql FROM duckdb_views() "
            "WHERE NOT internal AND schema_name = 'main' ORDER BY view_name",
        )
    ]


def read_sequences(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The names of the schema's sequences."""
    return [
        name
        for (name,) in _rows(
            con, "SELECT sequence_name FROM duckdb_sequences() ORDER BY sequence_name"
        )
    ]


# -- which migration added what ---------------------------------------------------------


def _catalogue(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Object key -> definition, for every table, column, index, view and sequence."""
    keys: dict[str, str] = {}
    for table in read_tables(con):
        keys[f"table {table.name}"] = ""
        keys.update({f"column {table.name}.{c.name}": c.data_type for c in table.columns})
        keys.update({f"index {name}": expr for name, expr in table.indexes})
    keys.update({f"view {view.name}": view.definition for view in read_views(con)})
    keys.update({f"sequence {name}": "" for name in read_sequences(con)})
    return keys


def migration_history() -> History:
    """Replay the migrations one at a time and note what each one created or redefined."""
    history = History()
    con = duckdb.connect(":memory:")
    before: dict[str, str] = {}
    for step in MIGRATIONS:
        step(con)
        after = _catalogue(con)
        for key, definition in after.items():
            if key not in before:
                history.created[key] = step.__name__
            elif key.startswith("view ") and before[key] != definition:
                history.redefined.setdefault(key[len("view ") :], []).append(step.__name__)
        before = after
    con.close()
    return history


# -- what each migration says about itself ----------------------------------------------


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    return re.split(r"(?<=[.!?])\s+", flat, maxsplit=1)[0]


def _leading_comment(fn: Migration) -> str:
    """The comment lines just before the first statement of ``fn``'s body."""
    source = textwrap.dedent(inspect.getsource(fn))
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    lines = source.splitlines()
    comment: list[str] = []
    for line in reversed(lines[: function.body[0].lineno - 1]):
        if not line.strip().startswith("#"):
            break
        comment.insert(0, line.strip().lstrip("#").strip())
    return " ".join(comment)


def migration_summary(fn: Migration) -> str:
    """The first sentence of a migration's docstring, else of its leading comment."""
    text = inspect.getdoc(fn) or _leading_comment(fn)
    return _first_sentence(text) if text else "(no docstring or leading comment)"


# -- Markdown ---------------------------------------------------------------------------


def _code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def _prose(text: str) -> str:
    """Text for a table cell: no pipes, and no ``<name>`` a renderer would take as a tag."""
    return html.escape(text, quote=False).replace("|", "\\|")


def _created_by(history: History, key: str) -> str:
    # Only the ``_migrations`` bookkeeping table comes from apply_migrations itself.
    return history.created.get(key, "apply_migrations")


def _column_rows(table: Relation, history: History) -> list[str]:
    rows = [
        "| Column | Type | NOT NULL | Primary key | Added by |",
        "|---|---|---|---|---|",
    ]
    for column in table.columns:
        in_key = "yes" if column.name in table.primary_key else ""
        not_null = "yes" if column.not_null else ""
        added = _created_by(history, f"column {table.name}.{column.name}")
        rows.append(
            f"| {_code(column.name)} | {_code(column.data_type)} | {not_null} | {in_key} "
            f"| {added} |"
        )
    return rows


def render_table(table: Relation, history: History) -> list[str]:
    """One table: its columns, then its primary key, CHECK constraints and indexes."""
    lines = [f"### {_code(table.name)}", ""]
    lines += [f"Created by `{_created_by(history, f'table {table.name}')}`.", ""]
    lines += [*_column_rows(table, history), ""]
    if len(table.primary_key) > 1:
        key = ", ".join(_code(name) for name in table.primary_key)
        lines += [f"Primary key: ({key}).", ""]
    if table.checks:
        lines += ["CHECK constraints:", ""]
        lines += [f"- {_code(check)}" for check in table.checks]
        lines.append("")
    if table.indexes:
        lines += ["Indexes:", ""]
        lines += [
            f"- {_code(name)} on {_code(expressions.strip('[]'))} "
            f"(`{_created_by(history, f'index {name}')}`)"
            for name, expressions in table.indexes
        ]
        lines.append("")
    return lines


def _view_origin(view: Relation, history: History) -> str:
    origin = f"Created by `{_created_by(history, f'view {view.name}')}`"
    redefined = history.redefined.get(view.name, [])
    if redefined:
        origin += ", redefined by " + ", ".join(f"`{name}`" for name in redefined)
    return origin + "."


def render_view(view: Relation, history: History) -> list[str]:
    """One view: its columns, described from ``VIEW_COLUMNS`` when it is documented."""
    described = VIEW_COLUMNS.get(view.name)
    lines = [f"### {_code(view.name)}", "", _view_origin(view, history), ""]
    if described is None:
        lines += [
            "Not one of the documented analytical views "
            "(`npc_nb.store.schema.views.VIEW_COLUMNS`).",
            "",
            "| Column | Type |",
            "|---|---|",
        ]
        lines += [f"| {_code(c.name)} | {_code(c.data_type)} |" for c in view.columns]
    else:
        lines += ["| Column | Type | Meaning |", "|---|---|---|"]
        lines += [
            f"| {_code(c.name)} | {_code(c.data_type)} | "
            f"{_prose(described.get(c.name, '(undocumented)'))} |"
            for c in view.columns
        ]
    lines += ["", "<details><summary>Definition</summary>", "", "```sql"]
    lines += [view.definition, "```", "", "</details>", ""]
    return lines


def render_migrations() -> list[str]:
    """The migrations in the order they apply, each with what it says about itself."""
    lines = ["| Migration | What it does |", "|---|---|"]
    lines += [f"| `{step.__name__}` | {_prose(migration_summary(step))} |" for step in MIGRATIONS]
    return [*lines, ""]


def _header() -> list[str]:
    return [
        "# The store schema",
        "",
        f"This page is generated by `{COMMAND}`",
        "from the migrations in `npc_nb/store/schema/migrations.py`. Do not edit it by hand:",
        "`tests/test_docs.py` fails when it is out of date. It shows the schema of a new",
        "store once every migration has run; the project store and the user store have",
        "the same schema. What the columns mean is explained in [the store](store.md)",
        "and, for the analytical views, in [analytics](analytics.md#the-views).",
        "",
    ]


def render_schema() -> str:
    """The whole page: tables, views, sequences and migrations, in a stable order."""
    con = fresh_schema()
    try:
        tables, views, sequences = read_tables(con), read_views(con), read_sequences(con)
    finally:
        con.close()
    history = migration_history()
    lines = [*_header(), "## Tables", ""]
    for table in tables:
        lines += render_table(table, history)
    lines += ["## Views", ""]
    for view in views:
        lines += render_view(view, history)
    lines += ["## Sequences", ""]
    lines += [
        f"- {_code(name)} (`{_created_by(history, f'sequence {name}')}`)" for name in sequences
    ]
    lines += ["", "## Migrations", "", "Applied in this order, each in its own transaction.", ""]
    lines += render_migrations()
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(render_schema(), end="")
