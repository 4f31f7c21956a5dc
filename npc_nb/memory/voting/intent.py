"""What a decision in independent review is meant to be (``intent``), and the errors of a
decision whose card moved on while the reviewer was looking at it.

A reviewer's (voting) review passes ``intent="vote"``: if the card's votes came in
meanwhile (it waits for adjudication, or it is final) the decision is refused, nothing
written, never taken as the adjudication. An adjudication review passes
``intent="adjudicate"``: if the card no longer waits for adjudication (a vote was
withdrawn), it is refused, never cast as a vote. Without an intent (a call of
``approve`` and the rest in Python) the card's state decides, as the engine says: a
non-voter's decision on a card in adjudication is the adjudication.
"""

from __future__ import annotations

from typing import Any

from ...errors import AlreadyDecidedError, DecisionError, InvalidValueError

__all__ = [
    "INTENTS",
    "check_intent",
    "not_adjudicated",
    "round_complete",
    "vote_too_late",
    "vote_unrecorded",
]

INTENTS = ("vote", "adjudicate")


def check_intent(intent: Any) -> str | None:
    """``intent`` if it is one (or None), else an ``InvalidValueError`` naming them."""
    if intent is None or (isinstance(intent, str) and intent in INTENTS):
        return intent
    raise InvalidValueError(
        "intent",
        intent,
        INTENTS,
        hint="intent='vote' is a reviewer's vote, refused if the card waits for "
        "adjudication meanwhile; intent='adjudicate' is refused if it no longer does; "
        "or leave it out.",
    )


def vote_unrecorded(memory_id: str) -> DecisionError:
    """A vote on a card whose votes came in meanwhile, and disagree."""
    return DecisionError(
        "This card now waits for adjudication: your vote was not recorded. Memory "
        f"{memory_id} got the votes it needs meanwhile and they disagree; somebody who did "
        "not vote on it decides it (review_queue(adjudicate=True), %npc_review --adjudicate)."
    )


def vote_too_late(memory_id: str, status: str, latest: dict | None) -> AlreadyDecidedError:
    """A vote on a card that became final meanwhile (``latest``: its last change)."""
    if latest is None:
        return AlreadyDecidedError(
            "This card was decided meanwhile: your vote was not recorded. Memory "
            f"{memory_id} is {status} now; nothing was written.",
            status=status,
        )
    when = f"{latest['occurred_at']:%Y-%m-%d %H:%M:%S} UTC"
    return AlreadyDecidedError(
        "This card was decided meanwhile: your vote was not recorded. Memory "
        f"{memory_id} is {latest['to_status']} now ({latest['actor']}, {when}); nothing "
        "was written.",
        decided_by=latest["actor"],
        decided_at=latest["occurred_at"],
        status=latest["to_status"],
    )


def not_adjudicated(memory_id: str, where: str) -> DecisionError:
    """An adjudicator's decision on a card that no longer waits for adjudication
    (``where``: how it stands now, in words)."""
    return DecisionError(
        "This card no longer waits for adjudication: your decision was not recorded. "
        f"Memory {memory_id} {where}."
    )


def round_complete(memory_id: str, *, undo: bool = False) -> DecisionError:
    """A voter's undo or new vote on a card whose round has every vote it needs: what
    the voter may learn of the others' votes from then on must not change theirs."""
    what = "undo your vote" if undo else "change your vote"
    return DecisionError(
        f"Cannot {what} on memory {memory_id}: its round is complete (it has every vote "
        "it needs), and a vote in a complete round can no longer be withdrawn or "
        "replaced. Nothing was written. The card is settled by its votes, or by an "
        "adjudicator who did not vote on it."
    )
