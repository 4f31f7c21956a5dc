"""What a review has done, in numbers and words: the tally of its decisions, each
decision as the summary lists it and undo names it, and the summary shown at the end
(the panel's tally line and summary, the terminal's last screen).

The session (``session``) keeps its decisions as steps and asks this module to count
them; nothing here reads the store. An audit's review (``audit``) is blind: its summary
says the sample's progress (``audited.AuditProgress``) instead of the tally, and
``shows_tally`` tells the front ends to hide theirs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .audited import AuditProgress

__all__ = ["KIND_OF", "TALLY_KINDS", "Decided", "Summary", "count_kinds", "count_other_wordings"]

#: ``votes``: in independent review a decision on an open card is a vote, counted as a
#: vote whatever it was and whatever it completed (nothing is final by one vote).
TALLY_KINDS = ("approved", "edited", "rejected", "skipped", "deferred", "votes")
#: The tally's kind of each decision a card can get.
KIND_OF = {
    "approve": "approved",
    "edit": "edited",
    "reject": "rejected",
    "skip": "skipped",
    "defer": "deferred",
}


@dataclass(frozen=True)
class Decided:
    """One decision of this review, as the summary lists it and undo names it."""

    kind: str  # one of TALLY_KINDS
    text: str  # the memory's text after the decision: an edit's new text
    before: str | None = None  # the text an edit (or another wording) replaced
    #: Approved as the card's wording number ``wording`` (2 and up: another wording the
    #: model proposed for it, an approval, not an edit); None otherwise.
    wording: int | None = None

    def __str__(self) -> str:
        if self.kind == "votes":
            return f"vote: {self.text}"
        if self.wording is not None:
            return f"{self.kind} as wording {self.wording}: {self.text}"
        return f"{self.kind}: {self.text}"

    @property
    def undo_line(self) -> str:
        """The line that says this decision was undone, naming the text it left."""
        if self.kind == "votes":
            return f"undo: {self.before or self.text} (your vote is withdrawn; back in the queue)"
        if self.wording is not None:
            return (
                f"undo: {self.before} (was approved as wording {self.wording}, "
                f"\u201c{self.text}\u201d; back in the queue)"
            )
        if self.before is not None:
            return f"undo: {self.before} (was edited to \u201c{self.text}\u201d; back in the queue)"
        return f"undo: {self.text} (was {self.kind}; back in the queue)"


@dataclass(frozen=True)
class Summary:
    """Where the session stands: counts, time, the last decisions, the store."""

    tally: dict[str, int]
    decided: int
    remaining: int
    seconds: float
    seconds_per_card: float | None  # median time on a card
    last: tuple[Decided, ...]  # newest first
    store_path: str
    filters: str = ""  # what the review was limited to ("npc=analyst"), "" for everything
    #: Of the approved, how many as another wording the model proposed for the card.
    other_wordings: int = 0
    #: An audit's review: the sample's progress, said instead of the tally (blind).
    audit: AuditProgress | None = None

    @property
    def shows_tally(self) -> bool:
        """Whether the front ends may show the tally and the last decisions: never in an
        audit's review (no approve/reject count, nothing to count errors from)."""
        return self.audit is None

    @property
    def finished(self) -> bool:
        return self.remaining == 0

    @property
    def empty(self) -> bool:
        """Nothing was there to review: no card waits and this review decided none."""
        return self.finished and not any(self.tally.values())

    def __str__(self) -> str:
        if self.audit is not None:
            return self._audited()
        if self.empty:
            limited = f" matching {self.filters}" if self.filters else ""
            return (
                f"Nothing to review: no candidate{limited} is waiting for approval. "
                f"Store: {self.store_path}"
            )
        done = ", ".join(self.counted(k) for k in TALLY_KINDS if self.tally[k])
        head = "Review finished" if self.finished else f"{self.remaining} still waiting"
        return (
            f"{head}: {done or 'nothing decided'} in {_duration(self.seconds)}{self._pace()}. "
            f"Store: {self.store_path}"
        )

    def _audited(self) -> str:
        """An audit's summary: its progress and what to do next, never the tally."""
        if self.empty:
            head = "Nothing to review: no sampled card awaits you"
        else:
            head = "Review finished" if self.finished else f"{self.remaining} still waiting"
            head += f" ({self.decided} decided in {_duration(self.seconds)}{self._pace()})"
        assert self.audit is not None
        return f"{head}. {self.audit}{self._undecided()} Store: {self.store_path}"

    def _undecided(self) -> str:
        """At the end of an audit's review, the sampled cards it could not show: deferred
        until later (or decided nowhere yet), without which the sample is not complete."""
        audit = self.audit
        left = 0 if audit is None else audit.sample - audit.decided
        if audit is None or not self.finished or not audit.open or audit.voting or left <= 0:
            return ""
        card, be = ("card is", "it is") if left == 1 else ("cards are", "they are")
        return (
            f" {left} sampled {card} not decided yet (deferred): the sample is complete "
            f"once {be} decided."
        )

    def _pace(self) -> str:
        if self.seconds_per_card is None:
            return ""
        return f", median {self.seconds_per_card:.1f} s a card"

    def counted(self, kind: str) -> str:
        """One kind's count in words: "3 approved (1 as another wording)"."""
        if kind == "votes":
            return f"{self.tally[kind]} vote" + ("" if self.tally[kind] == 1 else "s")
        counted = f"{self.tally[kind]} {kind}"
        if kind == "approved" and self.other_wordings:
            counted += f" ({self.other_wordings} as another wording)"
        return counted


def count_kinds(latest: Iterable[Decided]) -> dict[str, int]:
    """Cards per kind of decision, from each card's latest decision (``TALLY_KINDS``)."""
    counts = dict.fromkeys(TALLY_KINDS, 0)
    for decided in latest:
        counts[decided.kind] += 1
    return counts


def count_other_wordings(latest: Iterable[Decided]) -> int:
    """Cards approved as another wording, from each card's latest decision."""
    return sum(decided.wording is not None for decided in latest)


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{seconds:.1f} s"
