"""The neighbour index: which memories a candidate should be compared with, fast.

Each memory's content terms are stored with it when it is inserted (``match_terms``),
so opening a project never re-indexes anything. Each process keeps an inverted index
(term -> memories) per store, loaded on first use and brought up to date before every
lookup with the memories inserted since its watermark (``insert_seq``), so other
kernels' writes are seen. Terms are weighted by rarity (inverse document frequency); a
term found in more than a fifth of a large store is noise and is not followed. Scores are
BM25 (Robertson and Zaragoza), so a long memory does not outrank a close short one.

Statuses are not kept here (they change with every decision): a lookup returns ids, and
the caller reads their current rows.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from dataclasses import dataclass, field

from ..store import Store, memory_rows
from ..store.predicates import visible_to

__all__ = ["NeighbourIndex"]

#: Above this many memories, a term in more than ``_NOISE_SHARE`` of them is skipped.
_NOISE_FLOOR = 1_000
_NOISE_SHARE = 0.2
_K1, _B = 1.2, 0.75  # BM25's usual constants


@dataclass
class _Entry:
    memory_id: str
    terms: frozenset[str]
    scope: str
    npc: str | None
    team: str | None

    def visible_to(self, npc: str | None, team: str | None) -> bool:
        return visible_to({"scope": self.scope, "npc": self.npc, "team": self.team}, npc, team)


@dataclass
class NeighbourIndex:
    """The inverted index of one store's memories, kept current incrementally."""

    store: Store
    _entries: list[_Entry] = field(default_factory=list)
    _postings: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    _watermark: int = 0
    _term_count: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def nearest(
        self, terms: frozenset[str], npc: str | None, team: str | None, limit: int
    ) -> list[str]:
        """Ids of up to ``limit`` memories sharing the most (rarest) terms with ``terms``,
        among those ``npc`` may see; best first."""
        with self._lock:
            self._refresh()
            scores = self._scores(terms)
            ranked = sorted(scores, key=lambda position: -scores[position])
            found = []
            for position in ranked:
                entry = self._entries[position]
                if entry.visible_to(npc, team):
                    found.append(entry.memory_id)
                    if len(found) == limit:
                        break
            return found

    def _scores(self, terms: frozenset[str]) -> dict[int, float]:
        """BM25 over content terms (each term once per memory): rare shared terms
        count most, and a long memory does not win just by having many terms."""
        total = max(len(self._entries), 1)
        average = self._term_count / total or 1.0
        scores: dict[int, float] = defaultdict(float)
        for term in terms:
            posting = self._postings.get(term)
            if not posting:
                continue
            if total > _NOISE_FLOOR and len(posting) > _NOISE_SHARE * total:
                continue
            weight = math.log(1 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
            for position in posting:
                length = len(self._entries[position].terms) / average
                scores[position] += weight * (_K1 + 1) / (1 + _K1 * (1 - _B + _B * length))
        return scores

    def _refresh(self) -> None:
        """Load the memories inserted since the watermark (all of them the first time).
        A store whose sequence went back (a recreated file) is loaded afresh."""
        entries, newest = memory_rows.index_entries(self.store, self._watermark)
        if newest < self._watermark:
            self._entries, self._postings, self._watermark = [], defaultdict(list), 0
            self._term_count = 0
            entries, newest = memory_rows.index_entries(self.store, 0)
        for seq, memory_id, terms, scope, npc, team in entries:
            position = len(self._entries)
            entry = _Entry(memory_id, frozenset(terms or ()), scope, npc, team)
            self._entries.append(entry)
            self._term_count += len(entry.terms)
            for term in entry.terms:
                self._postings[term].append(position)
            self._watermark = seq
