"""Independent review in a session: a reviewer's votes, and an adjudicator's picks.

In independent review (``review_mode="independent"``) the session is its reviewer's:
the queue holds only the cards still collecting votes that the reviewer has not voted
on, a decision is a vote, and a card shows how many votes it has, never whose or which;
another's vote that completes the card (agreed, or waiting for adjudication) takes it
out of the queue. ``adjudicate=True`` reviews the cards waiting for adjudication, their
votes side by side (``Card.votes``): ``adjudicate_vote(n)`` picks one, a decision is
the adjudication. Adjudication is deliberate: a decision here says what it is meant as
(``intent``), so a reviewer's key press on a card whose votes came in meanwhile is
refused, nothing recorded ("this card now waits for adjudication"), never taken as the
adjudication; and an adjudicator's on a card that no longer waits for it is never a
vote. The card then leaves the review, as any refused decision's does.

What the session needs of that, as functions: the votes an adjudicator sees, the vote a
number picks, and what the tally records of a vote or an adjudication.
"""

from __future__ import annotations

from typing import Any

from ..decisions import Intent
from ..errors import DecisionError
from ..memory.core import MemoryCore
from .card import Card, VoteShown
from .summary import KIND_OF, Decided

__all__ = ["adjudicated", "intent", "picked_vote", "vote_decided", "votes_shown"]


def intent(adjudicate: bool) -> Intent:
    """What a session's decision is meant as: an adjudication, or a vote."""
    return "adjudicate" if adjudicate else "vote"


def votes_shown(memory: MemoryCore, memory_id: str) -> tuple[VoteShown, ...]:
    """The card's votes, numbered, for its adjudicator."""
    return tuple(
        VoteShown(n, v["reviewer"], v["decision"], v["final_text"], v["reason"])
        for n, v in enumerate(memory.votes.open_votes(memory_id), start=1)
    )


def picked_vote(card: Card | None, number: int) -> VoteShown:
    """The vote ``number`` of the card on screen, or the ``DecisionError`` that says why
    there is none."""
    if card is None:
        raise DecisionError("Nothing left to review: the queue is empty.")
    if not card.votes:
        raise DecisionError(
            "This card is not waiting for adjudication: a number key picks a vote "
            "only in an adjudication review (%npc_review --adjudicate)."
        )
    if not 1 <= number <= len(card.votes):
        raise DecisionError(f"Pick a vote from 1 to {len(card.votes)}.")
    return card.votes[number - 1]


def adjudicated(picked: VoteShown, row: dict[str, Any]) -> Decided:
    """What the tally records of an adjudication that picked ``picked``."""
    text = picked.text if picked.text is not None else row["final_text"]
    before = row["final_text"] if text != row["final_text"] else None
    return Decided(KIND_OF[picked.decision], text, before=before)


def vote_decided(text: str, row: dict[str, Any], wording: int | None) -> Decided:
    """What the tally records of a vote (``text``: the text it approves, else the
    card's): a vote, whatever it was and whatever it completed; a vote leaves the memory
    as it was, so the text is the vote's, not the stored one."""
    before = row["final_text"] if text != row["final_text"] else None
    return Decided("votes", text, before=before, wording=wording)
