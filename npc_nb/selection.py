"""Choosing what goes into the memory block, fast enough to run on every message.

The approved memories a persona can see change only when somebody decides (or when a
validity window opens or closes), so each process caches them per store and persona,
keyed by the store's decision generation; checking that the cache is current costs one
single-row query, and another kernel's decision invalidates it. The rejected texts the
fuzzy tombstone check compares against are cached the same way.

When the approved memories do not all fit, relevance to the message decides: terms are
matched as word prefixes through an inverted index built on first need, rarer terms
weigh more, and a term found in more than half of the memories is ignored as noise.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .context import line_length
from .stamps import utc_now
from .store import Store

__all__ = ["ApprovedSet", "DecisionCache"]

_WORD = re.compile(r"\w+")
_MAX_ENTRIES = 64


@dataclass
class ApprovedSet:
    """The approved memories one persona may see, in priority order (specific, newest)."""

    rows: list[dict]
    lengths: list[int] = field(init=False)
    _vocabulary: list[str] | None = field(default=None, init=False, repr=False)
    _postings: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.lengths = [line_length(row) for row in self.rows]

    @functools.cached_property
    def versions(self) -> dict[str, str]:
        """{memory id: text hash} of every memory in the set: what may still be resent."""
        return {row["id"]: row["final_hash"] for row in self.rows}

    def select(self, terms: list[str], room: int) -> list[dict]:
        """The highest-priority memories whose lines fit in ``room`` characters."""
        if sum(self.lengths) <= room:
            return list(self.rows)
        if room <= 0:
            return []
        chosen, used, smallest = [], 0, min(self.lengths)
        for position in self._priority(terms):
            cost = self.lengths[position]
            if used + cost <= room:
                chosen.append(self.rows[position])
                used += cost
            elif room - used < smallest:
                break
        return chosen

    def _priority(self, terms: list[str]) -> Iterator[int]:
        scores = self._scores(terms) if terms else {}
        relevant = sorted(scores, key=lambda p: (-scores[p], p))
        rest = (p for p in range(len(self.rows)) if p not in scores)
        return itertools.chain(relevant, rest)

    def _scores(self, terms: list[str]) -> dict[int, float]:
        self._build_index()
        assert self._vocabulary is not None
        total, scores = len(self.rows), {}
        for term in terms:
            matched = self._matching(term)
            if not matched or len(matched) > total / 2:
                continue
            weight = math.log(total / len(matched))
            for position in matched:
                scores[position] = scores.get(position, 0.0) + weight
        return scores

    def _matching(self, term: str) -> set[int]:
        assert self._vocabulary is not None
        start = bisect.bisect_left(self._vocabulary, term)
        matched: set[int] = set()
        for word in self._vocabulary[start:]:
            if not word.startswith(term):
                break
            matched.update(self._postings[word])
        return matched

    def _build_index(self) -> None:
        if self._vocabulary is not None:
            return
        for position, row in enumerate(self.rows):
            for word in set(_WORD.findall(row["norm_text"])):
                self._postings.setdefault(word, []).append(position)
        self._vocabulary = sorted(self._postings)


@dataclass
class _Entry:
    generation: tuple[int, ...]
    valid_until: datetime | None
    value: Any


class DecisionCache:
    """Per-process cache of sets that only a decision (or the clock) can change."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()  # the extraction worker reads it too

    def approved(self, stores: list[Store], npc: str, team: str | None) -> ApprovedSet:
        """Approved memories visible to ``npc`` across ``stores``, in priority order."""

        def load() -> tuple[ApprovedSet, datetime | None]:
            rows, horizons = [], []
            for store in stores:
                with store.read() as con:
                    # The horizon first: a window that closes between the two reads then
                    # makes the entry expire at once instead of keeping it forever.
                    horizons.append(store.next_validity_change(con, npc, team))
                    rows += store.approved_visible(con, npc, team)
            if len(stores) > 1:
                rows.sort(key=lambda r: (r["scope_rank"], -r["decided_at"].timestamp(), r["id"]))
            return ApprovedSet(rows), min((h for h in horizons if h is not None), default=None)

        return self._get(("approved", npc, team), stores, load)

    def rejected(self, store: Store, npc: str | None, team: str | None) -> dict[str, str]:
        """Visible rejected memories of one store as {id: normalised text}."""

        def load() -> tuple[dict[str, str], None]:
            with store.read() as con:
                return dict(store.rejected_visible(con, npc, team)), None

        return self._get(("rejected", npc, team), [store], load)

    def _get(
        self, kind: tuple, stores: list[Store], load: Callable[[], tuple[Any, datetime | None]]
    ) -> Any:
        key = (*kind, tuple(store.path for store in stores))
        generation = tuple(_generation(store) for store in stores)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.generation == generation and _current(entry):
                self._entries.move_to_end(key)
                return entry.value
        value, valid_until = load()
        with self._lock:
            self._entries[key] = _Entry(generation, valid_until, value)
            self._entries.move_to_end(key)
            while len(self._entries) > _MAX_ENTRIES:
                self._entries.popitem(last=False)
        return value


def _current(entry: _Entry) -> bool:
    return entry.valid_until is None or utc_now() < entry.valid_until


def _generation(store: Store) -> int:
    with store.read() as con:
        return store.generation(con)
