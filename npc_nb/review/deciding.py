"""A review's decisions against the store: each one timed, checked against the card as
read, recorded as a step of the review, and undone the same way.

``Deciding`` is the session's hand on the review engine. A decision carries the time
the card was on screen (from ``shown_at``: reset whenever a new card comes up) and the
status the card was read with, so one made on a card somebody changed meanwhile is
refused; the refused card alone is read again (it leaves the queue if no longer open),
never the whole queue. A decision taken becomes a ``steps.Step`` and the queue moves
on. Undo reverts only this review's last step, never a decision of another review or
a notebook cell; the card comes back first, as it was read when the engine put every
field back, else read again. The session holds its lock around every call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .._foundations.results import DecisionResult
from ..decisions import Adjudicate, CardDecision, ReviewContext
from ..errors import DecisionError
from ..memory.core import MemoryCore
from .adjudication import adjudicated, intent, vote_decided
from .card import Card, VoteShown
from .card_queue import CardQueue
from .card_reading import stored_text
from .steps import Step, Steps, restores
from .summary import KIND_OF, Decided

__all__ = ["Deciding"]


@dataclass
class Deciding:
    """One review's decisions: made on the card at the front of ``cards``, as ``by``."""

    memory: MemoryCore
    cards: CardQueue
    #: The review session: who decides (``by``), its id, whether it adjudicates and its
    #: clock are read from it at each decision, so a change made to the session holds.
    session: Any
    steps: Steps = field(default_factory=Steps)
    #: What the last ``undo`` took back.
    undone: Decided | None = None

    def __post_init__(self) -> None:
        self.shown_at = self.clock()

    def clock(self) -> float:
        return float(self.session.clock())

    @property
    def by(self) -> str | None:
        return self.session.by

    @property
    def session_id(self) -> str:
        return str(self.session.session_id)

    @property
    def adjudicate(self) -> bool:
        return bool(self.session.adjudicate)

    def shown(self) -> None:
        """A new card is on screen from now: its time spent counts from here."""
        self.shown_at = self.clock()

    def decide(
        self,
        decision: CardDecision,
        *,
        wording: int | None,
        voted_text: Callable[[], str],
    ) -> DecisionResult:
        """Apply ``decision`` to the front card (``wording``: the number of the card's
        other wording approved; ``voted_text``: the text a vote approves)."""
        row = self.cards.rows[self.cards.current or ""]
        memory_id = row["id"]
        if decision.memory_id != memory_id:
            raise DecisionError(
                f"{decision!r} is not for the card on screen ({memory_id}): a review "
                "decides its current card only. Nothing was written."
            )
        spent = max(self.clock() - self.shown_at, 0.0)
        with self._refused(memory_id):
            result = self.memory.apply(decision, self._context(spent, row, vote=True))
        # An edit that changes nothing is stored as an approval: count what was stored.
        kind = KIND_OF.get(result.decision, KIND_OF[decision.action])
        if result.decision in ("vote", "replace_vote"):  # the same whatever it completed
            decided = vote_decided(voted_text(), row, wording)
        elif kind == "edited" or wording is not None:  # the text approved, as stored
            stored = stored_text(self.memory, memory_id)
            decided = Decided(kind, stored, before=row["final_text"], wording=wording)
        else:
            decided = Decided(kind, row["final_text"])
        self._done(decided, result, spent, row)
        return result

    def adjudicate_vote(self, card: Card, picked: VoteShown) -> DecisionResult:
        """Adjudicate the front card as its vote ``picked`` says."""
        row = self.cards.rows[card.memory_id]
        spent = max(self.clock() - self.shown_at, 0.0)
        decision = Adjudicate(card.memory_id, picked.number)
        with self._refused(card.memory_id):
            result = self.memory.apply(decision, self._context(spent, row, vote=False))
        self._done(adjudicated(picked, row), result, spent, row)
        return result

    def _context(self, spent: float, row: dict[str, Any], *, vote: bool) -> ReviewContext:
        """What is recorded with a decision of this review on the card ``row`` as read."""
        return ReviewContext(
            by=self.by,
            session_id=self.session_id,
            time_spent=spent,
            shown_status=row["status"],
            intent=intent(self.adjudicate) if vote else None,
        )

    @contextmanager
    def _refused(self, memory_id: str) -> Iterator[None]:
        """Somebody else may have decided it: re-read this card alone (it leaves the
        queue if it is no longer open), not the whole queue."""
        try:
            yield
        except DecisionError:
            self.cards.reread([memory_id])
            self.shown()
            raise

    def _done(
        self, decided: Decided, result: DecisionResult, spent: float, row: dict[str, Any]
    ) -> None:
        """The front card was decided (or voted on): record it, move on."""
        memory_id = row["id"]
        event = (memory_id, result.event_seqs[0]) if result.event_seqs else None
        self.record(decided, [memory_id], spent, event=event, row=row)
        self.cards.advance(memory_id, skipped=decided.kind == "skipped")

    def record(
        self,
        decided: Decided,
        memory_ids: list[str],
        spent: float | None,
        *,
        event: tuple[str, int] | None = None,
        row: dict[str, Any] | None = None,
    ) -> None:
        self.steps.record(Step(decided, memory_ids, spent, event, row))
        self.shown()

    def undo(self) -> DecisionResult:
        """Revert this review's last decision or batch; its cards come back first."""
        if not self.steps:
            raise DecisionError("Nothing to undo: no decision has been made in this review.")
        result = self.memory.undo(
            by=self.by, session=self.session_id, expected=self.steps.last.event
        )
        step = self.steps.take_back(set(result.memory_ids))
        if step is not None:
            self.undone = step.decided
        if step is not None and step.row is not None and restores(step, result):
            self.cards.reopen(step.row)  # the card as it was read: undo put every field back
        else:
            self.cards.reread(result.memory_ids, first=True)
        self.shown()
        return result
