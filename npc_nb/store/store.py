"""The store: the only place that holds SQL. One ``Store`` per DuckDB file.

A project has two: its own file (npc, team and project scopes) and the user's file
(global scope). Callers get plain dicts and DataFrames back, never live relations, so
no result keeps the file lock. Writes happen inside ``write()``, one transaction: a
status change and its audit event commit together or not at all. Identifiers that
reach SQL text come from this module's own constants; values are always bound.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pandas as pd

from ..config import Settings
from ..errors import QueryError, StoreError
from ..paths import make_private, store_path
from ..stamps import utc_now
from ..vocabulary import APPROVED_STATUSES
from .connection import ConnectionLease
from .migrations import apply_migrations

__all__ = ["VISIBLE", "Connection", "Store", "rows", "visible_to"]

Connection = duckdb.DuckDBPyConnection
_READ_ONLY_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
#: Errors of the file, not of the statement: a full disk, a read-only folder, a lost file.
_STORAGE_ERRORS = (duckdb.IOException, duckdb.TransactionException, duckdb.FatalException)
_TRANSACTION_CONTROL = {
    duckdb.StatementType.TRANSACTION,
    duckdb.StatementType.ATTACH,
    duckdb.StatementType.DETACH,
}

#: Visible to a persona: its own npc-scoped memories, its team's, the project's, global.
VISIBLE = (
    "((scope = 'npc' AND npc = $npc) OR (scope = 'team' AND team = $team)"
    " OR scope IN ('project', 'global'))"
)


def visible_to(row: dict, npc: str | None, team: str | None) -> bool:
    """``VISIBLE`` for a row already in hand (a test holds the two in agreement)."""
    scope = row["scope"]
    if scope == "npc":
        return npc is not None and row["npc"] == npc
    if scope == "team":
        return team is not None and row["team"] == team
    return scope in ("project", "global")


SCOPE_RANK_SQL = "CASE scope WHEN 'npc' THEN 0 WHEN 'team' THEN 1 WHEN 'project' THEN 2 ELSE 3 END"


def rows(con: Connection, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict]:
    """Run a query and materialise its rows as dicts."""
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


class Store:
    """One DuckDB file with the npc_nb schema, opened on demand and released when idle.

    Use ``Store.shared``: one Store (one lease, one connection) per file per process, so
    every Project and thread in a kernel agrees on what this process has written.
    """

    _shared: ClassVar[weakref.WeakValueDictionary[Path, Store]] = weakref.WeakValueDictionary()
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def shared(cls, folder: Path, settings: Settings) -> Store:
        """This process's Store for ``folder``; the latest opener's timeouts apply."""
        path = store_path(folder).absolute()
        with cls._shared_lock:
            store = cls._shared.get(path)
            if store is None:
                store = cls._shared[path] = cls(folder, settings)
            store._lease.lock_timeout = settings.lock_timeout
            store._lease.idle_release = settings.idle_release
            return store

    def __init__(self, folder: Path, settings: Settings) -> None:
        self.folder = folder
        self.path = store_path(folder)
        # The decision generation as this process last saw it. None whenever the file
        # was closed, since another process may have written while it was.
        self._generation: int | None = None
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
        make_private(self.folder)  # the file may have just been created (umask mode)
        self._generation = None
        con.execute("SET TimeZone = 'UTC'")
        # On every (re)connect: another process, maybe a newer npc_nb, may have migrated.
        apply_migrations(con)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._lease.connection() as con:
            yield con

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction: everything inside commits together or not at all."""
        with self.read() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
                con.execute("COMMIT")
                make_private(self.folder)  # a new write-ahead log gets the umask's mode
            except _STORAGE_ERRORS as exc:
                self._abandon(con)
                raise StoreError(
                    f"Could not write to the store {self.path}: {str(exc).splitlines()[0]}. "
                    "Nothing of this operation was saved; everything saved before is intact. "
                    "Is the disk full or the folder read-only? Free space or fix the "
                    "permissions, then retry."
                ) from exc
            except BaseException:
                self._abandon(con)
                raise

    def _abandon(self, con: Connection) -> None:
        """Roll back; whatever this transaction bumped did not happen."""
        self._generation = None
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")

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
            f"INSERT INTO memories ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})",
            list(memory.values()),
        )

    def update_memory(
        self, con: Connection, memory_id: str, expected_status: str, changes: dict
    ) -> bool:
        """Apply ``changes`` if the memory still has ``expected_status``; report success.

        Call inside ``write()``: the re-read and the update share its transaction, and
        the held file lock keeps other processes out in between.
        """
        current = con.execute("SELECT status FROM memories WHERE id = ?", [memory_id]).fetchone()
        if current is None or current[0] != expected_status:
            return False
        assignments = ", ".join(f"{column} = ?" for column in changes)
        con.execute(
            f"UPDATE memories SET {assignments} WHERE id = ?",
            [*changes.values(), memory_id],
        )
        self.bump_generation(con)
        return True

    def generation(self, con: Connection) -> int:
        """A token that changes with every decision: caches of approved and rejected sets
        key on it.

        Each change writes a fresh random value, never a count, so no older state (a
        rolled-back transaction, a restored or recreated file) can reproduce a token a
        cache has seen. While this process holds the file no other process can write,
        so the token is read from the file only after a (re)connect.
        """
        if self._generation is None:
            (value,) = con.execute(
                "SELECT value FROM store_state WHERE key = 'decision_generation'"
            ).fetchone()
            self._generation = int(value)
        return self._generation

    def bump_generation(self, con: Connection) -> None:
        token = secrets.randbits(62)
        con.execute("UPDATE store_state SET value = ? WHERE key = 'decision_generation'", [token])
        self._generation = token

    def insert_event(self, con: Connection, event: dict) -> None:
        columns = list(event)
        con.execute(
            f"INSERT INTO memory_events (seq, {', '.join(columns)}) "
            f"VALUES (nextval('memory_event_seq'), {', '.join('?' for _ in columns)})",
            list(event.values()),
        )

    def find_by_hash(
        self, con: Connection, digest: str, npc: str | None, team: str | None
    ) -> list[dict]:
        """Visible memories whose proposed or final text normalises to ``digest``.

        Superseded versions are left out: a fact that changes back ("the deadline is
        Friday" again) is news a reviewer should see, not a repeat.
        """
        # Two plain lookups, each served by its hash index: an OR, a UNION or the
        # visibility filter in the same scan makes DuckDB read the whole table instead.
        found = {}
        for column in ("final_hash", "initial_hash"):
            for row in rows(
                con,
                f"SELECT id, status, scope, npc, team, source_message_id FROM memories "
                f"WHERE {column} = ?",
                [digest],
            ):
                found[row["id"]] = row
        return [
            row
            for row in found.values()
            if row["status"] != "superseded" and visible_to(row, npc, team)
        ]

    def rejected_visible(self, con: Connection, npc: str | None, team: str | None) -> list[tuple]:
        """(id, normalised text) of every rejected memory visible to ``npc``."""
        return con.execute(
            f"SELECT id, norm_text FROM memories WHERE status = 'human-rejected' AND {VISIBLE}",
            {"npc": npc, "team": team},
        ).fetchall()

    def add_flags(self, con: Connection, memory_id: str, flags: list[str]) -> None:
        con.execute(
            "UPDATE memories SET flags = list_distinct(list_concat(flags, ?)) WHERE id = ?",
            [flags, memory_id],
        )

    def approved_visible(self, con: Connection, npc: str, team: str | None) -> list[dict]:
        """Approved memories visible to ``npc``: most specific scope, then newest, first."""
        return rows(
            con,
            "SELECT id, final_text, final_hash, norm_text, scope, category, valid_from, "
            f"valid_to, decided_at, {SCOPE_RANK_SQL} AS scope_rank "
            f"FROM approved_memories WHERE {VISIBLE} "
            "ORDER BY scope_rank, decided_at DESC, id",
            {"npc": npc, "team": team},
        )

    def next_validity_change(self, con: Connection, npc: str, team: str | None) -> datetime | None:
        """The next moment a visible approved memory enters or leaves its validity window.

        Until then, ``approved_visible`` cannot change without a decision.
        """
        (moment,) = con.execute(
            "SELECT min(CASE WHEN valid_from > $now THEN valid_from "
            "ELSE valid_to END) FROM memories "
            "WHERE list_contains($approved, status) AND superseded_by IS NULL "
            f"AND (valid_from > $now OR valid_to > $now) AND {VISIBLE}",
            {"npc": npc, "team": team, "approved": list(APPROVED_STATUSES), "now": utc_now()},
        ).fetchone()
        return moment

    def insert_reproposal(self, con: Connection, reproposal: dict) -> None:
        columns = list(reproposal)
        con.execute(
            f"INSERT INTO reproposals ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})",
            list(reproposal.values()),
        )

    def message_content(self, message_id: str) -> str | None:
        with self.read() as con:
            found = con.execute(
                "SELECT content FROM messages WHERE id = ?", [message_id]
            ).fetchone()
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
                "SELECT * FROM memories WHERE "
                + " AND ".join(clauses)
                + " ORDER BY skipped_at NULLS FIRST, recorded_at, id",
                params,
            )

    def count_open(self, now: datetime) -> int:
        with self.read() as con:
            (count,) = con.execute(
                "SELECT count(*) FROM memories WHERE status = 'pending_approval' "
                "OR (status = 'deferred' AND defer_until <= ?)",
                [now],
            ).fetchone()
        return int(count)

    # -- audit ------------------------------------------------------------------------

    def recent_undoable(
        self, actor: str, actions: Sequence[str], limit: int, session: str | None = None
    ) -> list[dict]:
        """The actor's latest decision events that no undo event points at, newest first
        (only those of one review session when ``session`` is given)."""
        with self.read() as con:
            return rows(
                con,
                "SELECT * FROM memory_events e WHERE actor = $actor "
                "AND list_contains($actions, action) "
                "AND ($session IS NULL OR review_session = $session) "
                "AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) "
                "ORDER BY seq DESC LIMIT $limit",
                {"actor": actor, "actions": list(actions), "limit": limit, "session": session},
            )

    def changed_since(self, event: dict) -> bool:
        """Whether the event's memory has a later event that was not itself undone."""
        with self.read() as con:
            (count,) = con.execute(
                "SELECT count(*) FROM memory_events e WHERE memory_id = ? AND seq > ? "
                "AND action NOT IN ('undo', 'propose') "
                "AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq)",
                [event["memory_id"], event["seq"]],
            ).fetchone()
        return count > 0

    def batch_events(self, batch_id: str, actions: Sequence[str]) -> list[dict]:
        """The not-yet-undone decision events of one batch, newest first."""
        with self.read() as con:
            return rows(
                con,
                "SELECT * FROM memory_events e WHERE batch_id = $batch "
                "AND list_contains($actions, action) "
                "AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) "
                "ORDER BY seq DESC",
                {"batch": batch_id, "actions": list(actions)},
            )

    # -- context ----------------------------------------------------------------------

    # -- DataFrames ---------------------------------------------------------------------

    def dataframe(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        with self.read() as con:
            return con.execute(sql, params).df()

    def run_sql(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None, *, allow_write: bool
    ) -> pd.DataFrame:
        """Run a caller's SQL; unless ``allow_write``, only reads, and nothing persists.

        Read-only is the engine's doing: the query runs on a connection that opened the
        file read-only and may not touch files, extensions or settings. The statement-type
        check only gives the common mistake a clearer message.
        """
        statements = _statements(sql)
        if not allow_write:
            writes = [s.type.name for s in statements if s.type not in _READ_ONLY_STATEMENTS]
            if writes:
                raise QueryError(
                    f"Refusing a statement that could change the store ({', '.join(writes)}). "
                    "Queries are read-only so analysis cannot corrupt the audit log; pass "
                    "allow_write=True (in %%npc_sql: --write) if you really mean to write."
                )
            with self._lease.read_only_connection() as con, _query_errors(read_only=True):
                return _frame(con.execute(sql, params or ()))
        control = [s.query.strip() for s in statements if s.type in _TRANSACTION_CONTROL]
        if control:
            raise QueryError(
                f"Remove {control[0]!r}: npc_nb runs your statements in one transaction "
                "of its own, committed only if all of them succeed."
            )
        with _query_errors(read_only=False), self.write() as con:
            result = _frame(con.execute(sql, params or ()))
            self.bump_generation(con)  # the statements may have changed anything
            return result


def _statements(sql: object) -> list[Any]:
    if not isinstance(sql, str):
        raise QueryError(f"The query must be SQL text (a str), not {type(sql).__name__}.")
    with _query_errors(read_only=False):
        statements = duckdb.extract_statements(sql)
    if not statements:
        raise QueryError(
            "The query is empty; write a SQL statement (e.g. SELECT * FROM v_memories)."
        )
    return statements


@contextmanager
def _query_errors(*, read_only: bool) -> Iterator[None]:
    """A caller's SQL failing is a QueryError that says why (the engine's error kept)."""
    try:
        yield
    except duckdb.Error as exc:
        message = str(exc)
        first = message.splitlines()[0]
        if read_only and isinstance(exc, duckdb.PermissionException | duckdb.InvalidInputException):
            raise QueryError(
                f"Refused on the read-only query path: {first}. Queries are read-only (no "
                "files, extensions, settings or writes); pass allow_write=True (in "
                "%%npc_sql: --write) if you really mean to change the store."
            ) from exc
        raise QueryError(f"The query failed: {message}") from exc


def _frame(cursor: Connection | None) -> pd.DataFrame:
    """A result as a DataFrame; a statement without a result gives an empty one."""
    return cursor.df() if cursor is not None and cursor.description else pd.DataFrame()
