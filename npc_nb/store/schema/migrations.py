"""The ladder: the schema's numbered steps, applied on open, each in one transaction
with its record.

The ladder starts at the baseline ``0001``: the schema as declared (``dialect``),
which is exactly what the old migrations m001..m027 built (``tests/data/schema-m027-*``
record it). It is append-only: a step, once released, is never edited or removed.

A new store is built from the declaration in one transaction and records every step
of the ladder: the declaration is always the sum of the steps. A store that lacks
steps (one made before the newest) gets them, in order, each with its record. A store
that records a step this code does not know was written by a newer npc_nb and is
refused. A store made by the old ladder is recognised and upgraded once (``legacy``).

Adding step 0002 (say, a column):

1. Declare it: append the ``Column`` to its table in ``tables`` / ``lab_tables`` (a
   closed set is a ``OneOf`` over a new tuple of ``npc_nb.vocabulary``).
2. Append ``Step("0002", "<one sentence: what and why>", duckdb=..., postgres=...)``
   below, with the statements that move a store at 0001 there on each backend
   (``dialect.add_column`` renders an ``ALTER TABLE ... ADD COLUMN`` from the
   declaration, so the new column is still written once).
3. Regenerate docs/schema.md (``python -m npc_nb.store.schema.doc > docs/schema.md``).
   ``tests/test_schema_baseline.py`` then checks that a store at 0001 (the committed
   fixtures) brought up by the ladder holds the same schema as a new store.

A bundle is staged at its own step (``only``): the baseline from its frozen DuckDB
statements (``steps/0001.duckdb.sql``, generated once from the declaration of that
time and never edited), then the steps up to the bundle's newest; its rows are loaded
there and the staging database is brought up the ladder as an old store is. So a step
needs no code for bundles: it upgrades a bundle written before it by moving its
staging database, as it moves a store.

A step that changes memory rows (not just adds columns) must also start a new epoch of
the decision generation (``generation.rewrite_sql()``): caches patch themselves from
the audit log, and a step writes no events.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import duckdb

from ..._foundations.utc import utc_now
from ...errors import StoreError
from .audit_tables import AUDIT_TABLES
from .dialect import DUCKDB, POSTGRES, create_table, schema_ddl
from .legacy import BASELINE, LEGACY_STEPS, as_steps, legacy_records, upgrade_legacy
from .pg_extras import audit_extras, pg_extras

__all__ = [
    "MIGRATIONS",
    "RECORDS",
    "Step",
    "apply_migrations",
    "build_duckdb",
    "build_frozen_baseline",
    "build_postgres",
    "refuse_newer",
    "step_names",
]

#: The released steps' frozen statements, where ``build_frozen_baseline`` reads them.
_FROZEN = files(__name__.rpartition(".")[0]).joinpath("steps")

#: The table that records which steps a store holds.
RECORDS = "CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)"


@dataclass(frozen=True)
class Step:
    """One step of the ladder: its number, what it does, and how it moves a store
    from the step before on each backend (``postgres`` takes the schema's name)."""

    name: str
    doc: str
    duckdb: Callable[[duckdb.DuckDBPyConnection], None]
    postgres: Callable[[Any, str], None]


def build_duckdb(con: duckdb.DuckDBPyConnection) -> None:
    """The declared schema, on an empty DuckDB database (what a new store gets)."""
    for statement in schema_ddl(DUCKDB):
        con.execute(statement)


def build_postgres(con: Any, schema: str) -> None:
    """The declared schema and PostgreSQL's extras, in ``schema`` (the search path)."""
    for statement in (*schema_ddl(POSTGRES), *pg_extras(schema)):
        con.execute(statement)


def build_frozen_baseline(con: duckdb.DuckDBPyConnection) -> None:
    """Step ``0001`` as it was released, on an empty DuckDB database: its frozen
    statements (package data), not today's declaration (which is the newest step)."""
    con.execute(_FROZEN.joinpath("0001.duckdb.sql").read_text(encoding="utf-8"))


def _audit_tables_duckdb(con: duckdb.DuckDBPyConnection) -> None:
    for declared in AUDIT_TABLES:
        con.execute(create_table(declared, DUCKDB))


def _audit_tables_postgres(con: Any, schema: str) -> None:
    for statement in (*(create_table(t, POSTGRES) for t in AUDIT_TABLES), *audit_extras()):
        con.execute(statement)


#: The ladder, in order. Append only. ``0001`` runs only on an empty database (every
#: store that exists holds it): it builds the declaration, which is the sum of the steps.
MIGRATIONS: list[Step] = [
    Step(
        "0001",
        "The baseline: every table, CHECK, index and view as declared, the schema the "
        "migrations m001..m027 of the first development versions built.",
        duckdb=build_duckdb,
        postgres=build_postgres,
    ),
    Step(
        "0002",
        "Audited batches: the tables audits, audit_members and audit_steps (an audit's "
        "plan, its frozen batch and what was done with it), append-only on PostgreSQL.",
        duckdb=_audit_tables_duckdb,
        postgres=_audit_tables_postgres,
    ),
]


def step_names() -> list[str]:
    """The ladder's step names, in order."""
    return [step.name for step in MIGRATIONS]


def refuse_newer(recorded: Collection[str], what: str = "store") -> None:
    """Refuse a store that records a step this npc_nb does not know."""
    if unknown := sorted(set(recorded) - set(step_names())):
        raise StoreError(
            f"This {what} was written by a newer npc_nb (schema steps {', '.join(unknown)}). "
            "Upgrade npc_nb to open it."
        )


def apply_migrations(
    con: duckdb.DuckDBPyConnection, *, only: Collection[str] | None = None
) -> list[str]:
    """Bring the schema up to date; return the step names applied now (``0001`` for a
    store of the old ladder upgraded now). A store with no schema yet is built from the
    declaration. ``only`` (the steps a bundle was written at) builds an empty database
    at that step instead: the frozen baseline and the steps after it up to the newest
    of ``only`` (a later call brings it up to date)."""
    con.execute(RECORDS)
    recorded = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    refuse_newer(recorded - set(LEGACY_STEPS))
    upgraded: list[str] = []
    if legacy_records(recorded):
        upgrade_legacy(con, recorded, "duckdb")
        recorded, upgraded = {BASELINE}, [BASELINE]
    refuse_newer(recorded)
    if not recorded:
        if only is not None and as_steps(only) != set(step_names()):
            return _build_at(con, as_steps(only))
        return _in_transaction(con, build_duckdb, step_names())
    applied = upgraded
    for step in MIGRATIONS:
        if step.name not in recorded:
            applied += _in_transaction(con, step.duckdb, [step.name])
    return applied


def _build_at(con: duckdb.DuckDBPyConnection, steps: set[str]) -> list[str]:
    """An empty database brought to ``steps`` (a start of the ladder): the frozen
    baseline, then each later step of it, each in its own transaction."""
    ladder = step_names()[: len(steps)]
    if set(ladder) != steps:
        raise StoreError(
            f"This bundle lists schema steps {', '.join(sorted(steps))}, which are not a "
            f"start of npc_nb's ladder ({', '.join(step_names())}). It was changed or was "
            "not written by npc_nb. Nothing was imported."
        )
    applied = _in_transaction(con, build_frozen_baseline, [BASELINE])
    for step in MIGRATIONS[1 : len(steps)]:
        applied += _in_transaction(con, step.duckdb, [step.name])
    return applied


def _in_transaction(
    con: duckdb.DuckDBPyConnection,
    build: Callable[[duckdb.DuckDBPyConnection], None],
    names: list[str],
) -> list[str]:
    """Run ``build`` and record ``names`` in one transaction: both or neither."""
    con.execute("BEGIN TRANSACTION")
    try:
        build(con)
        for name in names:
            con.execute("INSERT INTO _migrations VALUES (?, ?)", [name, utc_now()])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return names
