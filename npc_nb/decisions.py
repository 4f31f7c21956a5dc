"""Decisions as values: what a reviewer decides, and the context a front end records.

A foundation module (beside ``errors`` and ``vocabulary``): every layer that decides or
builds a decision (the memory core, the review session, the facade, the CLI) imports it,
and it imports nothing of theirs.

Every decision is a frozen dataclass naming its memory (or re-proposal) and what the
decision needs (a reason, a text, a date), and its ``action`` (the decision's name, as
``vocabulary.DECISIONS`` and the audit log spell it); ``ReviewContext`` says who decides, in which
review session, how long the card was on screen, the status it was shown with, and in
independent review what the decision is meant as. ``MemoryCore.apply`` takes one of
each and dispatches on the value's type, so a decision is checked once, where it is
built: there is no string naming a method, and no hidden keyword travelling with it.
``nb.approve(id, by=...)`` and the rest build these values; the review panel and
``npc-nb review`` build them too, so every path writes the same audit rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal

from .errors import InvalidValueError, UnknownMemoryError
from .vocabulary import STATUSES

__all__ = [
    "CARD_DECISIONS",
    "UNCHANGED",
    "Adjudicate",
    "Approve",
    "CardDecision",
    "Decision",
    "Defer",
    "Edit",
    "Reject",
    "Requeue",
    "ReviewContext",
    "SetValidity",
    "Skip",
    "Supersede",
]

#: ``SetValidity``'s default for a bound it leaves as it is (None clears a bound).
UNCHANGED: Any = object()
#: What a decision in independent review is meant as (``memory.voting.intent``).
Intent = Literal["vote", "adjudicate"]


@dataclass(frozen=True)
class _OnMemory:
    """A decision on one memory: its id must be one (a string), checked where it is built."""

    memory_id: str

    def __post_init__(self) -> None:
        if not isinstance(self.memory_id, str) or not self.memory_id:
            raise UnknownMemoryError(
                f"{type(self).__name__}(memory_id=...) must be a memory id (a string from the "
                f"id column of review_queue() or memories()), not {self.memory_id!r}."
            )


@dataclass(frozen=True)
class Approve(_OnMemory):
    """Approve a pending or deferred card (a rejected one needs ``reconsider=True``);
    ``variant``: the id of a re-proposal merged into the card, approved as worded."""

    action: ClassVar[str] = "approve"

    reconsider: bool = False
    variant: str | None = None


@dataclass(frozen=True)
class Reject(_OnMemory):
    """Reject a card (or retract an approved memory); its content becomes a tombstone."""

    action: ClassVar[str] = "reject"

    reason: str | None = None


@dataclass(frozen=True)
class Edit(_OnMemory):
    """Approve with new text (the initial text kept); on an approved memory, a revision."""

    action: ClassVar[str] = "edit"

    text: str
    reconsider: bool = False


@dataclass(frozen=True)
class Defer(_OnMemory):
    """Put a card aside until ``until`` (None: one day from now)."""

    action: ClassVar[str] = "defer"

    until: datetime | None = None


@dataclass(frozen=True)
class Skip(_OnMemory):
    """Leave a card pending, at the back of the queue."""

    action: ClassVar[str] = "skip"


@dataclass(frozen=True)
class SetValidity(_OnMemory):
    """When the remembered fact holds in the world (a bound left ``UNCHANGED`` stays,
    None clears it)."""

    action: ClassVar[str] = "set_validity"

    valid_from: datetime | None = UNCHANGED
    valid_to: datetime | None = UNCHANGED


@dataclass(frozen=True)
class Supersede(_OnMemory):
    """Replace an approved memory by a new approved version; both kept and linked."""

    action: ClassVar[str] = "supersede"

    text: str


@dataclass(frozen=True)
class Adjudicate(_OnMemory):
    """Decide a card waiting for adjudication as its vote number ``vote`` says (1-based,
    in the order ``nb.votes(memory_id)`` lists them)."""

    action: ClassVar[str] = "adjudicate"

    vote: int


@dataclass(frozen=True)
class Requeue:
    """Put an automatic outcome (a merged variant, a suppressed or reinforced repeat)
    back in the review queue as its own card; the new card is the result's
    ``new_memory_id``."""

    action: ClassVar[str] = "requeue"

    reproposal_id: str


#: Every decision ``MemoryCore.apply`` takes.
Decision = Approve | Reject | Edit | Defer | Skip | SetValidity | Supersede | Adjudicate | Requeue
#: The values a review card's decision can be (``vocabulary.DECISIONS`` names them).
CardDecision = Approve | Reject | Edit | Defer | Skip
CARD_DECISIONS: tuple[type[CardDecision], ...] = (Approve, Reject, Edit, Skip, Defer)


@dataclass(frozen=True)
class ReviewContext:
    """What is recorded with a decision beside the decision itself (every field optional).

    ``by``: who decides (default: the ``reviewer`` setting); ``session_id``: the review
    session; ``time_spent``: seconds the card was on screen; ``shown_status``: the status
    the reviewer saw (a decision on a card changed since is refused); ``intent`` in
    independent review: ``"vote"`` (refused if the card waits for adjudication
    meanwhile) or ``"adjudicate"`` (refused if it no longer does).
    """

    by: str | None = None
    session_id: str | None = None
    time_spent: float | None = None
    shown_status: str | None = None
    intent: Intent | None = None

    def __post_init__(self) -> None:
        spent = self.time_spent
        if spent is not None and (
            isinstance(spent, bool) or not isinstance(spent, int | float) or not spent >= 0
        ):
            raise InvalidValueError("time_spent", spent, "seconds (a number >= 0)")
        if self.intent not in (None, "vote", "adjudicate"):
            raise InvalidValueError(
                "intent",
                self.intent,
                ("vote", "adjudicate"),
                hint="'vote' is a reviewer's vote, 'adjudicate' an adjudication; or leave it out.",
            )
        if self.shown_status is not None and self.shown_status not in STATUSES:
            raise InvalidValueError("shown_status", self.shown_status, STATUSES)


def not_a_decision(value: object) -> InvalidValueError:
    """The error for a value ``apply`` cannot take, naming what it can."""
    kinds = tuple(kind.__name__ for kind in Decision.__args__)
    return InvalidValueError(
        "decision",
        value,
        kinds,
        lead=f"{value!r} is not a decision",
        hint="Pass a decision value from npc_nb, e.g. nb.apply(Approve(memory_id)); "
        "or call nb.approve(memory_id) and the like.",
    )
