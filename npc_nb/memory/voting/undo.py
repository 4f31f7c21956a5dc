"""Undo in independent review: a vote withdrawn, or an adjudication reverted, each in
one transaction with its audit event, the memory's row locked.

Undo of a vote withdraws it (a ``withdraw_vote`` event pointing at the vote's event; the
vote row is never touched) while its round still collects votes. Once the round is
complete (it holds the votes it needs, agreeing or not) or settled, it is refused,
nothing written: a voter who may have learnt the outcome cannot take their vote back.
Undo of an adjudication reverts it and reopens the round, which waits for adjudication
again.
"""

from __future__ import annotations

from datetime import datetime

from ..._foundations.results import DecisionResult
from ...errors import AlreadyDecidedError, DecisionError
from ...store import Connection, Store
from ...store.memories import events, memory_rows, vote_rows
from ...store.notices import DecisionNotice
from ..decisions import write_change
from ..transitions import plan_undo
from .engine import vote_event
from .intent import round_complete

__all__ = ["undo_vote_event"]


def undo_vote_event(
    store: Store,
    event: dict,
    now: datetime,
    *,
    actor: str,
    session: str | None,
    role: str | None = None,
) -> DecisionResult:
    """Revert an event of independent review: withdraw a vote (and the agreement it
    completed), or revert an adjudication and reopen its round."""
    with store.write() as con:
        store.lock_memory(con, event["memory_id"])
        memory = memory_rows.get_memory(store, event["memory_id"], con)
        if memory is None:
            raise DecisionError(f"Cannot undo: memory {event['memory_id']} is gone.")
        audit = {"session": session, "reviewer_role": role}
        if event["action"] == "adjudicate":
            return _revert_final(store, con, event, memory, actor, now, audit)
        return _withdraw(store, con, event, memory, actor, now, audit)


def _withdraw(
    store: Store,
    con: Connection,
    event: dict,
    memory: dict,
    actor: str,
    now: datetime,
    audit: dict,
) -> DecisionResult:
    """Withdraw the vote ``event`` cast, while its round still collects votes: a new
    ``withdraw_vote`` event, the vote row untouched."""
    vote = vote_rows.vote_by_id(con, event["vote_id"]) if event.get("vote_id") else None
    if vote is None or vote["replaced_by"] is not None or vote["withdrawn_at"] is not None:
        raise DecisionError(
            f"Cannot undo the vote on memory {event['memory_id']}: it is no longer your "
            "current vote there (replaced or withdrawn since)."
        )
    voters = vote_rows.round_voters(store, con, memory["id"])
    if vote["settled_seq"] is not None or any(v["active"] and v["closes_round"] for v in voters):
        raise round_complete(memory["id"], undo=True)
    withdrawn = vote_event(
        memory, "withdraw_vote", actor, now, audit, None, vote["id"],
        undoes=event["seq"],
    )  # fmt: skip
    seq = events.insert_event(con, withdrawn)
    store.announce(con, DecisionNotice(memory["id"], memory["status"], None))
    return DecisionResult(
        "withdraw_vote",
        actor,
        ((memory["id"], memory["status"], memory["status"]),),
        notes=("your vote is withdrawn; the card waits for your vote again",),
        event_seqs=(seq,),
        final=False,
    )


def _revert_final(
    store: Store,
    con: Connection,
    event: dict,
    memory: dict,
    actor: str,
    now: datetime,
    audit: dict,
) -> DecisionResult:
    """Undo the agreement or adjudication ``event`` (nothing changed since) and reopen
    the round it settled."""
    changed = events.changed_after(con, memory["id"], event["seq"])
    change = plan_undo(event, memory, now=now, changed_since=changed)
    try:
        seq = write_change(
            store, con, change, actor=actor, now=now, batch_id=None,
            audit=audit, named=False,
        )  # fmt: skip
    except AlreadyDecidedError as exc:
        raise DecisionError(str(exc)) from exc
    return DecisionResult(
        "undo",
        actor,
        ((memory["id"], memory["status"], change.to_status),),
        event_seqs=(seq,),
        final=False,
    )
