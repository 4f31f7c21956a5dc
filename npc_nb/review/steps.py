"""What one review has decided, step by step: its tally, and what undo takes back.

A ``Step`` is one decision of the review (a card's, or an approve-all batch's) with the
time spent on it, its audit event and the card's row as read before it. ``Steps`` keeps
them in order: the tally counts each card once, by its latest decision (skipped then
approved is one approved; undone ones no longer count), and undo takes back the step
of the cards the review engine reverted. ``restores`` says when an undone card's row as
read is its row again, so the session puts it back without reading the store.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from .._foundations.results import DecisionResult
from .summary import Decided, count_kinds

__all__ = ["Step", "Steps", "restores"]


@dataclass
class Step:
    decided: Decided
    memory_ids: list[str]
    spent: float | None  # seconds on the card; None for a batch
    #: The card's decision event (memory id, seq), so undo finds it without a search.
    event: tuple[str, int] | None = None
    #: The card's row as it was read before the decision: undo restores it as it was.
    row: dict[str, Any] | None = None


class Steps:
    """This review's decisions, oldest first."""

    def __init__(self) -> None:
        self._steps: list[Step] = []

    def __bool__(self) -> bool:
        return bool(self._steps)

    def record(self, step: Step) -> None:
        self._steps.append(step)

    @property
    def last(self) -> Step:
        return self._steps[-1]

    def latest(self, count: int) -> tuple[Decided, ...]:
        """The last ``count`` decisions, newest first."""
        return tuple(step.decided for step in reversed(self._steps[-count:]))

    def outcomes(self) -> dict[str, Decided]:
        """Each card this review touched, with its latest decision."""
        return {memory_id: step.decided for step in self._steps for memory_id in step.memory_ids}

    def tally(self) -> dict[str, int]:
        """Cards per kind of decision, each counted once, by its latest decision."""
        return count_kinds(self.outcomes().values())

    def decided(self) -> int:
        """Cards decided for good (their latest decision is not a skip)."""
        return sum(decided.kind != "skipped" for decided in self.outcomes().values())

    def median_spent(self) -> float | None:
        """The median seconds spent on a card (batches not counted), None before any."""
        spent = [step.spent for step in self._steps if step.spent is not None]
        return statistics.median(spent) if spent else None

    def take_back(self, undone: set[str]) -> Step | None:
        """Remove and return the latest step of a card in ``undone`` (None if none)."""
        for index in range(len(self._steps) - 1, -1, -1):
            if set(self._steps[index].memory_ids) & undone:
                return self._steps.pop(index)
        return None


def restores(step: Step, result: DecisionResult) -> bool:
    """Whether ``result`` undid exactly ``step``'s card, back to the status it was read
    with: then its row as read is its row again (undo restores every field a decision
    changes, and a decision nobody else changed since is the only kind undo reverts)."""
    if step.row is None or len(result.changes) != 1:
        return False
    memory_id, _, to_status = result.changes[0]
    return memory_id == step.row["id"] and to_status == step.row["status"]
