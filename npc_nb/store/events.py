"""SQL for the audit log (``memory_events``): append events, and find what undo reverts.

The log is append-only: nothing here updates or deletes an event. An undo is a new
event whose ``undoes`` points at the event it reverts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._database import Connection, Store, insert_row, rows, scalar

__all__ = [
    "batch_events",
    "changed_since",
    "events_after",
    "insert_event",
    "latest_change",
    "recent_seqs",
    "recent_undoable",
]

_NOT_UNDONE = "NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq)"


def insert_event(con: Connection, event: dict[str, Any]) -> None:
    insert_row(con, "memory_events", event)


def recent_undoable(
    store: Store, actor: str, actions: Sequence[str], limit: int, session: str | None = None
) -> list[dict]:
    """The actor's latest decision events that no undo event points at, newest first
    (only those of one review session when ``session`` is given)."""
    with store.read() as con:
        return rows(
            con,
            "SELECT * FROM memory_events e WHERE actor = $actor "
            "AND action = ANY($actions) "
            f"AND ($session IS NULL OR review_session = $session) AND {_NOT_UNDONE} "
            "ORDER BY seq DESC LIMIT $limit",
            {"actor": actor, "actions": list(actions), "limit": limit, "session": session},
        )


def changed_since(store: Store, event: dict) -> bool:
    """Whether the event's memory has a later event that was not itself undone."""
    with store.read() as con:
        count = scalar(
            con,
            "SELECT count(*) FROM memory_events e WHERE memory_id = ? AND seq > ? "
            f"AND action NOT IN ('undo', 'propose') AND {_NOT_UNDONE}",
            [event["memory_id"], event["seq"]],
        )
    return count > 0


def batch_events(store: Store, batch_id: str, actions: Sequence[str]) -> list[dict]:
    """The not-yet-undone decision events of one batch, newest first."""
    with store.read() as con:
        return rows(
            con,
            "SELECT * FROM memory_events e WHERE batch_id = $batch "
            f"AND action = ANY($actions) AND {_NOT_UNDONE} ORDER BY seq DESC",
            {"batch": batch_id, "actions": list(actions)},
        )


def latest_change(con: Connection, memory_id: str) -> dict | None:
    """Who last changed a memory's status, when, and to what (its latest event that is not
    a proposal), read in the caller's transaction; None if nobody has."""
    found = rows(
        con,
        "SELECT actor, occurred_at, to_status FROM memory_events "
        "WHERE memory_id = ? AND action <> 'propose' ORDER BY seq DESC LIMIT 1",
        [memory_id],
    )
    return found[0] if found else None


def events_after(con: Connection, after: int, missing: Sequence[int] = ()) -> list[tuple[int, str]]:
    """(seq, memory id) of the events after ``after`` and of the ``missing`` ones below
    it: what a cache brought up to date at ``after`` has not seen."""
    found = con.execute(
        "SELECT seq, memory_id FROM memory_events WHERE seq > ?", [after]
    ).fetchall()
    if missing:
        listed = ", ".join("?" for _ in missing)
        found += con.execute(
            f"SELECT seq, memory_id FROM memory_events WHERE seq IN ({listed})", list(missing)
        ).fetchall()
    return found


def recent_seqs(con: Connection, window: int) -> list[int]:
    """The seq numbers of the newest events, among the last ``window`` numbers given out."""
    found = con.execute(
        "SELECT seq FROM memory_events WHERE seq > "
        "(SELECT coalesce(max(seq), 0) FROM memory_events) - ?",
        [window],
    ).fetchall()
    return [seq for (seq,) in found]
