"""SQL for ``model_recordings``: a model's reply kept under the fingerprint of the
request that produced it, and the first reply of a fingerprint found again.

Rows are only ever added, each linked into the table's hash chain (``store.chain``):
recording the same request again adds a row, and a replay serves the *first* one in
the chain, whose link is checked before it is served. So a row appended later with
the genuine fingerprint (by SQL, by any role that may insert) is never served, and a
row changed in place is refused, not replayed.
"""

from __future__ import annotations

from typing import Any

from ..chain import link_holds
from ..contract import Store, insert_row, rows

__all__ = ["first_recording", "record_reply", "recorded_reply"]


def record_reply(store: Store, row: dict[str, Any]) -> None:
    """Keep one recorded call (its id, fingerprint, model, caller, request, reply,
    tokens and time), linked into the chain."""
    with store.write() as con:
        insert_row(con, "model_recordings", row)


def first_recording(store: Store, fingerprint: str) -> dict[str, Any] | None:
    """The first recorded reply of ``fingerprint`` in the chain (None if there is
    none), with ``intact``: whether it still hashes to its link."""
    with store.read() as con:
        found = rows(
            con,
            "SELECT * FROM model_recordings WHERE fingerprint = ? "
            "ORDER BY chain_seq NULLS LAST, recorded_at, id LIMIT 1",
            [fingerprint],
        )
        if not found:
            return None
        return found[0] | {"intact": link_holds(con, "model_recordings", found[0])}


def recorded_reply(store: Store, recording_id: str) -> str | None:
    """The reply kept in the recording ``recording_id``, or None if there is none."""
    with store.read() as con:
        found = rows(con, "SELECT reply FROM model_recordings WHERE id = ?", [recording_id])
    return found[0]["reply"] if found else None
