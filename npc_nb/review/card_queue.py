"""The cards of one review, in order, read as they come near the front: a session's queue.

``CardQueue`` keeps every card id of a review in the order it shows them, and reads a
card's row only when it comes near the front (``read_ahead`` at a time: opening a queue
of 100,000 reads a few dozen rows). Every change ends with the front card read, so a
decision applies to the card as it was read before the reviewer saw it. A card decided
elsewhere leaves the queue when a notice says so or, if nobody said, when its row is
read; ``elsewhere`` says so in words.

It holds no store and no filters: the session hands it what to read (``listed``: the
review's ids in order; ``fetch``: the rows of some of them) and holds its lock around
every call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..store.notices import DecisionNotice
from ..vocabulary import OPEN_STATUSES
from .names import done_as

__all__ = ["CardQueue"]


@dataclass
class CardQueue:
    """One review's card ids in order, with the rows read so far (the front)."""

    #: The review's ids in its order (``first``: ids to put in front of the rest).
    listed: Callable[[list[str] | None], list[str]]
    #: The rows of those of ``ids`` still open in this review.
    fetch: Callable[[list[str]], list[dict[str, Any]]]
    #: How many rows to read at a time (read at each use: tests change it).
    read_ahead: Callable[[], int]
    #: Whether this review lists cards by their votes (independent review).
    voting: Callable[[], bool]
    #: A memory's text as stored now.
    stored_text: Callable[[str], str]
    order: list[str] = field(default_factory=list)  # every card in this review, in order
    waiting: set[str] = field(default_factory=set)  # the same ids, to look up
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # read so far
    generation: int = 0  # bumped by every re-read of the queue
    #: The last card another kernel decided, in words (None until one was).
    elsewhere: str | None = None
    #: Told (holding the session's lock) whenever another kernel's decision changed
    #: this queue, with what happened in words.
    watchers: list[Callable[[str], None]] = field(default_factory=list)

    @property
    def current(self) -> str | None:
        """The id of the card on screen, or None when the queue is empty."""
        return self.order[0] if self.order else None

    def reload(self, first: list[str] | None = None) -> None:
        """Re-read the ids, keeping this review's order: cards decided elsewhere drop
        out, new ones join at the back, and ``first`` go to the front."""
        found = self.listed(first)
        self.rows = {}  # read again as the cards come up
        self.generation += 1
        if self.order or first:
            listed = set(found)
            # dicts keep order and drop repeats: the reopened first, this session's
            # order, then newcomers
            order = dict.fromkeys([*(first or []), *self.order, *found])
            self.order = [i for i in order if i in listed]
        else:  # a new review: the store's order as it is (a third of opening 160,000)
            self.order = found
        self.waiting = set(self.order)
        self.read_front()

    def reread(self, memory_ids: list[str], *, first: bool = False) -> None:
        """Re-read only these cards, not the whole queue: those no longer open leave it,
        new ones join at the back, or with ``first`` all go to the front in that order."""
        self.read_rows(memory_ids, first=first)
        self.read_front()

    def read_rows(self, memory_ids: list[str], *, first: bool = False) -> None:
        """``reread`` without reading the front card afterwards."""
        found = {row["id"]: row for row in self.fetch(memory_ids)}
        for memory_id in memory_ids:
            if memory_id in found:
                self.rows[memory_id] = found[memory_id]
                if memory_id not in self.waiting:
                    self.order.append(memory_id)
                    self.waiting.add(memory_id)
            elif memory_id in self.waiting:
                self.drop(memory_id)
        if first:
            reopened = [i for i in dict.fromkeys(memory_ids) if i in found]
            self.order = reopened + [i for i in self.order if i not in found]
        self.generation += 1

    def drop(self, memory_id: str) -> None:
        """Take a card out of this review."""
        self.rows.pop(memory_id, None)
        self.order.remove(memory_id)
        self.waiting.discard(memory_id)

    def read_front(self) -> None:
        """Make sure the front card's row is read: every change to the queue ends here."""
        while self.order and self.order[0] not in self.rows:
            self._read_ahead()

    def _read_ahead(self) -> None:
        """Read the rows of the next cards not read yet; those decided elsewhere
        meanwhile leave the queue, and ``elsewhere`` says so."""
        unread = []
        for memory_id in self.order:
            if memory_id not in self.rows:
                unread.append(memory_id)
                if len(unread) == self.read_ahead():
                    break
        self.read_rows(unread)
        gone = sum(memory_id not in self.waiting for memory_id in unread)
        if gone:
            self.elsewhere = f"{gone} card(s) were decided elsewhere; moved on."

    def advance(self, memory_id: str, *, skipped: bool) -> None:
        """The front card was decided: a skip goes to the back, anything else leaves."""
        self.order.pop(0)
        if skipped:
            self.order.append(memory_id)
        else:
            self.waiting.discard(memory_id)
            del self.rows[memory_id]
        self.read_front()

    def reopen(self, row: dict[str, Any]) -> None:
        """Put an undone card back at the front, with its row as it was read."""
        memory_id = row["id"]
        if memory_id in self.waiting:  # a skip: the card was at the back
            self.order.remove(memory_id)
        self.order.insert(0, memory_id)
        self.waiting.add(memory_id)
        self.rows[memory_id] = row
        self.generation += 1

    def upcoming(self) -> dict[str, Any] | None:
        """The row of the card after the front one, if it was read."""
        return self.rows.get(self.order[1]) if len(self.order) > 1 else None

    # -- decisions made elsewhere -------------------------------------------------------

    def heard(self, notice: DecisionNotice, *, moved: Callable[[], None]) -> None:
        """Another kernel decided: bring the queue in line, call ``moved`` if another
        card is on screen now, and tell the watchers if anything changed."""
        before = (list(self.order), self.current)
        message = self.hear(notice)
        if message is None and before == (self.order, self.current):
            return
        if self.current != before[1]:
            moved()
        if message is not None:
            self.elsewhere = message
        for callback in self.watchers:
            callback(message or "")

    def hear(self, notice: DecisionNotice) -> str | None:
        """Bring the queue in line with another kernel's decision; say so if a card left."""
        memory_id = notice.memory_id
        if memory_id is not None and notice.status in OPEN_STATUSES and self.voting():
            return self._voted_elsewhere(memory_id)
        if memory_id is None or (memory_id not in self.waiting and notice.status in OPEN_STATUSES):
            waiting = set(self.order)
            self.reload()  # anything may have changed, or a card came back: reread
            gone = len(waiting - set(self.order))
            return f"{gone} card(s) were decided elsewhere; moved on." if gone else None
        if memory_id not in self.waiting:
            return None  # not in this review
        row = self.rows.get(memory_id)
        if row is None:  # a card further back, not read yet: read it now
            self.reread([memory_id])
            if memory_id in self.waiting:
                return None  # still open
            text = self.stored_text(memory_id)
        elif notice.status == row["status"]:
            return None  # nothing changed for it (a skip)
        else:
            text = row["final_text"]
            self.drop(memory_id)
            self.generation += 1
            self.read_front()
        done = done_as(notice.status)
        return (
            f"\u201c{text}\u201d was {done} by {notice.actor or 'someone'} "
            "elsewhere; it left this review."
        )

    def _voted_elsewhere(self, memory_id: str) -> str | None:
        """Somebody voted on (or withdrew a vote from) an open card: read it again. It
        leaves this review once it has the votes it needs (agreed, or waiting for
        adjudication), or joins it (an adjudicator's, a reviewer's after a withdrawal);
        said without whose vote or which."""
        listed = memory_id in self.waiting
        text = self.rows.get(memory_id, {}).get("final_text")
        self.reread([memory_id])
        if not listed or memory_id in self.waiting:
            return None
        shown = f"\u201c{text}\u201d" if text else "A card"
        return f"{shown} has the votes it needs from others; it left this review."
