"""The decision listener of a PostgreSQL store: LISTEN on a connection of its own.

Every decision transaction sends ``pg_notify`` on the project's channel; PostgreSQL
delivers it only when that transaction commits. One daemon thread per store blocks on
its own autocommit connection until a notice arrives (no query runs while it waits),
and hands the store every notice received by then as one batch, so a burst (an
approve-all elsewhere) is checked against the store in one read, not one per notice.
If the connection drops, the thread reconnects with a growing pause and subscribes
again; having been deaf for a while it then reports that anything may have changed
(``on_subscribed``), so nothing missed stays stale.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg
from psycopg import sql

from ..._foundations.redact import url_secrets
from ..._foundations.store_url import redact_text
from ..notices import DecisionNotice

__all__ = ["DecisionListener", "channel_for"]

_log = logging.getLogger("npc_nb")
#: How long one wait for notices lasts before the thread looks whether to stop.
_WAKE = 1.0
#: Pauses between reconnection attempts, growing to the last.
_RETRY = (0.2, 0.5, 1.0, 2.0, 5.0)
_CONNECT_TIMEOUT = 5


def channel_for(schema: str) -> str:
    """The notification channel of a project's schema (a PostgreSQL name: 63 bytes)."""
    return f"npc_nb.{schema}"[:63]


class DecisionListener:
    """LISTEN for one schema's decisions on a dedicated connection, in a daemon thread."""

    def __init__(
        self,
        url: str,
        schema: str,
        *,
        on_notices: Callable[[list[DecisionNotice]], None],
        on_subscribed: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        self.url, self.channel = url, channel_for(schema)
        self._on_notices, self._on_subscribed, self._on_lost = on_notices, on_subscribed, on_lost
        self._stop = threading.Event()
        self._subscribed = threading.Event()
        self.reconnects = 0  # how many times the connection was lost and made again
        self._thread = threading.Thread(
            target=self._run, name=f"npc_nb-listen-{schema}", daemon=True
        )
        self._thread.start()

    @property
    def subscribed(self) -> bool:
        """Whether every decision committed from now on will be heard."""
        return self._subscribed.is_set()

    def wait_subscribed(self, timeout: float) -> bool:
        return self._subscribed.wait(timeout)

    def stop(self) -> None:
        """Stop listening; the thread ends (closing its connection) within ``_WAKE``."""
        self._stop.set()
        self._subscribed.clear()

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self.url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT
                ) as con:
                    con.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    self._subscribed.set()
                    failures = 0
                    self._on_subscribed()  # deaf until now: anything may have changed
                    while not self._stop.is_set():
                        batch = _received(con)
                        if batch:
                            self._on_notices(batch)
            except psycopg.Error as exc:
                if self._subscribed.is_set():
                    self.reconnects += 1
                self._subscribed.clear()
                self._on_lost()
                if self._stop.is_set():
                    return
                _log.info(
                    "npc_nb: decision listener lost its connection (%s); retrying",
                    redact_text(str(exc), *url_secrets(self.url)),
                )
                self._stop.wait(_RETRY[min(failures, len(_RETRY) - 1)])
                failures += 1
            except Exception:  # never die silently: the store falls back to asking
                self._subscribed.clear()
                self._on_lost()
                _log.exception("npc_nb: decision listener failed; retrying")
                self._stop.wait(_RETRY[-1])
        self._subscribed.clear()


def _received(con: psycopg.Connection) -> list[DecisionNotice]:
    """The notices that arrive within ``_WAKE`` seconds: waits for the first, then takes
    every other one already received (a burst arrives together), without waiting."""
    first = list(con.notifies(timeout=_WAKE, stop_after=1))
    if not first:
        return []
    rest = list(con.notifies(timeout=0))
    return [DecisionNotice.from_payload(notify.payload) for notify in first + rest]
