"""The store's generation token, and what a change of it tells a cache.

One BIGINT in ``store_state`` (key ``decision_generation``), written in the transaction
of every change a cache could care about:

- the low 32 bits change, to fresh random bits, with every **decision**. Each decision
  is in the audit log, so a cache that saw the same epoch can bring itself up to date
  from the events since its watermark;
- the high bits are the store's **epoch**. Anything the audit log does not describe (SQL
  run with ``--write``) starts a new random epoch, and every cache reloads. A store
  never decided in since it was created has epoch 0, which no cache trusts, so a store
  file deleted and created again is never patched from the old file's log. A project
  moved in brings its token along (``moving`` copies every value as it was): an
  epoch of its own, unknown to any cache of the store it replaces.

Random bits, never counts: no older state (a rolled-back transaction, a restored or
recreated file) can reproduce a token a cache has seen.
"""

from __future__ import annotations

import secrets
from typing import Any

__all__ = ["DECISION_SQL", "decision_params", "epoch", "rewrite_sql", "same_epoch"]

_DECISION_BITS = 32
_EPOCH_LIMIT = 2**30  # epoch << 32 stays inside a signed BIGINT

#: Keeps the epoch (starting one if there is none yet), changes the decision bits.
DECISION_SQL = (
    "UPDATE store_state SET value = ((CASE WHEN (value >> 32) = 0 THEN ? ELSE (value >> 32) END)"
    " << 32) | ? WHERE key = 'decision_generation' RETURNING value"
)


def _new_epoch() -> int:
    return 1 + secrets.randbelow(_EPOCH_LIMIT - 1)


def decision_params() -> list[Any]:
    return [_new_epoch(), secrets.randbits(_DECISION_BITS)]


def rewrite_sql() -> str:
    """Starts a new epoch: every cache reloads. (The token is a number made here, so the
    statement runs as is, whatever the driver's parameter style.)"""
    token = (_new_epoch() << _DECISION_BITS) | secrets.randbits(_DECISION_BITS)
    return (
        f"UPDATE store_state SET value = {token} WHERE key = 'decision_generation' RETURNING value"
    )


def epoch(token: int) -> int:
    return token >> _DECISION_BITS


def same_epoch(seen: int, now: int) -> bool:
    """Whether every change between the two tokens is in the audit log."""
    return epoch(seen) != 0 and epoch(seen) == epoch(now)
