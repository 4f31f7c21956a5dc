"""What a failing operation on the PostgreSQL store tells its user: each psycopg error
becomes a ``StoreError`` saying what happened to the operation (nothing of it was saved)
and what to do next. Only ``database`` imports this module, so psycopg is needed only
when a store URL is configured; a password in an engine's message is never repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg_pool import PoolTimeout

from ..._foundations.store_url import redact_text
from ...errors import StoreError

__all__ = ["StoreFacts", "first_line", "store_error"]

#: The server shut down, crashed or is starting: the session is gone.
_SERVER_GONE = (
    psycopg.errors.AdminShutdown,
    psycopg.errors.CrashShutdown,
    psycopg.errors.CannotConnectNow,
)


@dataclass(frozen=True)
class StoreFacts:
    """What a message names: the store (URL redacted, schema), the role, the timeouts."""

    path: str
    role: str
    pool_timeout: float
    lock_timeout: float
    #: The store URL's own secret values: libpq may quote a piece of a password (one
    #: with an unencoded ``@``) as a host name, where no URL shape gives it away.
    secrets: tuple[str, ...] = ()


def first_line(exc: BaseException, secrets: Sequence[str] = ()) -> str:
    """The driver's message, one line, without any credential (``_foundations.redact``)."""
    text = str(exc).strip()
    return redact_text(text.splitlines()[0] if text else type(exc).__name__, *secrets)


def store_error(exc: Exception, store: StoreFacts) -> StoreError:
    """The ``StoreError`` to raise for ``exc``, raised by an operation on ``store``."""
    reason = first_line(exc, store.secrets)
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return StoreError(
            f"The database role {store.role!r} may not do this on {store.path}: "
            f"{reason}. Nothing was written. Reader roles may only query; ask "
            "the lab's database owner for a reviewer role to decide."
        )
    if isinstance(exc, psycopg.errors.CheckViolation):
        return StoreError(f"The store refused a value: {reason}. Nothing was written.")
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return StoreError(
            f"Waited {store.lock_timeout:g} s (the lock_timeout setting) for a lock on "
            f"{store.path} that another session holds. Nothing of this operation was "
            "saved; run it again. If it persists, find the session holding it (a client "
            "in a long transaction) in pg_stat_activity and end it."
        )
    if isinstance(exc, PoolTimeout):
        return StoreError(
            f"No connection to the PostgreSQL server of {store.path} within "
            f"{store.pool_timeout:g} s: is it running and reachable? Nothing of this operation "
            "was saved; run it again once the server is back (the store reconnects by itself)."
        )
    if isinstance(exc, _SERVER_GONE) or type(exc) is psycopg.OperationalError:
        return StoreError(
            f"The PostgreSQL server of {store.path} went away during this operation (it "
            f"restarted, or the connection dropped): {reason}. Nothing of this "
            "operation was saved; run it again: the next operation reconnects by itself."
        )
    return StoreError(
        f"The PostgreSQL store {store.path} failed: {reason}. Nothing of this "
        "operation was saved; everything saved before is intact."
    )
