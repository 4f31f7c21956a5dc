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
   (``replace_vote`` when it replaces the reviewer's active vote; the old row is never
   touched, the later one replaces it). The memory row does not change: its status stays
   ``pending_approval`` (or ``deferred``), so the one approval predicate keeps it out of
   every prompt. A vote that brings the round to the votes it needs records so
   (``closes_round``): from then on the round is *complete*, and no voter may withdraw or
   replace a vote in it;
5. when the round is complete and its votes all agree (the same decision, and for
   approve and edit the same text after normalisation) the agreed decision is applied
   in the same transaction (an ``agree`` event), which settles the round; if they
   disagree nothing more is written: "in adjudication" is read from the votes, never
   stored.

What a vote returns is the same whatever it completed: "vote recorded", the card's
status as it was, ``final`` False. Outcomes reach a reviewer when they ask (the card's
status, ``nb.votes``) and, on PostgreSQL, other reviewers' votes only once the round is
complete (``store.memories.vote_rows``).

Undo is ``undo``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..._foundations.ids import new_id
from ..._foundations.results import DecisionResult
from ..._foundations.text import content_hash
from ...errors import DecisionError, InvalidValueError
from ...store import Connection, Store
from ...store.memories import events, memory_rows, vote_rows
from ...store.notices import DecisionNotice
from ...vocabulary import OPEN_STATUSES
from ..decisions import already_decided, write_change
from ..transitions import Change, dump_state, plan
from .intent import not_adjudicated, round_complete, vote_too_late, vote_unrecorded
from .policy import Policy, agree, voter_key

__all__ = ["Also", "adjudicate_vote", "cast", "vote_event"]

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
    allows (module docstring). A vote's result is the same whatever it completed."""
    me = audit.get("reviewer_role") or voter  # who counts as the same voter
    with store.write() as con:
        memory, card = _read_card(store, con, memory_id, expect_status, intent, policy)
        if card.disputed and intent == "vote":
            raise vote_unrecorded(memory_id)
        if not card.disputed and intent == "adjudicate":
            raise not_adjudicated(memory_id, _collecting(card.count, policy.needed))
        change = plan(decision, memory, actor=voter, now=now, **args)
        if card.disputed:
            _may_adjudicate(memory_id, voter, me, card.voted, policy)
            return _final(
                store, con, memory, _as(change, "adjudicate"), voter, now, audit, also, None
            )
        mine = me in card.active
        if mine and card.complete:
            raise round_complete(memory_id)
        ballot = _ballot(change, memory) | {
            "id": new_id(),
            "reviewer": voter,
            "reviewer_role": me,
            "voted_at": now,
        }
        closes = card.count - mine + 1 >= policy.needed
        seq = _write_vote(store, con, memory, ballot | {"closes_round": closes}, mine, audit)
        if closes:
            _settle_if_agreed(store, con, memory, voter, now, audit, also)
    return DecisionResult(
        "replace_vote" if mine else "vote",
        voter,
        ((memory_id, memory["status"], memory["status"]),),
        notes=("vote recorded",),
        event_seqs=(seq,),
        final=False,
    )


def _settle_if_agreed(
    store: Store,
    con: Connection,
    memory: dict,
    voter: str,
    now: datetime,
    audit: dict[str, Any],
    also: Also,
) -> None:
    """The round is complete with this vote: if its votes agree, the agreed decision is
    applied (an ``agree`` event) in the same transaction; else the card waits for
    adjudication (read from the votes, never stored). Every vote of a complete round is
    readable to whoever may vote."""
    active = _active_votes(con, memory["id"])
    if agree(active):
        batch_id = new_id()
        _final(store, con, memory, _agreed_change(memory, active, voter, now), voter, now,
               audit, also, batch_id)  # fmt: skip


