"""A project's store on PostgreSQL: the store contract (``contract.Store``), for a lab
whose reviewers share one memory across machines.

The operational path (candidates, decisions, context, the extraction queue) runs on a
psycopg 3 connection pool, through the dialect seam of ``dialect`` so every query module
is shared with the DuckDB store. Each ``write()`` is one transaction at READ COMMITTED:
a decision is an UPDATE conditional on the status the reviewer saw, so of two reviewers
racing exactly one changes the row and the other matches nothing (the second UPDATE
waits for the first to commit and re-reads the row) and gets ``AlreadyDecidedError``.
Proposals of the same normalised text serialise on the row of its hash in the
project's ``proposal_locks`` (``lock_text``), so two kernels extracting it at once queue
it once. A row lock, not an advisory lock: any role may take any advisory lock, but a
row lock needs the UPDATE privilege, so a reader role cannot hold a proposal up. Every
pooled session waits at most ``lock_timeout`` seconds (the setting) for any lock, so a
lock a stuck session keeps becomes a ``StoreError`` in that time, never a hang.

Other clients write at any moment. Every decision transaction announces itself with
``pg_notify`` (delivered on commit only: memory id, new status, actor), and a listener
on a connection of its own (``listener``) hears it: the decision generation that keys
the caches is then kept in memory and dropped on each notice, and open review sessions
are told which card went. While the listener is not subscribed (starting, or
reconnecting after a dropped connection) the generation is read on every ask, as
without it; on subscribing again it assumes it missed notices and drops everything
once. The neighbour index looks for new memories on every use. Analytical reads (``dataframe``,
``read_only``, ``analysis``) go through DuckDB with the schema attached read-only
(``attach``).

A notice is a hint, never a fact: any role that may LISTEN may also NOTIFY, so reviews
hear what the store shows of the memories a batch of notices names (``notice_checks``).

psycopg is imported only here (and by ``faults``, which turns its errors into
messages, and the listener), and this module only when a store URL is configured, so
the embedded default needs none of it.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, cast

import duckdb
import pandas as pd

from ..._foundations.redact import url_secrets
from ..._foundations.results import RoleAccess
from ..._foundations.settings import Settings
from ..._foundations.store_url import project_name, redact
from ...errors import StoreError
from ..contract import Connection, Store, typed_frame
from ..generation import DECISION_SQL, decision_params, rewrite_sql
from ..notices import EVERYTHING, DecisionNotice, Subscribers
from ..schema.pg_migrations import apply_pg_migrations, lock_timeout_setting
from .attach import connect as analysis_connection
from .dialect import PgConnection
from .listener import DecisionListener, channel_for
from .notice_checks import NoticeChecks
from .read_only import refuse_server_sql

try:
    import psycopg
    from psycopg_pool import ConnectionPool

    from . import write_sql
    from .faults import StoreFacts, first_line, store_error
    from .presence import Presence
    from .roles import set_access
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise StoreError(
        "A PostgreSQL store needs psycopg 3 and psycopg-pool: pip install 'npc_nb[postgres]'."
    ) from exc

__all__ = ["PostgresStore"]

_POOL_SIZE = 4
#: Seconds to wait for the server to answer a new connection (libpq's connect_timeout).
CONNECT_TIMEOUT = 3
#: Seconds an operation waits for a working connection (server down, pool exhausted).
POOL_TIMEOUT = 5.0
#: TCP keepalives both ways, so a peer that vanished without closing (a crashed machine,
#: a dropped network) is noticed in about a minute, not TCP's two hours: libpq's side
#: (a query waiting on a dead server fails) and the server's (a dead client's session,
#: its locks and its claim on a job end).
_KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
}
_SERVER_KEEPALIVES = (
    "-c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3"
)


class PostgresStore(Store):
    """One project's schema in a PostgreSQL database (see the module docstring).

    Use ``PostgresStore.shared``: one pool per database and schema per process.
    """

    _pg_shared: ClassVar[weakref.WeakValueDictionary[tuple[str, str], PostgresStore]] = (
        weakref.WeakValueDictionary()
    )
    sole_writer: ClassVar[bool] = False  # other clients write while a transaction runs
    writes_on_server: ClassVar[bool] = True  # a caller's write SQL is PostgreSQL's

    @classmethod
    def shared_pg(
        cls,
        url: str,
        schema: str,
        settings: Settings,
        project: str | None = None,
        *,
        create: bool = True,
    ) -> PostgresStore:
        with cls._shared_lock:
            store = cls._pg_shared.get((url, schema))
            if store is None:
                store = cls(url, schema, settings, project, create=create)
                cls._pg_shared[(url, schema)] = store
            else:
                store._check_access()
            store.configure(settings)
            return store

    def _check_access(self) -> None:
        """A store kept from an earlier open is asked again whether this role may still
        use the schema: its grants may have been revoked since (a revoked member must
        not open the project, whether or not an earlier store of theirs is still alive)."""
        try:
            with self._pool.connection() as raw:
                raw.execute("SELECT 1 FROM _migrations LIMIT 1")
        except psycopg.Error as exc:
            raise self._cannot_open(exc) from None

    def _cannot_open(self, exc: psycopg.Error) -> StoreError:
        reason = first_line(exc, url_secrets(self.url))
        return StoreError(
            f"Cannot open the PostgreSQL store {self.path}: {reason}. Is the "
            "server running and reachable at this host and port, and may this role "
            "connect and use the project's schema?"
        )

    def __init__(
        self,
        url: str,
        schema: str,
        settings: Settings,
        project: str | None = None,
        *,
        create: bool = True,
    ) -> None:
        """``project``: the name ``schema`` must record (``pg_project``); None for a
        schema opened by its name alone. Unless ``create``, a schema that does not exist
        is refused, never created (a command that only reads or reviews)."""
        self.url, self.schema = url, schema
        self.path = f"{redact(url)} (schema {schema})"  # type: ignore[assignment]
        self.role = "?"
        # Every session's default; a later setting applies from the next write on.
        self.lock_timeout = self._session_lock_timeout = settings.lock_timeout
        self.memory_inserts = 0
        self._reads = 0
        self._held = threading.local()
        self._analysis_lock = threading.Lock()
        self._analysis: duckdb.DuckDBPyConnection | None = None
        options = {
            "autocommit": True,
            "cursor_factory": psycopg.ClientCursor,
            "options": f"-c search_path={schema} -c TimeZone=UTC {_SERVER_KEEPALIVES} "
            f"-c lock_timeout={lock_timeout_setting(self.lock_timeout)}",
            "connect_timeout": CONNECT_TIMEOUT,
            **_KEEPALIVES,
        }
        try:  # one direct connection first: an unreachable server fails at once
            with psycopg.connect(url, **options) as raw:
                apply_pg_migrations(
                    raw,
                    schema,
                    project=None if project is None else project_name(project),
                    lock_timeout=self.lock_timeout,
                    create=create,
                    where=redact(url),
                )
                self.role, self._owns = _who_connects(raw, schema)
        except psycopg.Error as exc:
            raise self._cannot_open(exc) from None
        # ``check``: a connection the server dropped (a restart) is discarded, never
        # handed out, so the operation after a restart reconnects by itself.
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=_POOL_SIZE,
            kwargs=options,
            timeout=POOL_TIMEOUT,
            check=ConnectionPool.check_connection,
            open=False,
            name=f"npc_nb-{schema}",
        )
        self._pool.open(wait=False)
        self._presence = Presence(self._presence_connection, self._error)  # see claiming
        self._subscribers = Subscribers()
        self._checks = NoticeChecks()
        self._generation_lock = threading.Lock()
        self._generation: int | None = None  # kept only while the listener hears
        self._epoch = 0  # moves whenever the kept generation may be stale
        self.generation_reads = 0  # how often the generation came from the server
        # The listener's thread holds this store weakly: a store nobody uses any more
        # is collected, and its listener stops.
        me = weakref.ref(self)
        self._listener = DecisionListener(
            url,
            schema,
            on_notices=lambda notices: _call(me, PostgresStore._heard, notices),
            on_subscribed=lambda: _call(me, PostgresStore._heard, [EVERYTHING]),
            on_lost=lambda: _call(me, PostgresStore._forget_generation),
        )
        weakref.finalize(self, self._listener.stop)
        _open_stores.add(self)

    def __repr__(self) -> str:
        return f"PostgresStore({self.path!r})"

    @property
    def exists(self) -> bool:
        return True

    @property
    def connections(self) -> int:
        # Another client may have inserted at any moment: never "unchanged since".
        return self._reads

    @connections.setter
    def connections(self, value: int) -> None:
        self._reads = value

    @property
    def engine_errors(self) -> tuple[type[Exception], ...]:
        return (duckdb.Error, psycopg.Error)

    def default_actor(self) -> str | None:
        return self.role

    @property
    def owns_project(self) -> bool:
        return self._owns

    def release(self) -> None:
        """Nothing to let go of: the pool serves every kernel of this process."""

    def close(self) -> None:
        self._listener.stop()
        self._forget_generation()
        self._pool.close()
        self._presence.close()
        with self._analysis_lock:
            if self._analysis is not None:
                self._analysis.close()
                self._analysis = None

    @contextmanager
    def read(self) -> Iterator[Connection]:
        held = getattr(self._held, "con", None)
        if held is not None:  # inside this thread's read or write: the same connection
            yield held
            return
        self._reads += 1
        try:
            with self._pool.connection() as raw, self._holding(raw) as con:
                yield con
        except psycopg.Error as exc:
            raise self._error(exc) from None

    @contextmanager
    def _holding(self, raw: psycopg.Connection) -> Iterator[Connection]:
        """``raw`` as this thread's connection until the block ends (nested reads reuse it)."""
        con = PgConnection(raw)
        self._held.con = con
        try:
            yield cast(Connection, con)
        finally:
            self._held.con = None

    @contextmanager
    def write(self, *, reset_session: bool = False) -> Iterator[Connection]:
        """One transaction: everything inside commits together or not at all. With
        ``reset_session`` the session is reset afterwards (``DISCARD ALL``: settings back
        to the pool's own, roles, listens, prepared statements and temporary tables
        gone), for a transaction that ran a caller's SQL."""
        if getattr(self._held, "con", None) is not None:
            raise StoreError("A store write cannot start inside another store operation.")
        self._reads += 1
        try:
            with self._pool.connection() as raw:
                try:
                    with raw.transaction(), self._holding(raw) as con:
                        if self.lock_timeout != self._session_lock_timeout:  # changed since
                            con.execute(
                                "SELECT set_config('lock_timeout', ?, true)",
                                [lock_timeout_setting(self.lock_timeout)],
                            )
                        yield con
                finally:
                    if reset_session:
                        with contextlib.suppress(psycopg.Error):  # a broken one is dropped
                            raw.execute("DISCARD ALL")
        except psycopg.Error as exc:
            raise self._error(exc) from None
        finally:
            # This process's own change is visible at once, before its notice arrives.
            self._forget_generation()

    def run_writes(
        self, sql: str, params: Any, before: Callable[[Connection], None]
    ) -> pd.DataFrame:
        """A caller's write SQL, in PostgreSQL's dialect, run by the server as the
        connecting role (``write_sql``); ``before`` first, so that no ``SET`` of the
        caller's can redirect it. The server's warnings are told once it committed."""
        statements, values = write_sql.prepare(sql, params)
        with self.write(reset_session=True) as con:
            before(con)
            raw = cast(PgConnection, con).raw
            result, said = write_sql.run(raw, statements, values, url_secrets(self.url))
        for warning in said:
            warnings.warn(warning, UserWarning, stacklevel=4)
        return result

    def grant(self, role: str, level: str | None, *, project: str) -> RoleAccess:
        """Give ``role`` exactly ``level`` in this schema, as its owner (``roles``)."""
        with self.write() as con:
            return set_access(
                cast(PgConnection, con).raw, self.schema, role, level, project=project
            )

    def mark(self) -> tuple[int, int]:
        """Nothing to mark: other clients write at any time (``untouched_since`` is never
        true here)."""
        return (0, 0)

    def hold_decisions(self, con: Connection) -> None:
        """Take the row of the decision generation until this transaction ends: every
        decision updates it before it numbers its event, so one under way commits first
        (and is seen), and one that follows waits, numbered after what is read here."""
        con.execute("SELECT value FROM store_state WHERE key = 'decision_generation' FOR UPDATE")

    def lock_text(self, con: Connection, digest: str) -> None:
        """Serialise, until this transaction ends, every proposal of the same text in
        this project: take the row of ``digest`` in ``proposal_locks`` (inserted the
        first time). Waiting for another session's proposal of it is waiting for that
        transaction to end; a wait past ``lock_timeout`` is a StoreError saying so."""
        try:
            con.execute(
                "INSERT INTO proposal_locks (text_hash) VALUES (?) ON CONFLICT (text_hash) "
                "DO UPDATE SET text_hash = excluded.text_hash",
                [digest],
            )
        except psycopg.errors.LockNotAvailable:
            raise StoreError(
                f"Could not take the lock on this text's proposals in {self.path} within "
                f"{self.lock_timeout:g} s (the lock_timeout setting): another session is "
                "proposing the same text and its transaction has not ended. Nothing was "
                "saved; propose it again. If it persists, find that session (a client in "
                "a long transaction) in pg_stat_activity and end it."
            ) from None

    def lock_memory(self, con: Connection, memory_id: str) -> None:
        """Take the memory's row until this transaction ends (``SELECT ... FOR UPDATE``):
        a second vote on the card waits here for the first to commit, then reads its
        vote, so two last votes arriving at once cannot both see an unfinished card. The
        row lock needs the UPDATE privilege (a reviewer's, never a reader's); a wait past
        ``lock_timeout`` is a StoreError saying so."""
        try:
            con.execute("SELECT id FROM memories WHERE id = ? FOR UPDATE", [memory_id])
        except psycopg.errors.LockNotAvailable:
            raise StoreError(
                f"Could not take the lock on memory {memory_id} in {self.path} within "
                f"{self.lock_timeout:g} s (the lock_timeout setting): another session is "
                "deciding or voting on it and its transaction has not ended. Nothing was "
                "saved; try again. If it persists, find that session in pg_stat_activity "
                "and end it."
            ) from None

    @contextmanager
    def claiming(self, owner: str) -> Iterator[None]:
        """While jobs are claimed and run, hold a session lock named after ``owner`` on a
        connection of its own (``presence``)."""
        with self._presence.held(self._owner_key(owner)):
            yield

    def claimant_alive(self, owner: str) -> bool:
        """Whether the claimer of a running job still holds its session lock."""
        key = self._owner_key(owner)
        with self.read() as con:
            free = con.execute("SELECT pg_try_advisory_lock(hashtextextended(?, 0))", [key])
            if not free.fetchone()[0]:  # type: ignore[index]
                return True
            con.execute("SELECT pg_advisory_unlock(hashtextextended(?, 0))", [key])
        return False

    def _owner_key(self, owner: str) -> str:
        return f"npc_nb:worker:{self.schema}:{owner}"

    def _presence_connection(self) -> psycopg.Connection:
        lock_timeout = lock_timeout_setting(self.lock_timeout)
        return psycopg.connect(
            self.url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            options=f"{_SERVER_KEEPALIVES} -c lock_timeout={lock_timeout}",
            **_KEEPALIVES,
        )

    def generation(self, con: Connection) -> int:
        """Kept in memory while the listener hears every decision; otherwise read on
        every ask, since any client may have decided since."""
        with self._generation_lock:
            if self._generation is not None:
                return self._generation
            epoch = self._epoch
        found = con.execute(
            "SELECT value FROM store_state WHERE key = 'decision_generation'"
        ).fetchone()
        value = int(found[0]) if found else 0
        with self._generation_lock:
            self.generation_reads += 1
            # Keep it only if no notice arrived while it was read and one would be heard.
            if epoch == self._epoch and self._listener.subscribed:
                self._generation = value
        return value

    def announce(self, con: Connection, notice: DecisionNotice) -> None:
        """``pg_notify`` in the decision's transaction: sent when, and if, it commits."""
        con.execute("SELECT pg_notify(?, ?)", [channel_for(self.schema), notice.payload()])

    def subscribe(self, callback: Callable[[DecisionNotice], None]) -> None:
        self._subscribers.add(callback)

    @property
    def listening(self) -> bool:
        """Whether this process hears every decision committed from now on."""
        return self._listener.subscribed

    def wait_listening(self, timeout: float) -> bool:
        """Wait until the listener is subscribed (True), or ``timeout`` seconds."""
        return self._listener.wait_subscribed(timeout)

    def _forget_generation(self) -> None:
        with self._generation_lock:
            self._epoch += 1
            self._generation = None

    def _heard(self, notices: list[DecisionNotice]) -> None:
        """Notices are hints: the generation is read again (a forged one costs a read),
        and reviews hear only what the store shows of the memories named."""
        self._forget_generation()
        for notice in self._checks.confirm(self, notices):
            self._subscribers.tell(notice)

    @property
    def unconfirmed_notices(self) -> int:
        """Decision notices whose claim the store did not back (see ``notice_checks``)."""
        return self._checks.unconfirmed

    def alerts(self) -> list[str]:
        return self._checks.alerts(channel_for(self.schema))

    def bump_generation(self, con: Connection, *, rewrite: bool = False) -> None:
        sql, params = (rewrite_sql(), []) if rewrite else (DECISION_SQL, decision_params())
        con.execute(sql, params)

    def dataframe(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        with self.analysis() as con:
            return con.execute(sql, params).df()

    def table(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        """A record table for the API, read (in DuckDB's SQL) through the analysis path."""
        with self.analysis() as con:
            return typed_frame(con, sql, params)

    @contextmanager
    def analysis(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """npc_nb's own analytical reads: a DuckDB connection kept for this store."""
        with self._analysis_lock:
            if self._analysis is None:
                self._analysis = analysis_connection(self.url, self.schema, locked=False)
            yield self._analysis

    @contextmanager
    def read_only(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of its own that cannot change anything (a caller's SQL)."""
        con = analysis_connection(self.url, self.schema, locked=True)
        try:
            yield con
        finally:
            con.close()

    def vet_read_only(self, con: Connection, statements: Sequence[Any]) -> None:
        """No SQL of a caller's own reaches the server (``read_only``)."""
        refuse_server_sql(con, statements)

    def configure(self, settings: Settings) -> None:
        """How long to wait for a lock (``lock_timeout``); the release timeout concerns
        the embedded file only."""
        self.lock_timeout = settings.lock_timeout

    def copy_rows(
        self, con: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        """Many rows into ``table`` inside ``con``'s transaction, by ``COPY``."""
        listed = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
        raw = cast(PgConnection, con).raw
        with raw.cursor() as cursor, cursor.copy(f"COPY {table} ({listed}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def _error(self, exc: Exception) -> StoreError:
        return store_error(
            exc,
            StoreFacts(
                str(self.path),
                self.role,
                POOL_TIMEOUT,
                self.lock_timeout,
                tuple(url_secrets(self.url)),
            ),
        )


def _call(store: weakref.ref[PostgresStore], method: Callable[..., None], *args: Any) -> None:
    """Call ``method`` on the store, if it still exists."""
    found = store()
    if found is not None:
        method(found, *args)


_open_stores: weakref.WeakSet[PostgresStore] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for store in list(_open_stores):
        with contextlib.suppress(Exception):
            store.close()


def _who_connects(raw: psycopg.Connection, schema: str) -> tuple[str, bool]:
    """The authenticated role (``session_user``: a ``SET ROLE`` does not change who
    connected) and whether it owns the project's schema (or is a superuser)."""
    found = raw.execute(
        "SELECT session_user, coalesce((SELECT pg_has_role(session_user, nspowner, 'USAGE') "
        "FROM pg_namespace WHERE nspname = %s), false)",
        [schema],
    ).fetchone()
    assert found is not None  # a SELECT without FROM returns one row
    return str(found[0]), bool(found[1])
