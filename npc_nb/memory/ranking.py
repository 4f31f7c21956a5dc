"""Choosing what goes into the memory block when not everything fits, fast enough to run
on every message, and kept current by decisions instead of rebuilt after each.

Relevance to the message decides: terms are matched as word prefixes through an
inverted index built on first need, rarer terms weigh more, and a term found in more
than half of the memories is ignored as noise. What is left over goes in priority
order (most specific scope, then newest). Each memory holds a slot (a small number) and
the index lists slots, so a message's scores are summed by numpy over the matches, not
by a Python loop: a common word matching a hundred thousand memories costs a
millisecond.

A decision changes a handful of memories, so the set changes by exactly those
(``apply``): each leaves the priority order, the line lengths, the versions and the
index, and comes back in its new form if it is still approved and visible. Nothing
else is recomputed, whatever the size of the set.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime

import numpy as np

from .block import render_line

__all__ = ["ApprovedSet", "priority_key"]

_WORD = re.compile(r"\w+")
#: Memories of one relevance score sorted outright; more are read off the priority order.
_SORTED_BUCKET = 2_000

#: Where a memory stands in the block's priority order: most specific scope, newest, id.
PriorityKey = tuple[int, float, str]


def priority_key(row: dict) -> PriorityKey:
    # An approved row with no decision time was set by SQL, not decided (verify names
    # it): it ranks oldest rather than breaking every read of the block.
    decided: datetime | None = row["decided_at"]
    newest_first = -decided.timestamp() if decided is not None else math.inf
    return (row["scope_rank"], newest_first, row["id"])


class ApprovedSet:
    """The approved memories one persona may see, in priority order (specific, newest)."""

    def __init__(self, rows: Iterable[dict]) -> None:
        self._rows: dict[str, dict] = {}
        self._keys: dict[str, PriorityKey] = {}
        self._lengths: dict[str, int] = {}
        self._length_counts: Counter[int] = Counter()
        self._total_length = 0
        #: {memory id: text hash} of every memory in the set: what may still be resent.
        self.versions: dict[str, str] = {}
        self._slots: dict[str, int] = {}  # each memory's slot, the index's name for it
        self._slot_ids: list[str | None] = []  # the memory in each slot (None: free)
        self._free: list[int] = []
        self._postings: dict[str, set[int]] | None = None  # word -> slots, on first need
        self._vocabulary: list[str] = []  # the postings' words, sorted
        self._lock = threading.Lock()  # a decision may land while another thread selects
        for row in rows:
            self._remember(row)
        self._order = sorted(self._keys.values())

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> list[dict]:
        """The memories in priority order."""
        with self._lock:
            return [self._rows[key[2]] for key in self._order]

    def apply(self, changed: Iterable[str], current: Iterable[dict]) -> None:
        """Bring the set up to date after decisions: ``changed`` are the ids of every
        memory they touched, ``current`` those of them approved and visible now."""
        with self._lock:
            for memory_id in changed:
                if memory_id in self._rows:
                    self._forget(memory_id)
            for row in current:
                if row["id"] in self._rows:
                    self._forget(row["id"])
                self._remember(row)
                bisect.insort(self._order, self._keys[row["id"]])

    def select(self, terms: list[str], room: int) -> list[dict]:
        """The highest-priority memories whose lines fit in ``room`` characters."""
        with self._lock:
            if self._total_length <= room:
                return [self._rows[key[2]] for key in self._order]
            if room <= 0:
                return []
            chosen, used, smallest = [], 0, min(self._length_counts)
            for memory_id in self._priority(terms):
                cost = self._lengths[memory_id]
                if used + cost <= room:
                    chosen.append(self._rows[memory_id])
                    used += cost
                elif room - used < smallest:
                    break
            return chosen

    # -- keeping the parts in step ----------------------------------------------------------

    def _remember(self, row: dict) -> None:
        memory_id = row["id"]
        row["line"] = render_line(row)  # what the block prints, rendered once
        length = len(row["line"])
        self._rows[memory_id] = row
        self._keys[memory_id] = priority_key(row)
        self._lengths[memory_id] = length
        self._length_counts[length] += 1
        self._total_length += length
        self.versions[memory_id] = row["final_hash"]
        slot = self._free.pop() if self._free else len(self._slot_ids)
        if slot == len(self._slot_ids):
            self._slot_ids.append(memory_id)
        else:
            self._slot_ids[slot] = memory_id
        self._slots[memory_id] = slot
        if self._postings is not None:
            for word in _words(row):
                if word not in self._postings:
                    self._postings[word] = set()
                    bisect.insort(self._vocabulary, word)
                self._postings[word].add(slot)

    def _forget(self, memory_id: str) -> None:
        row = self._rows.pop(memory_id)
        key = self._keys.pop(memory_id)
        del self._order[bisect.bisect_left(self._order, key)]
        length = self._lengths.pop(memory_id)
        self._length_counts[length] -= 1
        if not self._length_counts[length]:
            del self._length_counts[length]
        self._total_length -= length
        del self.versions[memory_id]
        slot = self._slots.pop(memory_id)
        self._slot_ids[slot] = None
        self._free.append(slot)
        if self._postings is not None:
            for word in _words(row):
                holders = self._postings[word]
                holders.discard(slot)
                if not holders:
                    del self._postings[word]
                    del self._vocabulary[bisect.bisect_left(self._vocabulary, word)]

    # -- relevance --------------------------------------------------------------------------

    def _priority(self, terms: list[str]) -> Iterator[str]:
        """Every memory, best first: by relevance (highest score), then priority order.

        Lazily, since the block takes a few hundred: memories of equal score are one
        bucket, taken in score order; a small bucket is sorted, a large one (a common
        term's) is read off the priority order, which finds its first members early.
        """
        slots, scores = self._scores(terms)
        by_score = np.argsort(-scores, kind="stable")
        slots, scores = slots[by_score], scores[by_score]
        starts = [0, *(np.flatnonzero(np.diff(scores)) + 1).tolist(), len(slots)]
        ids = self._slot_ids
        for start, end in itertools.pairwise(starts):
            yield from self._in_order([ids[slot] for slot in slots[start:end].tolist()])
        scored = set(slots.tolist())
        slot_of = self._slots
        yield from (key[2] for key in self._order if slot_of[key[2]] not in scored)

    def _in_order(self, memory_ids: list[str]) -> Iterator[str]:
        if len(memory_ids) <= _SORTED_BUCKET:
            yield from sorted(memory_ids, key=self._keys.__getitem__)
            return
        members = set(memory_ids)
        yield from (key[2] for key in self._order if key[2] in members)

    def _scores(self, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of the memories matching any term: each term's weight (rarer
        weighs more) added for every memory it matches, in the order of ``terms``."""
        total, matches, weights = len(self._rows), [], []
        for term in terms:
            matched = self._matching(term)
            if not matched or len(matched) > total / 2:
                continue
            matches.append(np.fromiter(matched, np.int64, len(matched)))
            weights.append(np.full(len(matched), math.log(total / len(matched))))
        if not matches:
            return np.empty(0, np.int64), np.empty(0)
        summed = np.bincount(
            np.concatenate(matches), np.concatenate(weights), minlength=len(self._slot_ids)
        )
        slots = np.flatnonzero(summed)
        return slots, summed[slots]

    def _matching(self, term: str) -> set[int]:
        postings = self._index()
        start = bisect.bisect_left(self._vocabulary, term)
        matched: set[int] = set()
        for position in range(start, len(self._vocabulary)):
            word = self._vocabulary[position]
            if not word.startswith(term):
                break
            matched |= postings[word]
        return matched

    def _index(self) -> dict[str, set[int]]:
        if self._postings is None:
            postings: dict[str, set[int]] = {}
            for memory_id, row in self._rows.items():
                slot = self._slots[memory_id]
                for word in _words(row):
                    postings.setdefault(word, set()).add(slot)
            self._postings, self._vocabulary = postings, sorted(postings)
        return self._postings


def _words(row: dict) -> set[str]:
    return set(_WORD.findall(row["norm_text"]))
