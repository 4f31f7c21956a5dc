"""A job claimer's presence on the PostgreSQL store: while a process claims and runs
extraction jobs, it holds a session-level advisory lock named after its claim on a
connection of its own. A claimer on any machine is alive exactly while the server holds
its lock, and a killed process's session (and lock) ends with it: no clock, no lease.

The connection is opened on first use, checked before each later use and opened again
if the server dropped it (a restart), and closed when the last claimer of the process
is done. Any role may take any advisory lock, so the connection waits ``lock_timeout``
at most for it: a lock someone else holds is a ``StoreError``, never a hang.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg

from ...errors import StoreError

__all__ = ["Presence"]


class Presence:
    """One process's presence lock on one store (see the module docstring)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection],
        error: Callable[[Exception], StoreError],
    ) -> None:
        self._connect, self._error = connect, error
        self._connection: psycopg.Connection | None = None
        self._holders = 0
        self._lock = threading.Lock()

    @contextmanager
    def held(self, key: str) -> Iterator[None]:
        """Hold the session lock ``key`` (taken on first use) until the block ends."""
        with self._lock:
            if self._connection is not None:
                try:
                    self._connection.execute("SELECT 1")
                except psycopg.Error:
                    self._drop()
            if self._connection is None:
                self._connection = self._take(key)
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    self._drop()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _take(self, key: str) -> psycopg.Connection:
        try:
            connection = self._connect()
        except psycopg.Error as exc:
            raise self._error(exc) from None
        try:
            connection.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [key])
        except psycopg.Error as exc:
            connection.close()
            raise self._error(exc) from None
        return connection

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
