"""SQL for the ``votes`` table: the votes of independent review, on both backends.

A vote row is written once and never changed or deleted (``schema.pg_extras``; on
PostgreSQL a trigger refuses UPDATE, DELETE and TRUNCATE for every role). What became
of a vote is read, never written onto it:

- *withdrawn*: undo wrote a ``withdraw_vote`` event naming it (``vote_id``);
- *replaced*: the same reviewer cast a later vote in the same round of the card;
- *settled*: an ``agree`` or ``adjudicate`` event on the card came after it and was not
  undone (``settled_seq`` is that event's ``seq``).

A vote is *active* while neither withdrawn nor replaced. ``closes_round`` is the one
fact about the round a vote row records: this vote brought the round to the votes the
policy asks for. From then on the round is complete: no voter may withdraw or replace
a vote in it (what they could learn of the others' votes can no longer change theirs),
and on PostgreSQL the reviewers who did not vote may read its votes to adjudicate.

On PostgreSQL row-level security hides another reviewer's vote on an open card from
every role but the owner (the schema's functions, ``p026_blind_votes``), so what a
reviewer's session needs of the others' votes before the round is complete, who voted,
comes through ``npc_nb_open_ballots()``, which gives names, never a decision or a text.

Functions taking ``con`` run in the caller's transaction (the vote engine holds the
memory's lock there, ``Store.lock_memory``); the others open their own read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..contract import Connection, Store, insert_row, one_of, rows, scalar
from .predicates import Moment, included

__all__ = [
    "ACTIVE",
    "VOTES_NOW",
    "insert_vote",
    "next_round",
    "open_ballots",
    "round_voters",
    "round_votes",
    "vote_by_id",
    "votes_at",
]


#: Every vote row as it stands now: its own columns, and what became of it (module
#: docstring), read from later votes and the audit log. Name it ``FROM {VOTES_NOW} v``.
def _votes_view(events: str = "memory_events", votes: str = "votes") -> str:
    """Every vote row of ``votes`` and what became of it, read from ``events``."""
    return f"""(SELECT b.*, w.occurred_at AS withdrawn_at,
        CASE WHEN w.seq IS NULL THEN lead(b.id) OVER (
            PARTITION BY b.memory_id, b.round, coalesce(b.reviewer_role, b.reviewer)
            ORDER BY b.event_seq) END AS replaced_by,
        (SELECT min(f.seq) FROM {events} f WHERE f.memory_id = b.memory_id
            AND f.action IN ('agree', 'adjudicate') AND f.seq > b.event_seq
            AND f.seq NOT IN (SELECT u.undoes FROM {events} u WHERE u.undoes IS NOT NULL)
        ) AS settled_seq
    FROM {votes} b LEFT JOIN {events} w ON w.action = 'withdraw_vote' AND w.vote_id = b.id)"""


VOTES_NOW = _votes_view()


def votes_at(moment: Moment) -> tuple[str, dict[str, Any]]:
    """``VOTES_NOW`` as the votes stood at ``moment``: those cast by then, replaced,
    withdrawn or settled only by the events it includes; a source and its parameters."""
    events = f"(SELECT * FROM memory_events WHERE {included(moment)})"
    cast = f"(SELECT * FROM votes WHERE event_seq IN (SELECT seq FROM {events} c))"
    return _votes_view(events, cast), moment.params()


#: A vote that counts: neither replaced nor withdrawn (of ``VOTES_NOW v``).
ACTIVE = "v.replaced_by IS NULL AND v.withdrawn_at IS NULL"


def insert_vote(con: Connection, vote: dict[str, Any]) -> None:
    """Write one vote (its ``id`` and ``event_seq`` given by the caller)."""
    insert_row(con, "votes", vote)


def round_votes(con: Connection, memory_id: str) -> list[dict]:
    """Every vote of the card's open round this role may read (active or not), oldest
    first: the order ``nb.votes`` numbers the active ones in. On PostgreSQL a reviewer
    reads only their own until the round is complete."""
    return rows(
        con,
        f"SELECT * FROM {VOTES_NOW} v WHERE v.memory_id = ? AND v.settled_seq IS NULL "
        "ORDER BY v.voted_at, v.id",
        [memory_id],
    )


def round_voters(store: Store, con: Connection, memory_id: str) -> list[dict]:
    """Who voted in the card's open round, whatever this role may read of the votes:
    ``reviewer``, ``reviewer_role``, ``active`` and ``closes_round`` of each vote, oldest first."""
    if store.writes_on_server:
        return rows(
            con,
            "SELECT reviewer, reviewer_role, active, closes_round FROM npc_nb_open_ballots() "
            "WHERE memory_id = ? ORDER BY voted_at, id",
            [memory_id],
        )
    return rows(
        con,
        f"SELECT v.reviewer, v.reviewer_role, {ACTIVE} AS active, "
        "coalesce(v.closes_round, FALSE) AS closes_round "
        f"FROM {VOTES_NOW} v WHERE v.memory_id = ? AND v.settled_seq IS NULL "
        "ORDER BY v.voted_at, v.id",
        [memory_id],
    )


def next_round(con: Connection, memory_id: str) -> int:
    """The number of the card's open round: that of its unsettled votes, else one after
    its last settled round (1 for a card never voted on). On PostgreSQL a reviewer may
    not read another's open vote, but every role reads settled rounds, and the open
    round is always the one after the last settled."""
    found = con.execute(
        "SELECT max(v.round) FILTER (WHERE v.settled_seq IS NULL), max(v.round) "
        f"FROM {VOTES_NOW} v WHERE v.memory_id = ?",
        [memory_id],
    ).fetchone()
    open_round, last = found if found is not None else (None, None)
    if open_round is not None:
        return int(open_round)
    return int(last or 0) + 1


def vote_by_id(con: Connection, vote_id: str) -> dict | None:
    found = rows(con, f"SELECT * FROM {VOTES_NOW} v WHERE v.id = ?", [vote_id])
    return found[0] if found else None


def open_ballots(store: Store, memory_ids: Sequence[str] | None = None) -> list[dict]:
    """The active votes of open rounds (of these cards, or of every card): memory id,
    reviewer, and, only once the round is complete, the decision and the hash of the
    text it approves; never the text or the reason. What a queue filters by and the
    policy judges."""
    if store.writes_on_server:
        source = "(SELECT * FROM npc_nb_open_ballots() WHERE active) v"
    else:
        source = (
            f"(SELECT v.*, bool_or(coalesce(v.closes_round, FALSE)) OVER (PARTITION BY "
            f"v.memory_id, v.round) AS complete FROM {VOTES_NOW} v "
            f"WHERE v.settled_seq IS NULL AND {ACTIVE}) v"
        )
    where = "TRUE"
    params: dict[str, Any] = {}
    if memory_ids is not None:
        if not memory_ids:
            return []
        listed, params = one_of("v.memory_id", list(memory_ids), "id")
        where = listed
    with store.read() as con:
        if not store.writes_on_server and not scalar(con, "SELECT EXISTS (SELECT 1 FROM votes)"):
            return []  # a file that never voted: nothing else to read
        return rows(
            con,
            "SELECT v.memory_id, v.reviewer, v.reviewer_role, v.complete, "
            "CASE WHEN v.complete THEN v.decision END AS decision, "
            "CASE WHEN v.complete THEN v.final_hash END AS final_hash "
            f"FROM {source} WHERE {where} ORDER BY v.voted_at, v.id",
            params,
        )
