"""One DuckDB file with the npc_nb schema: ``FileStore``, the embedded backend of the
store contract (``contract.Store``): connections through a lease, transactions, the
decision generation.

A project has two stores: its own file (npc, team and project scopes) and the user's
file (global scope). Callers get plain dicts and DataFrames back, never live relations,
so no result keeps the file lock (``lease``). Writes happen inside ``write()``, one
transaction: a status change and its audit event commit together or not at all. A
damaged, unreadable or full file is a StoreError that names it (``faults``).

Nothing is created until something is written: while the file does not exist, reads
are served by an empty store in memory (``empty``), and the first ``write()`` (or
``create()``) makes the folder, the file and its schema.
"""

from __future__ import annotations

import contextlib
import os
import socket
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pandas as pd

from ..._foundations.locations import make_private, make_wal_private, store_path
from ..._foundations.settings import Settings
from ...errors import StoreError
from ..contract import Connection, Store, scalar, typed_frame
from ..generation import DECISION_SQL, decision_params, rewrite_sql
from ..memories.known_rows import KnownRows
from ..notices import DecisionNotice
from ..schema.migrations import apply_migrations
from .empty import empty_read_only, empty_store
from .faults import STORAGE_ERRORS, is_storage_fault, storage_fault, write_fault
from .lease import ConnectionLease

__all__ = ["FileStore"]


