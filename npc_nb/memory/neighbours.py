"""The neighbour index: which memories a candidate should be compared with, fast.

Each memory's content terms are stored with it when it is inserted (``match_terms``),
so opening a project never re-indexes anything. Each process keeps an inverted index
(term -> memories) per store, loaded on first use and brought up to date before every
lookup with the memories inserted since its watermark (``insert_seq``), so other
kernels' writes are seen. While this process holds the file no other process can
write, so the index looks again only after the file was reopened or this process
inserted a memory (a candidate this process queues joins the index directly, without a
look). Scores are BM25 (Robertson and Zaragoza) over the terms, computed with numpy, so
a long memory does not outrank a close short one; a term found in more than a fifth of
a large store is noise and is not followed.

Statuses are not kept here (they change with every decision): a lookup returns ids, and
the caller reads their current rows.
"""

from __future__ import annotations

import gc
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
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


class _Posting:
    """One term's memory positions, oldest first, in an array that grows by doubling: a
    lookup reads a view of it, so no term's memories are copied per candidate."""

    __slots__ = ("_positions", "size")

    def __init__(self) -> None:
        self._positions = np.empty(8, dtype=np.int64)
        self.size = 0

    def extend(self, positions: list[int]) -> None:
        end = self.size + len(positions)
        if end > len(self._positions):
            grown = np.empty(max(end, 2 * len(self._positions)), dtype=np.int64)
            grown[: self.size] = self._positions[: self.size]
            self._positions = grown
        self._positions[self.size : end] = positions
        self.size = end

    def positions(self) -> np.ndarray:
        return self._positions[: self.size]


@dataclass
class NeighbourIndex:
    """The inverted index of one store's memories, kept current incrementally."""

    store: Store
    _entries: list[_Entry] = field(default_factory=list)
    _postings: dict[str, _Posting] = field(default_factory=lambda: defaultdict(_Posting))
    _lengths: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=np.float32))
    _length_sum: float = 0.0
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

    def inserted(self, seq: int, row: dict, seen: tuple[int, int]) -> None:
        """Take in a memory this process just inserted (and committed): ``seq`` is its
        ``insert_seq``, ``seen`` the store's (connections, inserts) right after the insert.

        When the index had seen the store up to just before that insert, nobody else
        can have written in between (the file was held), so the memory joins the index
        directly instead of the next lookup reading the store for it. Otherwise this
        does nothing: the next lookup reads whatever it missed.
        """
        connections, inserts = seen
        with self._lock:
            if self._seen != (connections, inserts - 1) or seq <= self._watermark:
                return
            self._add([(row["id"], row["match_terms"], row["scope"], row["npc"], row["team"])])
            self._watermark, self._seen = seq, seen

    def _ranked(self, terms: frozenset[str], wanted: int) -> list[int]:
        total = len(self._entries)
        if not total:
            return []
        positions, weights = [], []
        for term in terms:
            posting = self._postings.get(term)
            if posting is None or (total > _NOISE_FLOOR and posting.size > _NOISE_SHARE * total):
                continue
            positions.append(posting.positions())
            idf = np.log(1 + (total - posting.size + 0.5) / (posting.size + 0.5))
            weights.append(np.full(posting.size, idf, dtype=np.float64))
        if not positions:
            return []
        where, idf = np.concatenate(positions), np.concatenate(weights)
        norm = self._lengths[where] / max(self._length_sum / total, 1.0)
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
        with _collector_paused():  # a first load makes millions of objects, no cycles
            found = memory_rows.index_entries(self.store, self._watermark)
            if found:
                self._add([row[1:] for row in found])
                self._watermark = found[-1][0]

    def _add(self, rows: list[tuple]) -> None:
        """Add memories, (id, terms, scope, npc, team) each, in insertion order: each
        term's posting grows once per call, however many memories it gains."""
        start = len(self._entries)
        gained: defaultdict[str, list[int]] = defaultdict(list)
        lengths = []
        for position, (memory_id, terms, scope, npc, team) in enumerate(rows, start):
            self._entries.append(_Entry(memory_id, scope, npc, team))
            distinct = frozenset(terms or ())
            lengths.append(len(distinct))
            for term in distinct:
                gained[term].append(position)
        while len(self._entries) > len(self._lengths):
            self._lengths = np.resize(self._lengths, 2 * len(self._lengths))
        self._lengths[start : len(self._entries)] = lengths
        self._length_sum += sum(lengths)
        for term, positions in gained.items():
            self._postings[term].extend(positions)

    def _reset(self) -> None:
        self._entries, self._postings = [], defaultdict(_Posting)
        self._lengths = np.zeros(1024, dtype=np.float32)
        self._length_sum = 0.0
        self._watermark = 0


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused: it would otherwise walk the whole heap again and
    again while a store's worth of index entries is created (half of a first load)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
