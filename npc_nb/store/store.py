"""The store: the only place that holds SQL. One ``Store`` per DuckDB file.

A project has two: its own file (npc, team and project scopes) and the user's file
(global scope). Callers get plain dicts and DataFrames back, never live relations, so
no result keeps the file lock. Writes happen inside ``write()``, one transaction: a
status change and its audit event commit together or not at all. Identifiers that
reach SQL text come from this module's own constants; values are always bound.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ..config import Settings
from ..errors import NpcError
from ..paths import ensure_store_dir, store_path
from .connection import ConnectionLease
from .migrations import apply_migrations

__all__ = ["Connection", "Store", "rows"]

Connection = duckdb.DuckDBPyConnection
_READ_ONLY_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

#: Visible to a persona: its own npc-scoped memories, its team's, the project's, global.
VISIBLE = (
    "((scope = 'npc' AND npc = $npc) OR (scope = 'team' AND team = $team)"
    " OR scope IN ('project', 'global'))"
)
SCOPE_RANK_SQL = (
    "CASE scope WHEN 'npc' THEN 0 WHEN 'team' THEN 1 WHEN 'project' THEN 2 ELSE 3 END"
)


def rows(con: Connection, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict]:
    """Run a query and materialise its rows as dicts."""
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


class Store:
    """One DuckDB file with the npc_nb schema, opened on demand and released when idle."""

    def __init__(self, folder: Path, settings: Settings) -> None:
        self.folder = folder
        self.path = store_path(folder)
        self._migrated = False
        self._lease = ConnectionLease(
            self.path,
            lock_timeout=settings.lock_timeout,
            idle_release=settings.idle_release,
            on_connect=self._prepare,
        )

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    @property
    def exists(self) -> bool:
        return self.path.exists()

    def release(self) -> None:
        """Close the file now so another process can take the lock at once."""
        self._lease.release()

    def _prepare(self, con: Connection) -> None:
        con.execute("SET TimeZone = 'UTC'")
        if not self._migrated:
            apply_migrations(con)
            self._migrated = True

    @contextmanager
    def read(self) -> Iterator[Connection]:
        ensure_store_dir(self.folder)
        with self._lease.connection() as con:
            yield con

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction: everything inside commits together or not at all."""
        with self.read() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    # -- memories -------------------------------------------------------------------

    def get_memory(self, memory_id: str, con: Connection | None = None) -> dict | None:
        if con is None:
            with self.read() as con:
                return self.get_memory(memory_id, con)
        found = rows(con, "SELECT * FROM memories WHERE id = ?", [memory_id])
        return found[0] if found else None

    def insert_memory(self, con: Connection, memory: dict) -> None:
        columns = list(memory)
        con.execute(
            f"INSERT INTO memories ({', '.join(columns)}) "  # noqa: S608 - column names are ours
            f"VALUES ({', '.join('?' for _ in columns)})",
            list(memory.values()),
        )

    def update_memory(
        self, con: Connection, memory_id: str, expected_status: str, changes: dict
    ) -> bool:
        """Apply ``changes`` if the memory still has ``expected_status``; report success."""
        assignments = ", ".join(f"{column} = ?" for column in changes)
        updated = con.execute(
            f"UPDATE memories SET {assignments} WHERE id = ? AND status = ? "  # noqa: S608
            "RETURNING id",
            [*changes.values(), memory_id, expected_status],
        ).fetchall()
        return bool(updated)

    def insert_event(self, con: Connection, event: dict) -> int:
        columns = list(event)
        (seq,) = con.execute(
            f"INSERT INTO memory_events (seq, {', '.join(columns)}) "  # noqa: S608
            f"VALUES (nextval('memory_event_seq'), {', '.join('?' for _ in columns)}) "
            "RETURNING seq",
            list(event.values()),
        ).fetchone()
        return int(seq)

    def find_by_hash(self, digest: str, npc: str | None, team: str | None) -> list[dict]:
        """Visible memories whose proposed or final text normalises to ``digest``."""
        with self.read() as con:
            return rows(
                con,
                "SELECT id, status, final_text FROM memories "  # noqa: S608
                f"WHERE (final_hash = $digest OR initial_hash = $digest) AND {VISIBLE}",
                {"digest": digest, "npc": npc, "team": team},
            )

    def rejected_texts(
        self, npc: str | None, team: str | None, min_len: int, max_len: int
    ) -> list[tuple[str, str]]:
        """(id, normalised text) of visible rejected memories within a length window."""
        with self.read() as con:
            return con.execute(
                "SELECT id, norm_text FROM memories "  # noqa: S608
                f"WHERE status = 'human-rejected' AND {VISIBLE} "
                "AND length(norm_text) BETWEEN $lo AND $hi",
                {"npc": npc, "team": team, "lo": min_len, "hi": max_len},
            ).fetchall()

    def insert_reproposal(self, con: Connection, reproposal: dict) -> None:
        columns = list(reproposal)
        con.execute(
            f"INSERT INTO reproposals ({', '.join(columns)}) "  # noqa: S608
            f"VALUES ({', '.join('?' for _ in columns)})",
            list(reproposal.values()),
        )

    def message_content(self, message_id: str) -> str | None:
        with self.read() as con:
            found = con.execute("SELECT content FROM messages WHERE id = ?", [message_id]).fetchone()
        return found[0] if found else None

    def open_memories(self, filters: dict[str, Any], now: datetime) -> list[dict]:
        """Pending and due deferred memories matching the filters, in review order."""
        clauses = ["(status = 'pending_approval' OR (status = 'deferred' AND defer_until <= $now))"]
        params: dict[str, Any] = {"now": now}
        for column in ("npc", "team", "category", "scope", "conversation_id"):
            if filters.get(column) is not None:
                clauses.append(f"{column} = ${column}")
                params[column] = filters[column]
        if filters.get("ids") is not None:
            clauses.append("list_contains($ids, id)")
            params["ids"] = list(filters["ids"])
        with self.read() as con:
            return rows(
                con,
                "SELECT * FROM memories WHERE "  # noqa: S608
                + " AND ".join(clauses)
                + " ORDER BY skipped_at NULLS FIRST, recorded_at, id",
                params,
            )

    # -- audit ------------------------------------------------------------------------

    def last_undoable(self, actor: str, actions: Sequence[str]) -> list[dict]:
        """The actor's latest decision not yet undone, with the rest of its batch."""
        with self.read() as con:
            latest = rows(
                con,
                "SELECT * FROM memory_events e WHERE actor = $actor "
                "AND list_contains($actions, action) "
                "AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) "
                "ORDER BY seq DESC LIMIT 1",
                {"actor": actor, "actions": list(actions)},
            )
            if not latest or latest[0]["batch_id"] is None:
                return latest
            return rows(
                con,
                "SELECT * FROM memory_events e WHERE batch_id = $batch "
                "AND list_contains($actions, action) "
                "AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) "
                "ORDER BY seq DESC",
                {"batch": latest[0]["batch_id"], "actions": list(actions)},
            )

    # -- context ----------------------------------------------------------------------

    def context_rows(
        self, npc: str, team: str | None, terms: list[str], budget: int, line_overhead: int
    ) -> tuple[list[dict], int]:
        """Approved memories visible to ``npc`` that fit ``budget``, and how many exist.

        Selection priority: relevance to ``terms`` (when given), then most specific
        scope, then most recently decided. The running length is an estimate (escaping
        only lengthens text); the caller trims exactly.
        """
        relevance = (
            "list_count(list_filter($terms::VARCHAR[], lambda t: contains(norm_text, t)))"
            if terms
            else "0"
        )
        sql = f"""
            WITH visible AS (
                SELECT id, final_text, final_hash, scope, category, valid_from, valid_to,
                       decided_at, {SCOPE_RANK_SQL} AS scope_rank, {relevance} AS relevance
                FROM approved_memories WHERE {VISIBLE}
            ), ranked AS (
                SELECT *, count(*) OVER () AS total,
                       sum(length(final_text) + $overhead) OVER (
                           ORDER BY relevance DESC, scope_rank, decided_at DESC, id
                           ROWS UNBOUNDED PRECEDING) AS running
                FROM visible
            )
            SELECT * FROM ranked WHERE running <= $budget
            ORDER BY relevance DESC, scope_rank, decided_at DESC, id
        """  # noqa: S608 - fragments are this module's constants
        params: dict[str, Any] = {"npc": npc, "team": team, "budget": budget}
        params["overhead"] = line_overhead
        if terms:
            params["terms"] = terms
        with self.read() as con:
            selected = rows(con, sql, params)
            if selected:
                return selected, int(selected[0]["total"])
            (total,) = con.execute(
                f"SELECT count(*) FROM approved_memories WHERE {VISIBLE}",  # noqa: S608
                {"npc": npc, "team": team},
            ).fetchone()
            return [], int(total)

    # -- DataFrames ---------------------------------------------------------------------

    def dataframe(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        with self.read() as con:
            return con.execute(sql, params).df()

    def run_sql(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None, *, allow_write: bool
    ) -> pd.DataFrame:
        """Run a caller's SQL; unless ``allow_write``, only reads, and nothing persists."""
        statements = duckdb.extract_statements(sql)
        if not allow_write:
            writes = [s.type.name for s in statements if s.type not in _READ_ONLY_STATEMENTS]
            if writes:
                raise NpcError(
                    f"Refusing a statement that could change the store ({', '.join(writes)}). "
                    "Queries are read-only so analysis cannot corrupt the audit log; pass "
                    "allow_write=True if you really mean to write."
                )
        with self.read() as con:
            if allow_write:
                return _frame(con.execute(sql, params or ()))
            con.execute("BEGIN TRANSACTION")
            try:
                return _frame(con.execute(sql, params or ()))
            finally:
                con.execute("ROLLBACK")


def _frame(cursor: Connection) -> pd.DataFrame:
    """A result as a DataFrame; a statement without a result gives an empty one."""
    return cursor.df() if cursor.description else pd.DataFrame()
