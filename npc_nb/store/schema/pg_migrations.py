"""The ladder on PostgreSQL: the same steps as on DuckDB (``migrations``), recorded
under the same names, applied under an advisory lock.

One PostgreSQL schema holds one project (``_foundations.store_url.project_schema``). A
new schema is built from the declaration (``dialect``, rendered for PostgreSQL) plus
what only PostgreSQL has (``pg_extras``: triggers, row-level security, functions), and
records every step; an existing one gets the steps it lacks, each step's ``postgres``
function; one made by the old ladder (m001..m027) is upgraded once or refused
(``legacy``).

Several clients may open a new project at once: steps run in one transaction under an
advisory lock keyed by the schema's name, waited for at most ``lock_timeout`` seconds
(any role can take an advisory lock: one that holds it makes opening fail with a clear
error, never hang), and a client that finds every step recorded takes no lock and
needs no privilege beyond reading ``_migrations`` (so reviewer and reader roles never
run DDL). The same transaction creates the schema's record of its project
(``pg_project``), or writes it into a schema made before records, when the role may.

The analytical views are not created here: ``%npc_sql`` reads PostgreSQL through
DuckDB, which defines them with the very SQL of the DuckDB schema (``server.attach``).
The audit log is append-only twice over: the app roles are granted only SELECT and
INSERT on it (docs/lab.md), and a trigger refuses UPDATE, DELETE and TRUNCATE for
everybody, the owner included.
"""

from __future__ import annotations

from typing import Any

from ..._foundations.settings import Settings
from ..._foundations.utc import utc_now
from ...errors import StoreError
from .legacy import BASELINE, LEGACY_STEPS, legacy_records, upgrade_legacy
from .migrations import MIGRATIONS, RECORDS, build_postgres, refuse_newer, step_names
from .pg_project import (
    claim_schema,
    record_settled,
    refuse_legacy_twin,
    refuse_unknown_project,
    schema_exists,
)

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "LOCK_NOT_AVAILABLE",
    "apply_pg_migrations",
    "lock_timeout_setting",
]

#: Seconds a client waits for the migration lock when no setting says (``lock_timeout``).
DEFAULT_LOCK_TIMEOUT = float(Settings.model_fields["lock_timeout"].default)

#: The SQLSTATE of a lock wait that ran out of ``lock_timeout`` (``lock_not_available``).
LOCK_NOT_AVAILABLE = "55P03"


def lock_timeout_setting(seconds: float) -> str:
    """``seconds`` as a value of PostgreSQL's ``lock_timeout``: whole milliseconds, at
    least one (zero there means to wait for ever). The migrations wait this long for
    their lock; the server store sets it on every session."""
    return f"{max(1, round(seconds * 1000))}ms"


def apply_pg_migrations(
    con: Any,
    schema: str,
    *,
    project: str | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    create: bool = True,
    where: str = "this server",
) -> list[str]:
    """Bring ``schema`` up to date on a psycopg connection (autocommit); return the
    migration names applied now. ``schema`` is a safe identifier (``project_schema``).
    With ``project`` (its name, as ``project_name`` gives it) the schema records the
    project it holds and is refused if it records another (``pg_project``). Unless
    ``create``, a schema that does not exist is never created: a StoreError lists the
    projects ``where`` (the server, as shown) holds."""
    if project is not None:
        refuse_legacy_twin(con, schema, project)
    if not create:
        refuse_unknown_project(con, schema, project or schema, where)
    if _recorded(con, schema) >= set(step_names()) and (
        project is None or record_settled(con, schema, project)
    ):
        return []  # the common case: no lock, no DDL
    try:
        with con.transaction():
            return _migrate(con, schema, project, lock_timeout, None if create else where)
    except Exception as exc:
        if getattr(exc, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            raise StoreError(
                f"Could not take the lock that guards creating and migrating the schema "
                f"{schema} within {lock_timeout:g} s (the lock_timeout setting): another "
                "session holds it, or holds one of the schema's tables. Nothing was "
                "changed. Open the project again; if this persists, find that session "
                "in pg_stat_activity and end it."
            ) from None
        raise


def _migrate(
    con: Any, schema: str, project: str | None, lock_timeout: float, existing_at: str | None
) -> list[str]:
    """The migrations ``schema`` lacks, in the caller's transaction, under the lock;
    with ``existing_at`` (the server, as shown) a schema dropped meanwhile is refused."""
    con.execute("SELECT set_config('lock_timeout', %s, true)", [lock_timeout_setting(lock_timeout)])
    con.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ["npc_nb:" + schema])
    if existing_at is not None:
        refuse_unknown_project(con, schema, project or schema, existing_at)
    if not schema_exists(con, schema):  # IF NOT EXISTS would still need CREATE on the database
        con.execute(f"CREATE SCHEMA {schema}")
    con.execute(f"SET LOCAL search_path TO {schema}")
    if project is not None:
        claim_schema(con, schema, project)
    con.execute(RECORDS)
    recorded = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    refuse_newer(recorded - set(LEGACY_STEPS))
    upgraded: list[str] = []
    if legacy_records(recorded):
        upgrade_legacy(con, recorded, "postgres", schema)
        recorded, upgraded = {BASELINE}, [BASELINE]
    refuse_newer(recorded)
    if not recorded:
        build_postgres(con, schema)  # the declaration: the sum of every step
        return _record(con, step_names())
    applied: list[str] = upgraded
    for step in MIGRATIONS:
        if step.name not in recorded:
            step.postgres(con, schema)
            applied += _record(con, [step.name])
    return applied


def _record(con: Any, names: list[str]) -> list[str]:
    for name in names:
        con.execute("INSERT INTO _migrations VALUES (%s, %s)", [name, utc_now()])
    return names


def _recorded(con: Any, schema: str) -> set[str]:
    exists = con.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
        "AND table_name = '_migrations'",
        [schema],
    ).fetchone()
    if exists is None:
        return set()
    return {row[0] for row in con.execute(f"SELECT name FROM {schema}._migrations").fetchall()}
