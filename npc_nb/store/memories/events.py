"""SQL for the audit log (``memory_events``): append events, and find what undo reverts.

The log is append-only: nothing here updates or deletes an event. An undo is a new
event whose ``undoes`` points at the event it reverts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..contract import Connection, Store, insert_row, one_of, rows, scalar

__all__ = [
    "batch_approved",
    "batch_events",
    "changed_after",
    "changed_since",
    "event_by_seq",
    "events_after",
    "insert_event",
    "latest_change",
    "recent_seqs",
    "recent_undoable",
    "undoable_event",
]

_NOT_UNDONE = "NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq)"
#: How many of the newest events ``recent_undoable`` looks through before the whole log.
RECENT_WINDOW = 10_000


def insert_event(con: Connection, event: dict[str, Any]) -> int:
    """Append an event; returns its ``seq``."""
    seq = insert_row(con, "memory_events", event)
    assert seq is not None  # events are sequenced
    return seq


def recent_undoable(
    store: Store, actor: str, actions: Sequence[str], limit: int, session: str | None = None
) -> list[dict]:
    """The actor's latest decision events that no undo event points at, newest first
    (only those of one review session when ``session`` is given).

    Looked for among the newest ``RECENT_WINDOW`` events first (an undo event always
    comes after the event it reverts, so both ends of the check stay in the window),
    and in the whole log only if none is there: an undo must not read millions of
    events to revert the decision made a moment ago.
    """
    params = {"actor": actor, "actions": list(actions), "limit": limit, "session": session}
    with store.read() as con:
        floor = scalar(con, "SELECT coalesce(max(seq), 0) FROM memory_events") - RECENT_WINDOW
        for since in (floor, 0) if floor > 0 else (0,):
            found = rows(
                con,
                "SELECT * FROM memory_events e WHERE e.seq > $since AND actor = $actor "
                "AND action = ANY($actions) "
                "AND ($session IS NULL OR review_session = $session) AND NOT EXISTS "
                "(SELECT 1 FROM memory_events u WHERE u.seq > $since AND u.undoes = e.seq) "
                "ORDER BY seq DESC LIMIT $limit",
                params | {"since": since},
            )
            if found:
                break
    return found


#: How many later events ``undoable_event`` reads before it leaves the question to a search.
_LATER_LIMIT = 1_000


def undoable_event(
    store: Store, seq: int, memory_id: str, actor: str, actions: Sequence[str], session: str | None
) -> dict | None:
    """Event ``seq`` of ``memory_id``, if it is the actor's decision (in ``session``, when
    given) and no undo points at it, with ``changed_since`` (whether the memory has a later
    event, not itself undone, that undoing it would erase). None otherwise, or when so
    many events came after it that a search of the log (``recent_undoable``) is cheaper.

    One short read at the end of the log: the event and the few after it (the log is in
    seq order), looked through here.
    """
    with store.read() as con:
        found = rows(
            con,
            "SELECT * FROM memory_events WHERE seq >= $seq ORDER BY seq LIMIT $limit",
            {"seq": seq, "limit": _LATER_LIMIT + 1},
        )
    if not found or found[0]["seq"] != seq or len(found) > _LATER_LIMIT:
        return None
    event, later = found[0], found[1:]
    undone = {e["undoes"] for e in later if e["undoes"] is not None}
    if (
        event["memory_id"] != memory_id
        or event["actor"] != actor
        or event["action"] not in actions
        or (session is not None and event["review_session"] != session)
        or seq in undone
    ):
        return None
    changed = any(
        e["memory_id"] == memory_id
        and e["action"] not in ("undo", "propose")
        and e["seq"] not in undone
        for e in later
    )
    return event | {"changed_since": changed}


def changed_since(store: Store, event: dict) -> bool:
    """Whether the event's memory has a later event that was not itself undone."""
    with store.read() as con:
        return changed_after(con, event["memory_id"], event["seq"])


def changed_after(con: Connection, memory_id: str, seq: int) -> bool:
    """``changed_since`` in the caller's transaction: whether the memory has an event
    after ``seq`` that was not itself undone (a proposal or an undo does not count)."""
    count = scalar(
        con,
        "SELECT count(*) FROM memory_events e WHERE memory_id = ? AND seq > ? "
        f"AND action NOT IN ('undo', 'propose') AND {_NOT_UNDONE}",
        [memory_id, seq],
    )
    return count > 0


def event_by_seq(con: Connection, seq: int) -> dict | None:
    """Event ``seq``, read in the caller's transaction (None if there is none)."""
    found = rows(con, "SELECT * FROM memory_events WHERE seq = ?", [seq])
    return found[0] if found else None


def batch_events(store: Store, batch_id: str, actions: Sequence[str]) -> list[dict]:
    """The not-yet-undone decision events of one batch, newest first."""
    with store.read() as con:
        return rows(
            con,
            "SELECT * FROM memory_events e WHERE batch_id = $batch "
            f"AND action = ANY($actions) AND {_NOT_UNDONE} ORDER BY seq DESC",
            {"batch": batch_id, "actions": list(actions)},
        )


def batch_approved(store: Store, memory_ids: list[str]) -> set[str]:
    """Those of these memories whose latest status change is an ``approve_all``: approved
    in a batch, not on their own."""
    if not memory_ids:
        return set()
    cards, params = one_of("e.memory_id", memory_ids, "card")
    with store.read() as con:
        found = con.execute(
            f"SELECT e.memory_id FROM memory_events e WHERE {cards} "
            "AND e.action = 'approve_all' AND e.seq = (SELECT max(m.seq) FROM memory_events m "
            "WHERE m.memory_id = e.memory_id AND m.action NOT IN "
            "('propose', 'vote', 'replace_vote', 'withdraw_vote'))",
            params,
        )
        return {memory_id for (memory_id,) in found.fetchall()}


def latest_change(con: Connection, memory_id: str) -> dict | None:
    """Who last changed a memory's status, when, and to what (its latest event that is not
    a proposal or a vote: a vote changes no status, and who voted stays unsaid until the
    card is final), read in the caller's transaction; None if nobody has."""
    found = rows(
        con,
        "SELECT actor, occurred_at, to_status FROM memory_events WHERE memory_id = ? "
        "AND action NOT IN ('propose', 'vote', 'replace_vote', 'withdraw_vote') "
        "ORDER BY seq DESC LIMIT 1",
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
