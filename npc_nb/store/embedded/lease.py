"""A leased DuckDB connection: held while busy, released when idle, retried when locked.

DuckDB lets one process hold a file read-write, and researchers run several kernels on
one project. So no kernel may keep the lock while another waits for it, yet opening a
connection per operation costs ~14 ms against ~1-3 ms on a held one, and closing a
file after a write costs a checkpoint that grows with the store (a third of a second
at 100,000 memories). A process that finds the file locked says so by touching a file
beside it (``<store>.waiting``) on every retry, its *knock*. The lease keeps the
connection through a burst of operations; a reaper thread closes it once it has been
idle for ``idle_release`` seconds and somebody knocked, or once it has been idle for
``UNASKED_HOLD`` seconds (for programs that do not knock, such as the DuckDB shell).
So a reviewer reading a card never waits for a checkpoint, and a waiting kernel gets
in within ``idle_release`` plus the close. A lock held past ``lock_timeout`` raises
StoreLockedError; any other failure to open the file (or to migrate it, which reads
what its header does not) is a StoreError that says what to do (``faults``).

Every result is materialised before the lease is returned: a live DuckDB relation keeps
the file lock even after its connection object is dropped.

Read-only queries (a researcher's ``%npc_sql``) never run on the held read-write
connection: they get a connection of their own, with the file opened read-only and the
engine told to refuse every file access, extension and setting change
(``READ_ONLY_CONFIG``). DuckDB opens a file with one configuration per process, so the
held connection is released first; the lease's mutex keeps every other use out meanwhile.

Fairness: DuckDB's lock is not a queue, so a process that is never idle would keep it
forever. A lease held for more than ``MAX_CONTINUOUS_HOLD`` seconds that hears a knock
lets go between two operations and pauses briefly before reconnecting, and the waiting
process, retrying every few tens of milliseconds, takes its turn.

Within a process, background work goes behind the reviewer and the cell. A thread
marked with ``in_background()`` (``store.background``: the extraction worker, the review
panel's look-ahead) starts no new use of the connection while another thread waits for
it: a cell's next statement waits for at most one background statement, not for a
background job's whole run of them (a lock released and taken again at once by the same
thread is seldom handed over).
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..._foundations.locations import ensure_store_dir
from ...errors import StoreError, StoreLockedError
from ..background import background_work
from .faults import storage_fault

__all__ = ["ConnectionLease"]

_LOCK_MESSAGES = ("Could not set lock", "Conflicting lock")
_FIRST_BACKOFF = 0.005
#: A waiting process retries at least this often, so it sees a yield window.
_MAX_BACKOFF = 0.04
#: The engine, not a parser, keeps a read-only query read-only: no file written or read
#: outside the store, no ATTACH, INSTALL or LOAD, no setting changed, nothing in the file.
READ_ONLY_CONFIG = {
    "access_mode": "READ_ONLY",
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}
_READ_WRITE_CONFIG = {"autoinstall_known_extensions": False}
#: Longest a busy process keeps the file before it lets others take a turn (seconds).
MAX_CONTINUOUS_HOLD = 1.0
YIELD_AFTER_HOLD = 0.06
#: Longest an idle process keeps the file when nobody knocks (seconds).
UNASKED_HOLD = 30.0
#: How often an idle holder looks for a knock (seconds).
_KNOCK_POLL = 0.05


class ConnectionLease:
    """Serialises access to one DuckDB file for this process and releases it when idle."""

    def __init__(
        self,
        path: Path,
        *,
        lock_timeout: float,
        idle_release: float,
        on_connect: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    ) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self.idle_release = idle_release
        self._on_connect = on_connect
        self._mutex = threading.RLock()
        self._wake = threading.Condition(self._mutex)
        # Foreground threads waiting for the mutex, and background ones waiting for them.
        self._queue = threading.Condition(threading.Lock())
        self._foreground_waiting = 0
        self._held = threading.local()  # how deep this thread is in its own uses
        self._con: duckdb.DuckDBPyConnection | None = None
        self._last_used = 0.0
        self._depth = 0
        self._reaper: threading.Thread | None = None
        self._held_since = 0.0
        self._connected_at = 0.0  # wall clock, to compare with the knock file's time
        self._knock = self.path.with_name(self.path.name + ".waiting")
        self._yield_until = 0.0
        _open_leases.add(self)

    @contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """The held connection, opened (with lock retries) if it was released."""
        with self._taken():
            if self._con is None:
                if (pause := self._yield_until - time.monotonic()) > 0:
                    time.sleep(pause)  # let a waiting process take its turn
                self._con = self._connect_with_retry(_READ_WRITE_CONFIG)
                self._held_since, self._connected_at = time.monotonic(), time.time()
            self._depth += 1
            try:
                yield self._con
            finally:
                self._depth -= 1
                self._last_used = time.monotonic()
                self._after_use()

    @property
    def foreground_waiting(self) -> int:
        """How many threads not marked ``in_background`` wait for the connection now."""
        with self._queue:
            return self._foreground_waiting

    @contextmanager
    def _taken(self) -> Iterator[None]:
        """The mutex, held for one use: background work (``in_background``) waits while
        a foreground thread waits, unless it is already inside a use of its own."""
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._acquire(background=background_work())
        else:
            self._mutex.acquire()
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            self._mutex.release()

    def _acquire(self, *, background: bool) -> None:
        if background:
            with self._queue:
                while self._foreground_waiting:
                    self._queue.wait()
            self._mutex.acquire()
            return
        if self._mutex.acquire(blocking=False):
            return
        with self._queue:
            self._foreground_waiting += 1
        try:
            self._mutex.acquire()
        finally:
            with self._queue:
                self._foreground_waiting -= 1
                self._queue.notify_all()

    @contextmanager
    def read_only_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of its own that cannot change anything (see ``READ_ONLY_CONFIG``)."""
        with self._mutex:
            if self._depth:
                raise StoreError("A read-only query cannot run inside another store operation.")
            self.release()
            con = self._connect_with_retry(READ_ONLY_CONFIG, prepare=False)
            try:
                yield con
            finally:
                con.close()

    def release(self) -> None:
        """Close the connection now (it reopens on next use)."""
        with self._mutex:
            if self._con is not None and self._depth == 0:
                con, self._con = self._con, None
                con.close()

    def _after_use(self) -> None:
        if self._depth:
            return  # still inside an outer use
        if self.idle_release == 0:
            self.release()
            return
        if time.monotonic() - self._held_since > MAX_CONTINUOUS_HOLD and self._knocked():
            # A busy kernel must not starve the others: release, and pause briefly
            # before reconnecting so the process retrying the lock gets in.
            self.release()
            self._yield_until = time.monotonic() + YIELD_AFTER_HOLD
            return
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(
                target=self._reap, name=f"npc_nb-release-{self.path.name}", daemon=True
            )
            self._reaper.start()
        else:
            self._wake.notify()

    def _knocked(self) -> bool:
        """Whether another process found the file locked since this one connected."""
        try:
            return self._knock.stat().st_mtime >= self._connected_at
        except OSError:
            return False

    def _reap(self) -> None:
        with self._mutex:
            while self._con is not None:
                idle_for = time.monotonic() - self._last_used
                if idle_for < self.idle_release or self._depth:
                    wait = self.idle_release - idle_for
                elif idle_for >= UNASKED_HOLD or self._knocked():
                    self.release()
                    break
                else:
                    wait = min(_KNOCK_POLL, UNASKED_HOLD - idle_for)
                self._wake.wait(timeout=max(wait, 0.001))
            # Cleared under the mutex, so a use after this point starts a new reaper
            # instead of notifying one that is about to exit.
            self._reaper = None

    def _connect_with_retry(
        self, config: Mapping[str, Any], *, prepare: bool = True
    ) -> duckdb.DuckDBPyConnection:
        ensure_store_dir(self.path.parent)  # checked on every (re)connect
        deadline = time.monotonic() + self.lock_timeout
        backoff = _FIRST_BACKOFF
        while True:
            try:
                con = duckdb.connect(str(self.path), config=dict(config))
            except duckdb.Error as exc:
                if not any(m in str(exc) for m in _LOCK_MESSAGES):
                    raise storage_fault(self.path, exc) from exc
                if time.monotonic() + backoff > deadline:
                    raise StoreLockedError(
                        _locked_message(self.path, self.lock_timeout, exc)
                    ) from exc
                with contextlib.suppress(OSError):  # a read-only folder: wait for idle
                    self._knock.touch()
                time.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF)
                continue
            if prepare and self._on_connect is not None:
                try:
                    self._on_connect(con)
                except duckdb.Error as exc:  # the migrations read what the header does not
                    con.close()
                    raise storage_fault(self.path, exc) from exc
                except BaseException:
                    con.close()  # never keep the lock after a failed open
                    raise
            return con


def _locked_message(path: Path, timeout: float, exc: Exception) -> str:
    holder = (
        str(exc).split("Conflicting lock is held in", 1)[-1].strip()
        if "held in" in str(exc)
        else "another process"
    )
    return (
        f"The store {path} stayed locked for {timeout:g} s (held by {holder}). Another "
        "kernel or program is writing to it; wait and retry, close that program, or raise "
        "NPC_NB_LOCK_TIMEOUT."
    )


_open_leases: weakref.WeakSet[ConnectionLease] = weakref.WeakSet()


@atexit.register
def _release_all() -> None:
    for lease in list(_open_leases):
        lease.release()
