"""The neighbour index: which memories a candidate should be compared with, fast.

Each memory's content terms are stored with it when it is inserted (``match_terms``),
so opening a project never re-indexes anything. Each process keeps an inverted index
(term -> memories) per store, loaded on first use and brought up to date before every
lookup with the memories inserted since its watermark (``insert_seq``), so other
kernels' writes are seen. While this process holds the file no other process can
write, so the index looks again only after the file was reopened or this process
inserted a memory. Scores are BM25 (Robertson
and Zaragoza) over the terms, computed with numpy, so a long memory does not outrank a
close short one; a term found in more than a fifth of a large store is noise and is not
followed.

Statuses are not kept here (they change with every decision): a lookup returns ids, and
the caller reads their current rows.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..store import Store, memory_rows
from ..store.predicates import visible_to

__all__ = ["NeighbourIndex"]

#: Above this many memories, a term in more than ``_NOISE_SHARE`` of them is skipped.
_NOISE_FLOOR = 1_000
_NOISE_SHARE = 0.2
_K1, _B = 1.2, 0.75  # BM25's usual constants
_OVERFETCH = 8  # ranked candidates examined per wanted neighbour (visibility filters)


@dataclass
class _Entry:
    memory_id: str
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
    _lengths: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=np.float32))
    _watermark: int = 0
    _seen: tuple[int, int] = (-1, -1)  # the store's (connections, inserts) last looked at
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def nearest(
        self, terms: frozenset[str], npc: str | None, team: str | None, limit: int
    ) -> list[str]:
        """Ids of up to ``limit`` memories sharing the most (rarest) terms with ``terms``,
        among those ``npc`` may see; best first."""
        with self._lock:
            self._refresh()
            found: list[str] = []
            for position in self._ranked(terms, limit * _OVERFETCH):
                entry = self._entries[position]
                if entry.visible_to(npc, team):
                    found.append(entry.memory_id)
                    if len(found) == limit:
                        break
            return found

    def _ranked(self, terms: frozenset[str], wanted: int) -> list[int]:
        total = len(self._entries)
        if not total:
            return []
        positions, weights = [], []
        for term in terms:
            posting = self._postings.get(term)
            if not posting or (total > _NOISE_FLOOR and len(posting) > _NOISE_SHARE * total):
                continue
            positions.append(np.asarray(posting, dtype=np.int64))
            idf = np.log(1 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
            weights.append(np.full(len(posting), idf, dtype=np.float64))
        if not positions:
            return []
        where, idf = np.concatenate(positions), np.concatenate(weights)
        lengths = self._lengths[:total]
        norm = lengths[where] / max(float(lengths.mean()), 1.0)
        scores = np.bincount(
            where, weights=idf * (_K1 + 1) / (1 + _K1 * (1 - _B + _B * norm)), minlength=total
        )
        hits = np.flatnonzero(scores)
        if len(hits) > wanted:
            hits = hits[np.argpartition(-scores[hits], wanted)[:wanted]]
        return [int(p) for p in hits[np.argsort(-scores[hits], kind="stable")]]

    def _refresh(self) -> None:
        """Load the memories inserted since the watermark (all of them the first time).

        Only needed when the file was reopened (while this process holds it, no other
        process can write) or this process inserted a memory; a store whose sequence
        went back (a recreated file) is loaded afresh.
        """
        seen = (self.store.connections, self.store.memory_inserts)
        if seen == self._seen:
            return
        if self._seen[0] != seen[0] and memory_rows.newest_insert(self.store) < self._watermark:
            self._reset()
        self._seen = seen
        for seq, memory_id, terms, scope, npc, team in memory_rows.index_entries(
            self.store, self._watermark
        ):
            self._add(memory_id, frozenset(terms or ()), scope, npc, team)
            self._watermark = seq

    def _add(
        self, memory_id: str, terms: frozenset[str], scope: str, npc: str | None, team: str | None
    ) -> None:
        position = len(self._entries)
        self._entries.append(_Entry(memory_id, scope, npc, team))
        if position >= len(self._lengths):
            self._lengths = np.resize(self._lengths, 2 * len(self._lengths))
        self._lengths[position] = len(terms)
        for term in terms:
            self._postings[term].append(position)

    def _reset(self) -> None:
        self._entries, self._postings = [], defaultdict(list)
        self._lengths = np.zeros(1024, dtype=np.float32)
        self._watermark = 0
