"""The review engine: planned changes in, statuses and audit events out.

Each status change and its ``memory_events`` row commit in one transaction, and the
update is conditional on the status the change was planned against, so a concurrent
reviewer in another kernel cannot be silently overwritten. ``approve_previewed`` (after
``preview_approve_all``) and ``undo`` are the multi-memory decisions: one batch id,
one transaction per store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import pandas as pd

from .._foundations.ids import new_id
from .._foundations.results import ApproveAllPreview, DecisionResult
from .._foundations.tables import Kind, with_missing_as_na
from ..errors import AlreadyDecidedError, DecisionError
from ..store import Connection, Store, Stores
from ..store.memories import events, memory_rows
from ..store.notices import DecisionNotice
from .transitions import UNDOABLE, VOTE_UNDOABLE, Change, dump_state, plan, plan_undo

__all__ = [
    "VoteUndo",
    "already_decided",
    "apply_changes",
    "approve_previewed",
    "preview_approve_all",
    "read_marks",
    "undo",
    "write_change",
]

#: How undo reverts an event of independent review (``votes.undo_vote_event``, handed in
#: by the memory core: this module does not import the vote engine, which imports it).
VoteUndo = Callable[[Store, dict, datetime], DecisionResult]


def apply_changes(
    store: Store,
    planned: list[Change],
    *,
    actor: str,
    now: datetime,
    audit: dict[str, Any],
    read_at: tuple[int, int] | None = None,
) -> DecisionResult:
    """Write every change and its event in one transaction; all or nothing.

    ``read_at`` is ``store.mark()`` taken before the planned rows were read: if nothing
    can have been written since (``Store.untouched_since``), their statuses are still
    as read and are not read again.
    """
    batch_id = audit.pop("batch_id", None)
    if batch_id is None and (len(planned) > 1 or any(c.new_row for c in planned)):
        batch_id = new_id()
    with store.write() as con:
        as_read = read_at is not None and store.untouched_since(read_at)
        seqs = [
            write_change(
                store,
                con,
                change,
                actor=actor,
                now=now,
                batch_id=batch_id,
                audit=audit,
                as_read=as_read,
            )
            for change in planned
        ]
    changes = tuple((c.memory["id"], c.memory["status"], c.to_status) for c in planned)
    created = next((c.new_row["id"] for c in planned if c.new_row), None)
    name = planned[0].action if planned else "none"
    return DecisionResult(name, actor, changes, batch_id, created, event_seqs=tuple(seqs))


def write_change(
    store: Store,
    con: Connection,
    change: Change,
    *,
    actor: str,
    now: datetime,
    batch_id: str | None,
    audit: dict[str, Any],
    as_read: bool = False,
    named: bool = True,
) -> int:
    """Write one change and its event (and a new row's, for a revision) in the caller's
    transaction; the event's seq. Refused (``AlreadyDecidedError``) if the memory no
    longer has the status the change was planned against. ``named=False``: its notices
    name nobody (a decision of independent review: notices never carry a voter)."""
    memory = change.memory
    if not memory_rows.update_memory(
        store, con, memory["id"], memory["status"], change.changes, as_read=as_read
    ):
        raise already_decided(
            memory["id"], memory["status"], events.latest_change(con, memory["id"])
        )
    event = _event(memory, change, actor=actor, now=now, batch_id=batch_id, audit=audit)
    seq = events.insert_event(con, event)
    said = actor if named else None
    store.announce(con, DecisionNotice(memory["id"], change.to_status, said))
    if change.new_row is not None:
        memory_rows.insert_memory(store, con, change.new_row)
        store.announce(con, DecisionNotice(change.new_row["id"], change.new_row["status"], said))
        created = {
            "memory_id": change.new_row["id"],
            "from_status": None,
            "to_status": change.new_row["status"],
            "text_before": memory["final_text"],
            "text_after": change.new_row["final_text"],
            "state_before": None,
            "lead_time_ms": 0,
        }
        events.insert_event(con, event | created)
    return seq


def already_decided(memory_id: str, seen: str, latest: dict | None) -> AlreadyDecidedError:
    """The error for a decision that lost its race: who won, when, and what it is now."""
    if latest is None:
        return AlreadyDecidedError(
            f"Memory {memory_id} changed while this decision was being made (another "
            "kernel or reviewer?): it is no longer {seen}. Nothing was written; look at "
            "it again and retry."
        )
    when = f"{latest['occurred_at']:%Y-%m-%d %H:%M:%S} UTC"
    return AlreadyDecidedError(
        f"Memory {memory_id} was already decided by {latest['actor']} at {when} (it is "
        f"{latest['to_status']} now, not {seen} as shown). Nothing was written; look at "
        "it again if you still want to change it.",
        decided_by=latest["actor"],
        decided_at=latest["occurred_at"],
        status=latest["to_status"],
    )


def _event(
    memory: dict,
    change: Change,
    *,
    actor: str,
    now: datetime,
    batch_id: str | None,
    audit: dict[str, Any],
) -> dict[str, Any]:
    after_text = change.changes.get("final_text", memory["final_text"])
    lead = (now - memory["recorded_at"]).total_seconds() * 1000
    time_spent = audit.get("time_spent")
    return {
        "memory_id": memory["id"],
        "occurred_at": now,
        "actor": actor,
        "action": change.action,
        "from_status": memory["status"],
        "to_status": change.to_status,
        "text_before": memory["final_text"],
        "text_after": after_text,
        "reason": change.reason,
        "batch_id": batch_id,
        "undoes": change.undoes,
        "lead_time_ms": round(lead),
        "time_spent_ms": round(time_spent * 1000) if time_spent is not None else None,
        "review_session": audit.get("session"),
        "state_before": dump_state(memory),
        "wording": change.wording,
    } | _optional(vote_id=change.vote_id, reviewer_role=audit.get("reviewer_role"))


def _optional(**columns: Any) -> dict[str, Any]:
    """The columns given a value: one left out gets the store's default (on PostgreSQL
    ``reviewer_role`` is then the connected role)."""
    return {name: value for name, value in columns.items() if value is not None}


def preview_approve_all(
    stores: Stores,
    filters: dict[str, Any],
    *,
    now: datetime,
    sample_size: int,
    kinds: Mapping[str, Kind],
) -> ApproveAllPreview:
    """What approve-all would approve: every unflagged open candidate matching
    ``filters`` (count, ids, a sample of ``sample_size``). Nothing is written."""
    found = [m for s in stores.existing() for m in memory_rows.open_memories(s, filters, now)]
    eligible = [m for m in found if not m["flags"]]
    shown = pd.DataFrame(eligible[:sample_size], columns=list(kinds))
    ids = tuple(m["id"] for m in eligible)
    return ApproveAllPreview(
        len(eligible), with_missing_as_na(shown, kinds), len(found) - len(eligible), ids
    )


def approve_previewed(
    stores: Stores,
    ids: tuple[str, ...],
    filters: dict[str, Any],
    *,
    actor: str,
    now: datetime,
    session: str | None = None,
    role: str | None = None,
) -> DecisionResult:
    """Approve exactly ``ids`` (what a preview showed; ``filters`` select them as open
    candidates, in the experiment arms the preview was taken in) as one batch. If any
    of them is no longer open and unflagged (decided, deferred or flagged since),
    nothing is approved: the reviewer approved that set."""
    marks = read_marks(stores)  # before the rows are read
    found = [(s, m) for s in stores.existing() for m in memory_rows.open_memories(s, filters, now)]
    chosen = [(s, m) for s, m in found if not m["flags"] and m["id"] in set(ids)]
    gone = len(set(ids)) - len({m["id"] for _, m in chosen})
    if gone:
        raise DecisionError(
            f"{gone} of the {len(ids)} candidate(s) this preview showed changed since (decided, "
            "deferred or flagged, maybe in another kernel): nothing was approved. Call "
            "preview_approve_all() again and approve what it shows now."
        )
    parts = [
        (
            store,
            [
                plan("approve", m, actor=actor, now=now, action="approve_all")
                for s, m in chosen
                if s is store
            ],
        )
        for store in stores.existing()
    ]
    return _apply_parts(
        "approve_all", parts, actor=actor, now=now, batch_id=new_id(), session=session,
        marks=marks, role=role,
    )  # fmt: skip


def _apply_parts(
    name: str,
    parts: list[tuple[Store, list[Change]]],
    *,
    actor: str,
    now: datetime,
    batch_id: str | None,
    session: str | None = None,
    marks: dict[int, tuple[int, int]] | None = None,
    role: str | None = None,
) -> DecisionResult:
    """Apply a decision spanning both stores: one transaction per store, in order.

    If a later part fails (another reviewer got there first), the message says which
    earlier part was already applied, so nothing happens silently. ``marks`` are the
    stores' marks from before the changes' rows were read (``read_marks``); ``role``
    who is recording (``reviewer_role``).
    """
    moved: list[tuple[str, str | None, str]] = []
    seqs: list[int] = []
    for store, changes in parts:
        if not changes:
            continue
        try:
            result = apply_changes(
                store,
                changes,
                actor=actor,
                now=now,
                audit={"batch_id": batch_id, "session": session, "reviewer_role": role},
                read_at=(marks or {}).get(id(store)),
            )
        except DecisionError as exc:
            if not moved:
                raise
            raise DecisionError(
                f"{exc} The other part of this {name} was already applied to "
                f"{len(moved)} memor{'y' if len(moved) == 1 else 'ies'} (batch {batch_id}); "
                "undo() reverts it."
            ) from exc
        moved.extend(result.changes)
        seqs.extend(result.event_seqs)
    return DecisionResult(name, actor, tuple(moved), batch_id, event_seqs=tuple(seqs))


def undo(
    stores: Stores,
    *,
    actor: str,
    now: datetime,
    session: str | None = None,
    search: int = 50,
    expected: tuple[str, int] | None = None,
    vote_undo: VoteUndo | None = None,
    role: str | None = None,
) -> DecisionResult:
    """Revert the actor's latest decision that can still be reverted, with new events.

    A batch (approve_all, supersede) is reverted whole, across both stores. A decision
    somebody else has changed since cannot be undone without erasing their work: it is
    skipped, and the result says so. ``expected`` (memory id, event seq) is the decision
    the caller knows to be its latest (a review session's last): looked up by its seq,
    and the log searched only if it is no longer there to undo. A vote, or an
    adjudication, is reverted by ``vote_undo`` (the vote engine), which puts the card's
    votes back as they were too.
    """
    marks = read_marks(stores)  # before the events and rows are read
    candidates = _expected(stores, actor, session, expected) or sorted(
        (
            (s, e)
            for s in stores.existing()
            for e in events.recent_undoable(s, actor, UNDOABLE, search, session)
        ),
        key=lambda pair: (pair[1]["occurred_at"], pair[1]["seq"]),
        reverse=True,
    )
    if not candidates:
        where = " in this review" if session else ""
        raise DecisionError(f"Nothing to undo: {actor} has no decision left to revert{where}.")
    skipped: list[str] = []
    seen_batches: set[str] = set()
    for store, event in candidates:
        if event["batch_id"] in seen_batches:
            continue
        if event["action"] in VOTE_UNDOABLE and vote_undo is not None:
            try:
                return vote_undo(store, event, now)
            except DecisionError as exc:
                skipped.append(str(exc))
                continue
        if event["batch_id"] is not None:
            seen_batches.add(event["batch_id"])
            parts = [
                (s, events.batch_events(s, event["batch_id"], UNDOABLE)) for s in stores.existing()
            ]
        else:
            parts = [(store, [event])]
        try:
            planned = [
                (
                    s,
                    [
                        plan_undo(
                            e,
                            memory_rows.get_memory(s, e["memory_id"]),
                            now=now,
                            changed_since=_changed_since(s, e),
                        )
                        for e in batch
                    ],
                )
                for s, batch in parts
            ]
        except DecisionError as exc:
            skipped.append(str(exc))
            continue
        batch_id = new_id() if sum(len(c) for _, c in planned) > 1 else None
        result = _apply_parts(
            "undo", planned, actor=actor, now=now, batch_id=batch_id, session=session,
            marks=marks, role=role,
        )  # fmt: skip
        return DecisionResult(
            result.decision, actor, result.changes, batch_id, notes=tuple(skipped)
        )
    raise DecisionError(f"Nothing {actor} decided recently can be undone: " + " ".join(skipped[:3]))


def read_marks(stores: Stores) -> dict[int, tuple[int, int]]:
    """Each store's ``mark()``, by ``id``: taken before a decision reads the rows it
    plans from, so its write knows whether they can have changed since."""
    return {id(store): store.mark() for store in stores.existing()}


def _expected(
    stores: Stores, actor: str, session: str | None, expected: tuple[str, int] | None
) -> list[tuple[Store, dict]]:
    """The caller's expected latest decision, as undo's only candidate, if it can still be
    undone; else nothing (and undo searches the log)."""
    if expected is None:
        return []
    memory_id, seq = expected
    for store in stores.existing():
        event = events.undoable_event(store, seq, memory_id, actor, UNDOABLE, session)
        if event is not None and not event["changed_since"]:
            return [(store, event)]
    return []


def _changed_since(store: Store, event: dict) -> bool:
    """``events.changed_since``, unless the event was read with it."""
    known = event.get("changed_since")
    return bool(known) if known is not None else events.changed_since(store, event)
