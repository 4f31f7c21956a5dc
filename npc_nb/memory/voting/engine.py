"""The vote engine: votes, agreements and adjudications written, and undone, each in one
transaction with its audit events.

Everything one vote does is one write transaction on the card's store, in this order:

1. ``Store.lock_memory``: on PostgreSQL the memory's row is locked, so of two last votes
   arriving at once the second waits for the first to commit, then reads it (a DuckDB
   file has one writer at a time: nothing to lock there);
2. the memory and its open round's votes are read as they are now. The card must still
   be open (pending, or deferred) and, when the front end says what it showed
   (``expect_status``), still show that; else ``AlreadyDecidedError``, nothing written;
3. a round that already holds the votes the policy asks for (``reviewers_per_card``)
   and disagrees is **in adjudication**: a decision by somebody who did not vote on it is
   the adjudication (an ``adjudicate`` event, the round settled); a voter is refused
   unless ``allow_self_adjudication``. A decision made as a vote (``intent="vote"``: a
   reviewer's review, where the card was still collecting votes when shown) is refused
   instead, nothing written: adjudication is deliberate (``intent``);
4. otherwise the decision is the reviewer's vote (refused, nothing written, if it was
   meant as an adjudication: ``intent="adjudicate"``): a ``votes`` row and a ``vote`` event
   (``replace_vote`` when it replaces the reviewer's active vote, which is marked). The
   memory row does not change: its status stays ``pending_approval`` (or ``deferred``),
   so the one approval predicate keeps it out of every prompt;
5. when the round now holds enough votes and they all agree (the same decision, and for
   approve and edit the same text after normalisation) the agreed decision is applied
   in the same batch as the vote (an ``agree`` event) and the round is settled; if they
   disagree nothing more is written: "in adjudication" is read from the votes and the
   policy, never stored.

Undo of a vote withdraws it (``withdraw_vote``, pointing at the vote's event); if that
vote had completed an agreement, the agreement is reverted too, unless somebody changed
the memory since. Undo of an adjudication reverts it and reopens the round.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..._foundations.ids import new_id
from ..._foundations.results import DecisionResult
from ..._foundations.text import content_hash
from ...errors import AlreadyDecidedError, DecisionError
from ...store import Connection, Store
from ...store.memories import events, memory_rows, vote_rows
from ...store.notices import DecisionNotice
from ...vocabulary import OPEN_STATUSES
from ..decisions import already_decided, write_change
from ..transitions import Change, dump_state, plan, plan_undo
from .intent import not_adjudicated, vote_too_late, vote_unrecorded
from .policy import Policy, agree, voter_key

__all__ = ["Also", "adjudicate_vote", "cast", "undo_vote_event"]

#: The changes that come with a final decision (approving a proposed update supersedes
#: the memory it updates): given by the memory core, which knows them.
Also = Callable[[Store, dict, Change, datetime], list[Change]]


def cast(
    store: Store,
    memory_id: str,
    decision: str,
    *,
    voter: str,
    now: datetime,
    policy: Policy,
    args: dict[str, Any],
    audit: dict[str, Any],
    expect_status: str | None,
    also: Also,
    intent: str | None = None,
) -> DecisionResult:
    """``voter``'s ``decision`` on the open card ``memory_id`` (``args`` as its planner
    takes them): a vote, or on a card in adjudication the adjudication, as ``intent``
    allows (module docstring). The result is ``final`` once the card is decided."""
    me = audit.get("reviewer_role") or voter  # who counts as the same voter
    with store.write() as con:
        memory, active, voted = _read_card(store, con, memory_id, expect_status, intent)
        disputed = len(active) >= policy.needed and not agree(active)
        if disputed and intent == "vote":
            raise vote_unrecorded(memory_id)
        if not disputed and intent == "adjudicate":
            raise not_adjudicated(memory_id, _collecting(len(active), policy.needed))
        if disputed:
            _may_adjudicate(memory_id, voter, me, voted, policy)
            change = plan(decision, memory, actor=voter, now=now, **args)
            return _final(
                store, con, memory, _as(change, "adjudicate"), voter, now, audit, also, None
            )
        change = plan(decision, memory, actor=voter, now=now, **args)
        ballot = _ballot(change, memory) | {"id": new_id(), "reviewer": voter, "reviewer_role": me}
        mine = [vote for vote in active if voter_key(vote) == me]
        after = [vote for vote in active if voter_key(vote) != me] + [ballot]
        agreed = len(after) >= policy.needed and agree(after)
        batch_id = new_id() if agreed else None
        seq = _write_vote(store, con, memory, ballot, mine, voter, now, audit, batch_id)
        if not agreed:
            note = _standing(len(after), policy.needed)
            return DecisionResult(
                "replace_vote" if mine else "vote",
                voter,
                ((memory_id, memory["status"], memory["status"]),),
                batch_id,
                notes=(note,),
                event_seqs=(seq,),
                final=False,
            )
        agreed_change = _agreed_change(memory, after, voter, now)
        result = _final(store, con, memory, agreed_change, voter, now, audit, also, batch_id)
    return dataclasses.replace(
        result,
        decision="replace_vote" if mine else "vote",
        event_seqs=(seq, *result.event_seqs),
        notes=(f"all {len(after)} votes agree: {agreed_change.to_status}",),
    )


def adjudicate_vote(
    store: Store,
    memory_id: str,
    number: int,
    *,
    actor: str,
    now: datetime,
    policy: Policy,
    audit: dict[str, Any],
    expect_status: str | None,
    also: Also,
) -> DecisionResult:
    """Decide the card in adjudication as its vote ``number`` says (1-based, in the
    order ``nb.votes(memory_id)`` lists the open round's votes)."""
    with store.write() as con:
        memory, active, voted = _read_card(store, con, memory_id, expect_status)
        if len(active) < policy.needed or agree(active):
            raise DecisionError(
                f"Memory {memory_id} is not waiting for adjudication: it has "
                f"{len(active)} of the {policy.needed} votes it needs"
                + (" and they agree" if len(active) >= policy.needed else "")
                + ". Adjudicate only what review_queue(adjudicate=True) lists."
            )
        _may_adjudicate(memory_id, actor, audit.get("reviewer_role") or actor, voted, policy)
        if isinstance(number, bool) or not isinstance(number, int):
            raise DecisionError(f"vote= is the number of a vote (1 to {len(active)}).")
        if not 1 <= number <= len(active):
            raise DecisionError(
                f"Memory {memory_id} has votes 1 to {len(active)} (as nb.votes lists "
                f"them), not {number}."
            )
        picked = active[number - 1]
        change = plan(picked["decision"], memory, actor=actor, now=now, **_plan_args(picked))
        change = dataclasses.replace(_as(change, "adjudicate"), vote_id=picked["id"])
        return _final(store, con, memory, change, actor, now, audit, also, None)


def _read_card(
    store: Store,
    con: Connection,
    memory_id: str,
    expect_status: str | None,
    intent: str | None = None,
) -> tuple[dict, list[dict], set[str]]:
    """The memory (locked), its open round's active votes (oldest first) and everybody
    who voted in that round (withdrawn or replaced votes too), read now."""
    store.lock_memory(con, memory_id)
    memory = memory_rows.get_memory(store, memory_id, con)
    if memory is None:
        raise DecisionError(f"Memory {memory_id} is gone (removed by --write SQL?).")
    seen = expect_status or memory["status"]
    if memory["status"] != seen or memory["status"] not in OPEN_STATUSES:
        latest = events.latest_change(con, memory_id)
        if intent == "vote":
            raise vote_too_late(memory_id, memory["status"], latest)
        raise already_decided(memory_id, seen, latest)
    votes = vote_rows.round_votes(con, memory_id)
    active = [v for v in votes if v["replaced_by"] is None and v["withdrawn_at"] is None]
    return memory, active, {voter_key(vote) for vote in votes}


def _may_adjudicate(memory_id: str, actor: str, me: str, voted: set[str], policy: Policy) -> None:
    if me in voted and not policy.allow_self:
        raise DecisionError(
            f"{actor} voted on memory {memory_id}, which is waiting for adjudication: an "
            "adjudicator must be somebody who did not vote on it. Ask another reviewer "
            "(review_queue(adjudicate=True), %npc_review --adjudicate), or allow it with "
            "configure(allow_self_adjudication=True). To change your own vote, undo it first."
        )


def _as(change: Change, action: str) -> Change:
    return dataclasses.replace(change, action=action)


def _ballot(change: Change, memory: dict) -> dict[str, Any]:
    """What a planned decision says as a vote (an edit to the same text is an approval,
    as the planner says)."""
    text = None
    if change.action in ("approve", "edit"):
        text = change.changes.get("final_text", memory["final_text"])
    return {
        "decision": change.action,
        "final_text": text,
        "final_hash": content_hash(text) if text is not None else None,
        "wording": change.wording,
        "reason": change.reason,
        "defer_until": change.changes.get("defer_until") if change.action == "defer" else None,
    }


def _plan_args(vote: dict) -> dict[str, Any]:
    """A vote as the arguments of its decision's planner."""
    decision = vote["decision"]
    if decision == "approve":
        return {"text": vote["final_text"], "wording": vote["wording"]}
    if decision == "edit":
        return {"text": vote["final_text"]}
    if decision == "reject":
        return {"reason": vote["reason"]}
    return {"until": vote["defer_until"]}


def _agreed_change(memory: dict, agreeing: list[dict], actor: str, now: datetime) -> Change:
    """The decision agreeing votes make: the first vote's (their texts normalise alike);
    a defer lasts until the latest date any of them asked for."""
    first = agreeing[0]
    args = _plan_args(first)
    if first["decision"] == "defer":
        args["until"] = max(vote["defer_until"] for vote in agreeing)
    change = plan(first["decision"], memory, actor=actor, now=now, **args)
    voters = ", ".join(sorted({vote["reviewer"] for vote in agreeing}))
    return dataclasses.replace(
        _as(change, "agree"), reason=f"all {len(agreeing)} votes agree ({voters})"
    )


def _write_vote(
    store: Store,
    con: Connection,
    memory: dict,
    ballot: dict[str, Any],
    mine: list[dict],
    voter: str,
    now: datetime,
    audit: dict[str, Any],
    batch_id: str | None,
) -> int:
    """The vote row (``ballot``, with its id and voter) and its event, the memory
    unchanged; the event's seq."""
    action = "replace_vote" if mine else "vote"
    seq = events.insert_event(
        con, _vote_event(memory, action, voter, now, audit, batch_id, ballot["id"])
    )
    spent = audit.get("time_spent")
    vote_rows.insert_vote(
        con,
        ballot
        | {
            "memory_id": memory["id"],
            "round": vote_rows.next_round(con, memory["id"]),
            "time_spent_ms": round(spent * 1000) if spent is not None else None,
            "review_session": audit.get("session"),
            "voted_at": now,
            "event_seq": seq,
        },
    )
    for replaced in mine:
        vote_rows.mark_replaced(con, replaced["id"], ballot["id"])
    store.announce(con, DecisionNotice(memory["id"], memory["status"], voter))
    return seq


def _vote_event(
    memory: dict,
    action: str,
    actor: str,
    now: datetime,
    audit: dict[str, Any],
    batch_id: str | None,
    vote_id: str,
    undoes: int | None = None,
) -> dict[str, Any]:
    """An event of a vote cast, replaced or withdrawn: it changes neither the memory's
    status nor its text (what the vote says is its ``votes`` row, ``vote_id``), so a
    read of the past (``as_of``) never mistakes a vote for a decision."""
    spent = audit.get("time_spent")
    return {
        "memory_id": memory["id"],
        "occurred_at": now,
        "actor": actor,
        "action": action,
        "from_status": memory["status"],
        "to_status": memory["status"],
        "text_before": memory["final_text"],
        "text_after": memory["final_text"],
        "batch_id": batch_id,
        "undoes": undoes,
        "lead_time_ms": round((now - memory["recorded_at"]).total_seconds() * 1000),
        "time_spent_ms": round(spent * 1000) if spent is not None else None,
        "review_session": audit.get("session"),
        "state_before": dump_state(memory),
        "vote_id": vote_id,
    } | ({"reviewer_role": audit["reviewer_role"]} if audit.get("reviewer_role") else {})


def _final(
    store: Store,
    con: Connection,
    memory: dict,
    change: Change,
    actor: str,
    now: datetime,
    audit: dict[str, Any],
    also: Also,
    batch_id: str | None,
) -> DecisionResult:
    """Apply the card's final decision (an agreement or an adjudication) and what comes
    with it, and settle its round, in the caller's transaction."""
    planned = [change, *also(store, memory, change, now)]
    if batch_id is None and len(planned) > 1:
        batch_id = new_id()
    written = {"session": audit.get("session"), "time_spent": audit.get("time_spent")}
    seqs = [
        write_change(store, con, c, actor=actor, now=now, batch_id=batch_id, audit=written)
        for c in planned
    ]
    vote_rows.settle(con, memory["id"], seqs[0])
    changes = tuple((c.memory["id"], c.memory["status"], c.to_status) for c in planned)
    return DecisionResult(change.action, actor, changes, batch_id, event_seqs=tuple(seqs))


def _collecting(count: int, needed: int) -> str:
    """How a card that is not in adjudication stands, for an adjudicator."""
    if count < needed:
        return (
            f"has {count} of the {needed} votes it needs now (a vote was withdrawn "
            "meanwhile?); reviewers decide it by their votes again (review_queue(), %npc_review)"
        )
    return f"has {count} votes and they agree; the next vote makes it final"


def _standing(count: int, needed: int) -> str:
    if count < needed:
        return f"vote recorded: {count} of {needed} votes"
    return "vote recorded: the votes disagree, the card waits for adjudication"


# -- undo ---------------------------------------------------------------------------------


def undo_vote_event(
    store: Store, event: dict, now: datetime, *, actor: str, session: str | None
) -> DecisionResult:
    """Revert an event of independent review: withdraw a vote (and the agreement it
    completed), or revert an adjudication and reopen its round."""
    with store.write() as con:
        store.lock_memory(con, event["memory_id"])
        memory = memory_rows.get_memory(store, event["memory_id"], con)
        if memory is None:
            raise DecisionError(f"Cannot undo: memory {event['memory_id']} is gone.")
        if event["action"] == "adjudicate":
            return _revert_final(store, con, event, memory, actor, now, session)
        return _withdraw(store, con, event, memory, actor, now, session)


def _withdraw(
    store: Store,
    con: Connection,
    event: dict,
    memory: dict,
    actor: str,
    now: datetime,
    session: str | None,
) -> DecisionResult:
    vote = vote_rows.vote_by_id(con, event["vote_id"]) if event.get("vote_id") else None
    if vote is None or vote["replaced_by"] is not None or vote["withdrawn_at"] is not None:
        raise DecisionError(
            f"Cannot undo the vote on memory {event['memory_id']}: it is no longer your "
            "current vote there (replaced or withdrawn since)."
        )
    before = memory["status"]
    if vote["settled_seq"] is not None:
        final = events.event_by_seq(con, vote["settled_seq"])
        if final is None or final["batch_id"] is None or final["batch_id"] != event["batch_id"]:
            raise DecisionError(
                f"Cannot undo your vote on memory {memory['id']}: the card is final now "
                f"({memory['status']}, decided after your vote). Decide on it again instead."
            )
        reverted = _revert_final(store, con, final, memory, actor, now, session)
        memory = memory_rows.get_memory(store, memory["id"], con) or memory
        seqs: tuple[int, ...] = reverted.event_seqs
    else:
        seqs = ()
    vote_rows.mark_withdrawn(con, vote["id"], now)
    withdrawn = _vote_event(
        memory, "withdraw_vote", actor, now, {"session": session}, None, vote["id"],
        undoes=event["seq"],
    )  # fmt: skip
    seq = events.insert_event(con, withdrawn)
    store.announce(con, DecisionNotice(memory["id"], memory["status"], actor))
    return DecisionResult(
        "withdraw_vote",
        actor,
        ((memory["id"], before, memory["status"]),),
        notes=("your vote is withdrawn; the card waits for votes again",),
        event_seqs=(*seqs, seq),
        final=False,
    )


def _revert_final(
    store: Store,
    con: Connection,
    event: dict,
    memory: dict,
    actor: str,
    now: datetime,
    session: str | None,
) -> DecisionResult:
    """Undo the agreement or adjudication ``event`` (nothing changed since) and reopen
    the round it settled."""
    changed = events.changed_after(con, memory["id"], event["seq"])
    change = plan_undo(event, memory, now=now, changed_since=changed)
    try:
        seq = write_change(
            store, con, change, actor=actor, now=now, batch_id=None, audit={"session": session}
        )
    except AlreadyDecidedError as exc:
        raise DecisionError(str(exc)) from exc
    vote_rows.unsettle(con, memory["id"], event["seq"])
    return DecisionResult(
        "undo",
        actor,
        ((memory["id"], memory["status"], change.to_status),),
        event_seqs=(seq,),
        final=False,
    )
