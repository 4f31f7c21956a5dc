"""Moving a store: every row of one npc_nb store copied into another, embedded file or
PostgreSQL schema at either end (``npc-nb migrate-store``).

The tables are read from the target's schema, not listed here, so a table a later
migration adds is copied without anyone remembering to: both backends' migrations build
the same tables and columns (``tests/test_pg_store.py`` holds them in step), and a
source whose tables or columns differ from the target's is refused. Rows keep every
value as it was, the audit log's ``seq`` included; the sequences that number events and
memories are then moved past the copied values, so the next event follows the last.

The source is read through DuckDB (the file attached read-only, or the schema through
the postgres extension in one read-only snapshot), and the target written in one
transaction (``copy_into``): a failure anywhere leaves the target as it was. A
target that already holds memories, events, conversations or jobs is refused unless
``force`` (then cleared in the same transaction). The source is migrated first if it
is older, and never created: a move from nowhere is an error. A schema at either end
must record the project named (``pg_project``); one the move creates records it.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from ..._foundations.locations import STORE_DIR, store_path
from ..._foundations.store_url import check_store_url, project_name, project_schema, redact
from ...errors import ConfigError
from ..schema.migrations import apply_migrations
from .copy_into import StoreEnd, duckdb_file, into_file, into_postgres, postgres_connection

__all__ = ["Moved", "StoreEnd", "migrate_store", "store_end"]


@dataclasses.dataclass(frozen=True)
class Moved:
    """What a move copied: rows per table, and any migrations applied on the way."""

    source: str
    target: str
    rows: dict[str, int]
    source_migrated: tuple[str, ...]
    target_migrated: tuple[str, ...]
    cleared: bool
    seconds: float

    def __str__(self) -> str:
        width = max(len(table) for table in self.rows)
        lines = [f"Copied {self.source}", f"    to {self.target}"]
        if self.source_migrated:
            lines.append(f"The source was migrated first: {', '.join(self.source_migrated)}.")
        if self.cleared:
            lines.append("The target's earlier rows were replaced (--force).")
        lines += [f"  {table:<{width}}  {count:>9}" for table, count in self.rows.items()]
        total = sum(self.rows.values())
        lines.append(f"{total} rows in {len(self.rows)} tables, {self.seconds:.2f} s.")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self)}


def store_end(location: str | Path, *, project: str | None = None, user: bool = False) -> StoreEnd:
    """Where ``location`` points: a PostgreSQL URL (the schema of ``project``), else a
    project folder (its ``.npc_nb`` store), or with ``user`` the user's store folder
    (``$NPC_NB_HOME``, holding the global-scope memories)."""
    text = str(location).strip()
    if "://" in text:
        try:
            url = check_store_url(text)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if not project:
            raise ConfigError(
                f"{redact(url)} holds one schema per project: name it with --project NAME "
                "(project= in Python)."
            )
        try:
            return StoreEnd(url=url, schema=project_schema(project), project=project_name(project))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    folder = Path(text).expanduser().absolute()
    return StoreEnd(folder=folder if user else folder / STORE_DIR)


def migrate_store(
    source: str | Path,
    target: str | Path,
    *,
    project: str | None = None,
    user: bool = False,
    force: bool = False,
) -> Moved:
    """Copy every row of the store at ``source`` into the store at ``target`` (see the
    module docstring); each is a project folder or a PostgreSQL URL with ``project``."""
    start = time.perf_counter()
    origin = store_end(source, project=project, user=user)
    destination = store_end(target, project=project, user=user)
    if origin == destination:
        raise ConfigError(f"The source and the target are the same store: {origin}.")
    if project and origin.url is None and destination.url is None:
        raise ConfigError(
            "--project names a project on a PostgreSQL server, and neither end is a URL; "
            "leave it out to move between folders."
        )
    source_migrated = _prepare_source(origin)
    if destination.folder is not None:
        migrated, counts, cleared = into_file(origin, destination.folder, force)
    else:
        migrated, counts, cleared = into_postgres(origin, destination, force)
    return Moved(
        source=str(origin),
        target=str(destination),
        rows=counts,
        source_migrated=tuple(source_migrated),
        target_migrated=tuple(migrated),
        cleared=cleared,
        seconds=time.perf_counter() - start,
    )


# -- the source ---------------------------------------------------------------------------


def _prepare_source(end: StoreEnd) -> list[str]:
    """Bring the source to the current schema (the copy needs both ends alike); the
    migrations this applied. A source that does not exist is an error, never created."""
    if end.folder is not None:
        path = store_path(end.folder)
        if not path.exists():  # a folder in its place is a damaged store (``embedded.faults``)
            raise ConfigError(
                f"No npc_nb store at {path}: is this the project's folder (with --user, "
                "the user's folder such as ~/.npc_nb)?"
            )
        with duckdb_file(path) as con:
            return apply_migrations(con)
    with postgres_connection(end) as con:
        found = con.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
            "AND table_name = '_migrations'",
            [end.schema],
        ).fetchone()
        if found is None:
            from ..schema.pg_project import refuse_legacy_twin

            refuse_legacy_twin(con, end.schema or "", end.project or "")
            raise ConfigError(
                f"No npc_nb store for this project at {end}: check the URL and --project."
            )
        from ..schema.pg_migrations import apply_pg_migrations

        return apply_pg_migrations(con, end.schema or "", project=end.project)