class FileStore(Store):
    """One DuckDB file with the npc_nb schema, opened on demand and released when idle.

    Use ``FileStore.shared``: one store (one lease, one connection) per file per process, so
    every Project and thread in a kernel agrees on what this process has written.
    """

    _shared: ClassVar[weakref.WeakValueDictionary[Path, FileStore]] = weakref.WeakValueDictionary()
    #: Whether a write transaction has the store to itself: DuckDB lets one process
    #: hold the file and the lease one thread at a time use it, so a row read inside a
    #: transaction stays as read until it ends.
    sole_writer: ClassVar[bool] = True

    @classmethod
    def shared(cls, folder: Path, settings: Settings) -> FileStore:
        """This process's Store for ``folder``; the latest opener's timeouts apply."""
        path = store_path(folder).absolute()
        with cls._shared_lock:
            store = cls._shared.get(path)
            if store is None:
                store = cls._shared[path] = cls(folder, settings)
            store.configure(settings)
            return store

    def __init__(self, folder: Path, settings: Settings) -> None:
        self.folder = folder
        self.path = store_path(folder)
        # The decision generation as this process last saw it. None whenever the file
        # was closed, since another process may have written while it was.
        self._generation: int | None = None
        self.connections = 0  # how many times the file was (re)opened by this process
        self.memory_inserts = 0  # memories this process inserted (indexes look again)
        self.commits = 0  # write transactions this process committed
        self.known = KnownRows()
        # Whether a cache read the decision generation since it last moved: until one
        # does, the token in the file is still one nobody has seen (``bump_generation``).
        self._generation_read = False
        self._created = False  # see ``exists``
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
        """Whether the file has been created (by this process or another). Once it has,
        it stays: a file removed meanwhile is made again by the next use, as before."""
        if not self._created:
            self._created = self.path.exists()
        return self._created

    def release(self) -> None:
        """Close the file now so another process can take the lock at once."""
        self._lease.release()

    def _prepare(self, con: Connection) -> None:
        make_private(self.folder)  # the file may have just been created (umask mode)
        self._generation = None
        if self.known is not None:
            self.known.clear()  # another process may have written while it was closed
        self.connections += 1  # the file may have changed while it was closed
        con.execute("SET TimeZone = 'UTC'")
        # On every (re)connect: another process, maybe a newer npc_nb, may have migrated.
        apply_migrations(con)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection for reading: the file's, or while it does not exist an empty
        store's (``empty``), which creates nothing."""
        if not self.exists:
            with empty_store() as con:
                yield con
            return
        with self._file() as con:
            yield con

    @contextmanager
    def _file(self) -> Iterator[Connection]:
        """The file's connection, the folder and the file created if need be."""
        try:
            with self._lease.connection() as con:
                self._created = True
                yield con
        except STORAGE_ERRORS as exc:
            if not is_storage_fault(exc, self.path):
                raise
            raise self._fault(exc) from exc

    def _fault(self, exc: Exception) -> StoreError:
        """A fault of the file (``faults``) met by a statement, as a StoreError; the
        file is let go, so the next use opens it again (a copy put back, say)."""
        self._lease.release()  # closes only when no outer use still holds it
        return storage_fault(self.path, exc, doing="read")

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One transaction: everything inside commits together or not at all. The first
        one creates the store."""
        with self._file() as con:
            con.execute("BEGIN TRANSACTION")
            self._writes += 1
            try:
                yield con
                con.execute("COMMIT")
                self.commits += 1
                make_wal_private(self.folder)  # a new write-ahead log gets the umask's mode
            except STORAGE_ERRORS as exc:
                self._abandon(con)
                raise write_fault(self.path, exc) from exc
            except BaseException:
                self._abandon(con)
                raise
            finally:
                self._writes -= 1

    def _abandon(self, con: Connection) -> None:
        """Roll back; whatever this transaction bumped did not happen."""
        self._generation = None
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")

    def mark(self) -> tuple[int, int]:
        """Where this process's use of the store stands (``untouched_since``)."""
        return (self.connections, self.commits)

    def generation(self, con: Connection) -> int:
        """A token that changes with every decision (``generation`` tells what a change
        of it means to a cache). While this process holds the file no other process can
        write, so the token is read from the file only after a (re)connect.
        """
        if self._generation is None:
            value = scalar(con, "SELECT value FROM store_state WHERE key = 'decision_generation'")
            self._generation = int(value)
        self._generation_read = True
        return self._generation

    def bump_generation(self, con: Connection, *, rewrite: bool = False) -> None:
        """Move the token (``generation``): for a decision, or for a ``rewrite`` the
        audit log does not describe, after which every cache reloads.

        A decision's token need not move again while nobody has read it since it last
        moved (this process's caches read it through ``generation``; another process can
        read the file only after this one lets go of it, and the token is moved again
        after every reopen): a cache holding an older token brings itself up to date
        from the audit log, which has every decision since. That saves a decision in a
        run of review keys one statement.
        """
        if rewrite:
            if self.known is not None:
                self.known.clear()
        elif self._generation is not None and not self._generation_read:
            return
        sql, params = (rewrite_sql(), []) if rewrite else (DECISION_SQL, decision_params())
        self._generation = int(scalar(con, sql, params))
        self._generation_read = False

    def dataframe(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        with self.read() as con:
            return con.execute(sql, params).df()

    def table(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        """A record table for the API: like ``dataframe``, with one missing-value marker
        per kind of column, decided by the column's SQL type (``_foundations.tables``)."""
        with self.read() as con:
            return typed_frame(con, sql, params)

    @contextmanager
    def read_only(self) -> Iterator[Connection]:
        """A connection of its own that cannot change anything (a caller's SQL); while
        the file does not exist, an empty store of its own (``empty``)."""
        if not self.exists:
            with empty_read_only() as con:
                yield con
            return
        with self._lease.read_only_connection() as con:
            try:
                yield con
            except STORAGE_ERRORS as exc:
                if not is_storage_fault(exc, self.path):
                    raise
                raise self._fault(exc) from exc

    @property
    def engine_errors(self) -> tuple[type[Exception], ...]:
        """The errors the engine raises for a failing statement (a caller's SQL)."""
        return (duckdb.Error,)

    def vet_read_only(self, con: Connection, statements: Sequence[Any]) -> None:
        """Refuse (QueryError) read-only ``statements`` that could still act through
        ``con``. Nothing to refuse here: the file's read-only connection refuses it all."""

    def default_actor(self) -> str | None:
        """Who a decision is recorded for when no reviewer is configured (None: the OS
        user; a shared store answers with the database role)."""
        return None

    def announce(self, con: Connection, notice: DecisionNotice) -> None:
        """Tell other processes, when ``con``'s transaction commits, that a status
        changed. The embedded file needs no message: while this process holds the file
        nobody else writes, and the generation is reread after every reconnect."""

    def subscribe(self, callback: Callable[[DecisionNotice], None]) -> None:
        """Call ``callback`` (held weakly, from another thread) with each decision made
        in another process. The embedded store has none to report (see ``announce``)."""

    def alerts(self) -> list[str]:
        """What the user should know about this store now (``%npc_status``): nothing,
        for the embedded file."""
        return []

    def hold_decisions(self, con: Connection) -> None:
        """Keep every decision from committing until ``con``'s transaction ends: a
        write transaction has the file to itself already."""

    def lock_text(self, con: Connection, digest: str) -> None:
        """Serialise proposals of the same text until ``con``'s transaction ends: the
        file lock already does, here."""

    def lock_memory(self, con: Connection, memory_id: str) -> None:
        """Serialise the votes and decisions on one memory until ``con``'s transaction
        ends: the file lock already does, here (one process writes at a time)."""

    @contextmanager
    def claiming(self, owner: str) -> Iterator[None]:
        """Around claiming and running jobs as ``owner`` (``host:pid``), so others can
        tell it is alive: nothing to do here, a claimer is known by its process id."""
        yield

    def claimant_alive(self, owner: str) -> bool:
        """Whether the claimer of a running job still lives. On a file only this host's
        processes can be checked; a claimer on another machine counts as alive."""
        host, _, pid = owner.rpartition(":")
        if host != socket.gethostname() or not pid.isdigit():
            return True
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    @contextmanager
    def analysis(self) -> Iterator[Connection]:
        """A DuckDB connection for npc_nb's own analytical reads (registered frames,
        relations, exports): here, the held connection itself."""
        with self.read() as con:
            yield con

    def configure(self, settings: Settings) -> None:
        """Apply ``settings``' lock timeout and idle release to the running lease."""
        self._lease.lock_timeout = settings.lock_timeout
        self._lease.idle_release = settings.idle_release