def _active_votes(con: Connection, memory_id: str) -> list[dict]:
    votes = vote_rows.round_votes(con, memory_id)
    return [v for v in votes if v["replaced_by"] is None and v["withdrawn_at"] is None]


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
        memory, card = _read_card(store, con, memory_id, expect_status, None, policy)
        if not card.disputed:
            raise DecisionError(
                f"Memory {memory_id} is not waiting for adjudication: it has "
                f"{card.count} of the {policy.needed} votes it needs"
                + (" and they agree" if card.complete else "")
                + ". Adjudicate only what review_queue(adjudicate=True) lists."
            )
        _may_adjudicate(memory_id, actor, audit.get("reviewer_role") or actor, card.voted, policy)
        active = card.votes
        if isinstance(number, bool) or not isinstance(number, int):
            raise DecisionError(f"vote= is the number of a vote (1 to {len(active)}).")
        if not 1 <= number <= len(active):
            raise InvalidValueError(
                "vote",
                number,
                tuple(range(1, len(active) + 1)),
                lead=f"Memory {memory_id} has votes 1 to {len(active)} (as nb.votes lists "
                f"them), not {number}",
            )
        picked = active[number - 1]
        change = plan(picked["decision"], memory, actor=actor, now=now, **_plan_args(picked))
        change = dataclasses.replace(_as(change, "adjudicate"), vote_id=picked["id"])
        return _final(store, con, memory, change, actor, now, audit, also, None)


@dataclasses.dataclass(frozen=True)
class _Round:
    """A card's open round as its voter may know it: who voted (``voted``, withdrawn
    and replaced votes too), whose votes count (``active``), and once the round is
    complete its active votes in full (``votes``) and whether they disagree."""

    voted: frozenset[str]
    active: frozenset[str]
    count: int
    complete: bool
    votes: list[dict]

    @property
    def disputed(self) -> bool:
        return self.complete and not agree(self.votes)


def _read_card(
    store: Store,
    con: Connection,
    memory_id: str,
    expect_status: str | None,
    intent: str | None,
    policy: Policy,
) -> tuple[dict, _Round]:
    """The memory (locked) and its open round, read now."""
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
    voters = vote_rows.round_voters(store, con, memory_id)
    active = [v for v in voters if v["active"]]
    complete = len(active) >= policy.needed or any(v["closes_round"] for v in active)
    return memory, _Round(
        voted=frozenset(voter_key(v) for v in voters),
        active=frozenset(voter_key(v) for v in active),
        count=len(active),
        complete=complete,
        votes=_active_votes(con, memory_id) if complete else [],
    )


def _may_adjudicate(
    memory_id: str, actor: str, me: str, voted: frozenset[str], policy: Policy
) -> None:
    if me in voted and not policy.allow_self:
        raise DecisionError(
            f"{actor} voted on memory {memory_id}, which is waiting for adjudication: an "
            "adjudicator must be somebody who did not vote on it. Ask another reviewer "
            "(review_queue(adjudicate=True), %npc_review --adjudicate), or allow it with "
            "configure(allow_self_adjudication=True). A vote in a complete round stands: "
            "it can no longer be withdrawn or replaced."
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
    mine: bool,
    audit: dict[str, Any],
) -> int:
    """The vote row (``ballot``, with its id and voter) and its event, the memory
    unchanged; the event's seq. A replaced vote is not touched: the later row replaces
    it. The notice names the card, never the voter."""
    action = "replace_vote" if mine else "vote"
    now = ballot["voted_at"]
    seq = events.insert_event(
        con, vote_event(memory, action, ballot["reviewer"], now, audit, None, ballot["id"])
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
            "event_seq": seq,
        },
    )
    store.announce(con, DecisionNotice(memory["id"], memory["status"], None))
    return seq


def vote_event(
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
    written = {
        key: audit.get(key) for key in ("session", "time_spent", "reviewer_role")
    }  # who caused it: the adjudicator, or the voter whose vote completed the agreement
    seqs = [
        write_change(
            store, con, c, actor=actor, now=now, batch_id=batch_id, audit=written, named=False
        )
        for c in planned
    ]
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
