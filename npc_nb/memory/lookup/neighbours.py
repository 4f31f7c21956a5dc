"""The neighbour index: which memories a candidate should be compared with, fast.

Each memory's content terms are stored with it when it is inserted (``match_text``),
so opening a project never re-indexes anything. Each process keeps an inverted index
(term -> memories) per store, loaded on first use and brought up to date before every
lookup with the memories inserted since its watermark (``insert_seq``), so other
kernels' writes are seen. While this process holds the file no other process can
write, so the index looks again only after the file was reopened or this process
inserted a memory (a candidate this process queues joins the index directly, without a
look). Scores are BM25 (Robertson and Zaragoza) over the terms, computed with numpy, so
a long memory does not outrank a close short one; a term found in more than a fifth of
a large store is noise and is not followed.

Terms are held as 64-bit keys (``memory_rows.term_keys``), never as Python strings: a
load is two numeric columns from the store, grouped by the low bits of each key
(``_Buckets``, a linear-time radix grouping), so the first lookup on a 100k store takes
about a tenth of a second. Memories added one at a time afterwards go to small per-key
postings, folded into the buckets once they are many.

Next to BM25 runs a **dense** ranking (``dense``): every memory's sentence vector, stored
with it at insert (``match_vector``; rows from before are embedded once, on the first
lookup that needs them, and written back), compared with the candidate's by cosine. A
lookup given the candidate's vector merges the two rankings by reciprocal rank fusion,
so a paraphrase that shares few words is still shown to the matcher.

Each memory's visibility is a small code into the store's distinct (scope, npc, team),
so a load makes no Python object per memory (a kernel holds many, and its garbage
collector would walk them all); a lookup ranks only the memories whose code the
persona may see. Statuses are not kept here (they change with every
decision): a lookup returns ids, and the caller reads their current rows. An answer is
remembered until the index next changes, so a card drawn again, or read ahead while the
reviewer reads the one before, is not looked up twice.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

import numpy as np

from ..._foundations.terms import split_terms
from ...errors import StoreError
from ...store import Store
from ...store.memories import memory_rows
from ...store.memories.memory_rows import Visibility
from ...store.memories.predicates import visible_to
from .dense import DenseVectors, fuse
from .embedding import embed, from_blobs

__all__ = ["NeighbourIndex", "top_positions"]

#: Above this many memories, a term in more than ``_NOISE_SHARE`` of them is skipped.
_NOISE_FLOOR = 1_000
_NOISE_SHARE = 0.2
_K1, _B = 1.2, 0.75  # BM25's usual constants
_BUCKET_BITS = 16  # 65,536 buckets: a dozen (term, memory) pairs each at 100k memories
_FOLD_AT = 65_536  # pairs added one memory at a time before they join the buckets
#: Matches sorted rather than summed into an array of every memory: fewer than one per
#: this many memories (sorting grows as n log n, the array with the store; they cost the
#: same at about 6,000 matches in a million memories and 600 in 100,000).
_SPARSE = 128
_NONE = np.empty(0, dtype=np.int64)
_ANSWERS = 256  # answers remembered (the oldest go first)


def top_positions(
    where: np.ndarray, weight: np.ndarray, total: int, wanted: int, terms: int
) -> list[int]:
    """The ``wanted`` memory positions with the highest sums of ``weight`` over their
    entries in ``where`` (one entry per term a memory shares with the lookup, ``terms``
    at most), best first; equal sums by position.

    Few matches (under one per ``_SPARSE`` memories) are sorted and summed per memory
    matched. More (a common term) are summed per memory into one array, and only the
    memories of the best-summed entries are ranked: a memory has at most ``terms``
    entries, so the best ``wanted`` times ``terms`` entries hold at least ``wanted``
    memories, and of those tied at the cut only the first by position are needed. That
    never scans every memory's sum (12 to 8 ms a lookup at a million memories).
    """
    if len(where) * _SPARSE < total:
        hits, matched = np.unique(where, return_inverse=True)
        return _best(hits, np.bincount(matched, weights=weight), wanted)
    summed = np.bincount(where, weights=weight, minlength=total)
    values = summed[where]
    entries = wanted * terms
    if len(values) <= entries:
        hits = np.unique(where)
        return _best(hits, summed[hits], wanted)
    cut = np.partition(values, len(values) - entries)[len(values) - entries]
    above = where[values > cut]
    tied = where[values == cut]
    first = min(len(tied), wanted * terms)  # holds the first ``wanted`` tied memories
    hits = np.unique(np.concatenate([above, np.partition(tied, first - 1)[:first]]))
    return _best(hits, summed[hits], wanted)


def _best(hits: np.ndarray, scores: np.ndarray, wanted: int) -> list[int]:
    """The ``wanted`` best-scored ``hits`` (ascending positions), best first; equal
    scores by position."""
    if len(hits) > wanted:
        cut = np.partition(scores, len(scores) - wanted)[len(scores) - wanted]
        above = np.flatnonzero(scores > cut)
        tied = np.flatnonzero(scores == cut)[: wanted - len(above)]
        keep = np.concatenate([above, tied])
        hits, scores = hits[keep], scores[keep]
    return [int(p) for p in hits[np.lexsort((hits, -scores))[:wanted]]]


class _Buckets:
    """(term key, memory position) pairs grouped by the key's low bits: a lookup reads
    one small bucket. Grouping sorts 16-bit bucket numbers (a radix sort, linear), so a
    load never sorts the keys themselves."""

    def __init__(self, keys: np.ndarray, positions: np.ndarray) -> None:
        bucket = (keys & ((1 << _BUCKET_BITS) - 1)).astype(np.uint16)
        order = np.argsort(bucket, kind="stable")
        self.keys, self.positions = keys[order], positions[order]
        self.starts = np.zeros((1 << _BUCKET_BITS) + 1, dtype=np.int64)
        np.cumsum(np.bincount(bucket, minlength=1 << _BUCKET_BITS), out=self.starts[1:])

    def of(self, key: int) -> np.ndarray:
        bucket = key & ((1 << _BUCKET_BITS) - 1)
        low, high = self.starts[bucket], self.starts[bucket + 1]
        return self.positions[low:high][self.keys[low:high] == key]


class _Posting:
    """One term's positions among memories added one at a time, in an array that grows
    by doubling (a lookup reads a view of it)."""

    __slots__ = ("_positions", "size")

    def __init__(self) -> None:
        self._positions = np.empty(8, dtype=np.int64)
        self.size = 0

    def append(self, position: int) -> None:
        if self.size == len(self._positions):
            self._positions = np.resize(self._positions, 2 * self.size)
        self._positions[self.size] = position
        self.size += 1

    def positions(self) -> np.ndarray:
        return self._positions[: self.size]


@dataclass
class NeighbourIndex:
    """The inverted index of one store's memories, kept current incrementally."""

    store: Store
    _ids: list[str] = field(default_factory=list)
    #: Each memory's visibility, as a code into ``_visibilities`` (the distinct ones).
    _visibility: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=np.int32))
    _visibilities: list[Visibility] = field(default_factory=list)
    _visibility_codes: dict[Visibility, int] = field(default_factory=dict)
    _buckets: _Buckets | None = None
    _recent: dict[int, _Posting] = field(default_factory=dict)  # added since the buckets
    _recent_pairs: int = 0
    _lengths: np.ndarray = field(default_factory=lambda: np.zeros(1024, dtype=np.float32))
    _length_sum: float = 0.0
    _watermark: int = 0
    _seen: tuple[int, int] = (-1, -1)  # the store's (connections, inserts) last looked at
    #: Answers given since the index last changed: (terms, npc, team, limit) -> ids.
    _answers: dict[tuple, list[str]] = field(default_factory=dict)
    _dense: DenseVectors = field(default_factory=DenseVectors)
    _unembedded: list[int] = field(default_factory=list)  # positions with no vector yet
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def nearest(
        self,
        terms: frozenset[str],
        npc: str | None,
        team: str | None,
        limit: int,
        vector: np.ndarray | None = None,
        arm: str | None = None,
    ) -> list[str]:
        """Ids of up to ``limit`` memories sharing the most (rarest) terms with ``terms``,
        among those ``npc`` may see; best first. Given the candidate's sentence
        ``vector``, the memories nearest it by cosine are ranked too, and the two
        rankings fused. With ``arm`` (an experiment arm's id), only that arm's memories
        are candidates, never live memory's (``predicates.visible_to``). A lexical answer
        is remembered until the index changes (a review looks a card up again when it is
        drawn again, or was read ahead)."""
        if vector is not None:
            return self._nearest_fused(terms, vector, npc, team, limit, arm)
        asked = (terms, npc, team, limit, arm)
        with self._lock:
            self._refresh()
            known = self._answers.get(asked)
            if known is None:
                known = self._answers[asked] = self._nearest(terms, npc, team, limit, arm)
                if len(self._answers) > _ANSWERS:
                    del self._answers[next(iter(self._answers))]
            return list(known)

    def _nearest(
        self, terms: frozenset[str], npc: str | None, team: str | None, limit: int, arm: str | None
    ) -> list[str]:
        keys = memory_rows.term_keys(sorted(terms))
        visible = self._visible_codes(npc, team, arm)
        return [self._ids[p] for p in self._ranked(keys, limit, visible)]

    def _nearest_fused(
        self,
        terms: frozenset[str],
        vector: np.ndarray,
        npc: str | None,
        team: str | None,
        limit: int,
        arm: str | None = None,
    ) -> list[str]:
        """BM25's and the dense ranking's best ``2 * limit`` each, fused (``dense.fuse``)."""
        with self._lock:
            self._refresh()
            computed = self._embed_unembedded()
            codes = self._visible_codes(npc, team, arm)
            lexical = self._ranked(memory_rows.term_keys(sorted(terms)), 2 * limit, codes)
            visible = None if codes is None else codes[self._visibility[: len(self._ids)]]
            dense = self._dense.nearest(vector, visible, 2 * limit)
            found = [self._ids[p] for p in fuse([lexical, dense], limit)]
        if computed:
            # Written back once; a role that may not write (a reader) keeps them in memory.
            with contextlib.suppress(StoreError):
                memory_rows.set_vectors(self.store, computed)
        return found

    def _embed_unembedded(self) -> dict[str, bytes]:
        """Embed the memories held without a vector (rows stored before vectors were, or
        by a path that stores none); their vectors by id, to store (call holding the
        lock)."""
        if not self._unembedded:
            return {}
        positions, self._unembedded = self._unembedded, []
        ids = [self._ids[p] for p in positions]
        texts = memory_rows.texts_by_id(self.store, ids)
        rows = embed([texts.get(i, "") for i in ids])
        if rows is None:
            return {}  # no embedding installed: BM25 alone
        self._dense.replace(positions, rows)
        return {
            i: row.astype("<f2").tobytes() for i, row in zip(ids, rows, strict=True) if i in texts
        }

    def _visible_codes(
        self, npc: str | None, team: str | None, arm: str | None = None
    ) -> np.ndarray | None:
        """Which visibility codes ``npc`` (of ``team``) may see, or None for all of them;
        with ``arm``, the codes of that experiment arm's pool."""
        visible = np.array(
            [
                visible_to(
                    {"scope": scope, "npc": owner, "team": owner_team, "experiment_arm": pool},
                    npc,
                    team,
                    arm,
                )
                for scope, owner, owner_team, pool in self._visibilities
            ],
            dtype=bool,
        )
        return None if visible.all() else visible

    @property
    def loaded(self) -> bool:
        """Whether the store's memories were loaded once: from then on a lookup reads
        only what was inserted since (a few rows), never the whole store again."""
        return self._seen != (-1, -1)

    def load(self) -> None:
        """Load (or bring up to date) now, so that the next lookup does not wait."""
        with self._lock:
            self._refresh()

    def inserted(self, seq: int, row: dict, seen: tuple[int, int]) -> None:
        """Take in a memory this process just inserted (and committed): ``seq`` is its
        ``insert_seq``, ``seen`` the store's (connections, inserts) right after the insert.

        When the index had seen the store up to just before that insert, nobody else
        can have written in between (the file was held), so the memory joins the index
        directly instead of the next lookup reading the store for it. Otherwise this
        does nothing: the next lookup reads whatever it missed.
        """
        connections, inserts = seen
        if self._seen != (connections, inserts - 1):
            return  # not loaded, or behind: keying the terms would be wasted (checked again below)
        keys = memory_rows.term_keys(split_terms(row["match_text"]))
        one = memory_rows.IndexBatch(
            seqs=np.array([seq], dtype=np.int64),
            ids=[row["id"]],
            visibilities=[(row["scope"], row["npc"], row["team"], row.get("experiment_arm"))],
            visibility=np.zeros(1, dtype=np.int32),
            term_positions=np.zeros(len(keys), dtype=np.int64),
            term_keys=keys,
            vectors=[row.get("match_vector")],
        )
        with self._lock:
            if self._seen != (connections, inserts - 1) or seq <= self._watermark:
                return
            self._add(one)
            self._seen = seen

    def _positions(self, key: int) -> np.ndarray:
        """The positions of the memories holding the term keyed ``key``."""
        found = self._buckets.of(key) if self._buckets is not None else _NONE
        recent = self._recent.get(key)
        if recent is None:
            return found
        return np.concatenate([found, recent.positions()]) if len(found) else recent.positions()

    def _ranked(self, keys: np.ndarray, wanted: int, visible: np.ndarray | None) -> list[int]:
        """The ``wanted`` best positions for ``keys`` among the memories whose visibility
        code ``visible`` marks (all, if None). A term's weight (its IDF) counts every
        memory holding it; only the visible ones are ranked, so a persona's own memories
        are found however many of another persona's rank above them."""
        total = len(self._ids)
        if not total:
            return []
        positions, weights = [], []
        for key in keys.tolist():
            posting = self._positions(key)
            size = len(posting)
            if not size or (total > _NOISE_FLOOR and size > _NOISE_SHARE * total):
                continue
            if visible is not None:
                posting = posting[visible[self._visibility[posting]]]
                if not len(posting):
                    continue
            positions.append(posting)
            idf = np.log(1 + (total - size + 0.5) / (size + 0.5))
            weights.append(np.full(len(posting), idf, dtype=np.float64))
        if not positions:
            return []
        where, idf = np.concatenate(positions), np.concatenate(weights)
        norm = self._lengths[where] / max(self._length_sum / total, 1.0)
        weight = idf * (_K1 + 1) / (1 + _K1 * (1 - _B + _B * norm))
        return top_positions(where, weight, total, wanted, len(positions))

    def _refresh(self) -> None:
        """Load the memories inserted since the watermark (all of them the first time).

        Only needed when the file was reopened (while this process holds it, no other
        process can write) or this process inserted a memory; a store whose sequence
        went back (a recreated file) is loaded afresh.
        """
        with self.store.read():  # a file let go of is reopened first: ``connections`` counts it
            seen = (self.store.connections, self.store.memory_inserts)
        if seen == self._seen:
            return
        if self._seen[0] != seen[0] and memory_rows.newest_insert(self.store) < self._watermark:
            self._reset()
        batch = memory_rows.index_batch(self.store, self._watermark)
        if batch is not None and len(batch):
            self._add(batch)
        # Only once it is in: a load that fails is tried again, and ``loaded`` is not
        # true while the first load is still under way.
        self._seen = seen

    def _add(self, batch: memory_rows.IndexBatch) -> None:
        """Add memories inserted after those already held. A few join small per-key
        postings; a load (or enough of those) rebuilds the buckets with everything."""
        self._answers.clear()
        start = len(self._ids)
        self._ids.extend(batch.ids)
        while len(self._ids) > len(self._lengths):
            self._lengths = np.resize(self._lengths, 2 * len(self._lengths))
            self._visibility = np.resize(self._visibility, len(self._lengths))
        codes = np.array([self._code_of(seen) for seen in batch.visibilities], dtype=np.int32)
        self._visibility[start : len(self._ids)] = codes[batch.visibility]
        lengths = np.bincount(batch.term_positions, minlength=len(batch))
        self._lengths[start : len(self._ids)] = lengths
        self._length_sum += float(lengths.sum())
        self._watermark = int(batch.seqs[-1])
        vectors, missing = from_blobs(batch.vectors or [None] * len(batch))
        self._dense.extend(vectors)
        self._unembedded += [start + i for i in missing]
        positions = batch.term_positions + start
        if self._buckets is not None and self._recent_pairs + len(positions) <= _FOLD_AT:
            for key, position in zip(batch.term_keys.tolist(), positions.tolist(), strict=True):
                self._recent.setdefault(key, _Posting()).append(position)
            self._recent_pairs += len(positions)
            return
        keys, held = [batch.term_keys], [positions]
        if self._buckets is not None:
            keys.append(self._buckets.keys)
            held.append(self._buckets.positions)
        for key, posting in self._recent.items():
            keys.append(np.full(posting.size, key, dtype=np.uint64))
            held.append(posting.positions())
        self._buckets = _Buckets(np.concatenate(keys), np.concatenate(held))
        self._recent, self._recent_pairs = {}, 0

    def _code_of(self, visibility: Visibility) -> int:
        """The code of a (scope, npc, team), given a new one the first time it is met."""
        code = self._visibility_codes.get(visibility)
        if code is None:
            code = self._visibility_codes[visibility] = len(self._visibilities)
            self._visibilities.append(visibility)
        return code

    def _reset(self) -> None:
        self._answers.clear()
        self._ids = []
        self._visibility = np.zeros(1024, dtype=np.int32)
        self._visibilities, self._visibility_codes = [], {}
        self._buckets, self._recent, self._recent_pairs = None, {}, 0
        self._lengths = np.zeros(1024, dtype=np.float32)
        self._length_sum = 0.0
        self._watermark = 0
        self._dense, self._unembedded = DenseVectors(), []
