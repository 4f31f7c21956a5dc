"""SQL for ``model_recordings``: a model's reply kept under the fingerprint of the
request that produced it, and the newest reply of a fingerprint found again.

Rows are only ever added: recording the same request again adds a row, and a replay
serves the newest (the reply a notebook saved after that run shows).
"""

from __future__ import annotations

from typing import Any

from ..contract import Store, insert_row, rows

__all__ = ["newest_recording", "record_reply", "recorded_reply"]


def record_reply(store: Store, row: dict[str, Any]) -> None:
    """Keep one recorded call (its id, fingerprint, model, caller, request, reply,
    tokens and time)."""
    with store.write() as con:
        insert_row(con, "model_recordings", row)


def newest_recording(store: Store, fingerprint: str) -> dict[str, Any] | None:
    """The newest recorded reply of ``fingerprint``, or None."""
    with store.read() as con:
        found = rows(
            con,
            "SELECT id, reply, prompt_tokens, completion_tokens, recorded_at FROM model_recordings "
            "WHERE fingerprint = ? ORDER BY recorded_at DESC, id DESC LIMIT 1",
            [fingerprint],
        )
    return found[0] if found else None


def recorded_reply(store: Store, recording_id: str) -> str | None:
    """The reply kept in the recording ``recording_id``, or None if there is none."""
    with store.read() as con:
        found = rows(con, "SELECT reply FROM model_recordings WHERE id = ?", [recording_id])
    return found[0]["reply"] if found else None
