"""SQL for the ``votes`` table: the votes of independent review, on both backends.

A vote row is written once and never deleted; only its markers change, each once: a
vote is *active* until the same reviewer's next vote on the card replaces it
(``replaced_by``) or undo withdraws it (``withdrawn_at``), and its *round* is open
until an agreement or an adjudication makes the card final (``settled_seq``, that
event's ``seq``; cleared again if that decision is undone). A card deferred by its
votes comes back for a new round, numbered on.

Functions taking ``con`` run in the caller's transaction (the vote engine holds the
memory's lock there, ``Store.lock_memory``); the others open their own read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..contract import Connection, Store, insert_row, one_of, rows, scalar

__all__ = [
    "ACTIVE",
    "insert_vote",
    "mark_replaced",
    "mark_withdrawn",
    "next_round",
    "open_ballots",
    "round_votes",
    "settle",
    "unsettle",
    "vote_by_id",
]

#: A vote that counts: neither replaced nor withdrawn.
ACTIVE = "replaced_by IS NULL AND withdrawn_at IS NULL"
#: What the queue and the policy need of a card's open votes: no text of anybody's.
_BALLOT = "memory_id, reviewer, reviewer_role, decision, final_hash"


def insert_vote(con: Connection, vote: dict[str, Any]) -> None:
    """Write one vote (its ``id`` and ``event_seq`` given by the caller)."""
    insert_row(con, "votes", vote)


def round_votes(con: Connection, memory_id: str) -> list[dict]:
    """Every vote of the card's open round (active or not), oldest first: the order
    ``nb.votes`` numbers the active ones in."""
    return rows(
        con,
        "SELECT * FROM votes WHERE memory_id = ? AND settled_seq IS NULL ORDER BY voted_at, id",
        [memory_id],
    )


def next_round(con: Connection, memory_id: str) -> int:
    """The number of the card's open round: that of its unsettled votes, else one after
    its last settled round (1 for a card never voted on)."""
    found = con.execute(
        "SELECT max(round) FILTER (WHERE settled_seq IS NULL), max(round) FROM votes "
        "WHERE memory_id = ?",
        [memory_id],
    ).fetchone()
    open_round, last = found if found is not None else (None, None)
    if open_round is not None:
        return int(open_round)
    return int(last or 0) + 1


def vote_by_id(con: Connection, vote_id: str) -> dict | None:
    found = rows(con, "SELECT * FROM votes WHERE id = ?", [vote_id])
    return found[0] if found else None


def mark_replaced(con: Connection, vote_id: str, by: str) -> None:
    con.execute("UPDATE votes SET replaced_by = ? WHERE id = ?", [by, vote_id])


def mark_withdrawn(con: Connection, vote_id: str, at: datetime) -> None:
    con.execute("UPDATE votes SET withdrawn_at = ? WHERE id = ?", [at, vote_id])


def settle(con: Connection, memory_id: str, seq: int) -> None:
    """Close the card's open round: the event ``seq`` made it final."""
    con.execute(
        "UPDATE votes SET settled_seq = ? WHERE memory_id = ? AND settled_seq IS NULL",
        [seq, memory_id],
    )


def unsettle(con: Connection, memory_id: str, seq: int) -> None:
    """Open the round the event ``seq`` had closed again (that decision was undone)."""
    con.execute(
        "UPDATE votes SET settled_seq = NULL WHERE memory_id = ? AND settled_seq = ?",
        [memory_id, seq],
    )


def open_ballots(store: Store, memory_ids: Sequence[str] | None = None) -> list[dict]:
    """The active votes of open rounds (of these cards, or of every card): memory id,
    reviewer, decision and the hash of the text it approves, never the text or the
    reason. What a queue filters by and the policy judges."""
    where = f"settled_seq IS NULL AND {ACTIVE}"
    params: dict[str, Any] = {}
    if memory_ids is not None:
        if not memory_ids:
            return []
        listed, params = one_of("memory_id", list(memory_ids), "id")
        where += f" AND {listed}"
    with store.read() as con:
        if not scalar(con, "SELECT EXISTS (SELECT 1 FROM votes)"):
            return []  # a store that never voted: nothing else to read
        return rows(con, f"SELECT {_BALLOT} FROM votes WHERE {where} ORDER BY voted_at, id", params)
