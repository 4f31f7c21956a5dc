"""The dense half of the neighbour index: every memory's sentence vector, the memories
nearest a candidate's by cosine, and the fusion of that ranking with BM25's.

Lexical retrieval cannot find a paraphrase that shares few words ("attends an LGBTQ
support group" / "went to a support group"); a static sentence embedding
(``embedding``) can, at the cost of one matrix-vector product per lookup: at 100,000
memories of 64 float32 dimensions, about a millisecond on two cores. Only the memories
the persona may see are ranked (the same visibility codes as BM25: a persona never sees
another persona's npc-scoped memories).

The two rankings are merged by **reciprocal rank fusion** (Cormack, Clarke and Buettcher,
SIGIR 2009): a memory scores the sum of 1 / (60 + rank) over the rankings that hold it,
so one found near the top of either is shown to the matcher, and one found by both
first of all. Ties go to the lower position (the older memory).
"""

from __future__ import annotations

import numpy as np

from .embedding import DIMENSIONS

__all__ = ["DenseVectors", "fuse"]

#: Reciprocal rank fusion's constant (its authors' choice; it damps the top ranks).
_RRF_K = 60


class DenseVectors:
    """Each memory's vector by its position in the index, in an array that grows by
    doubling (a lookup reads a view of it)."""

    def __init__(self) -> None:
        self._rows = np.zeros((1024, DIMENSIONS), dtype=np.float32)
        self.size = 0

    def extend(self, rows: np.ndarray) -> None:
        """Append vectors (one row each) after those held."""
        needed = self.size + len(rows)
        if needed > len(self._rows):
            grown = np.zeros((max(needed, 2 * len(self._rows)), DIMENSIONS), dtype=np.float32)
            grown[: self.size] = self._rows[: self.size]
            self._rows = grown
        self._rows[self.size : needed] = rows
        self.size = needed

    def replace(self, positions: list[int], rows: np.ndarray) -> None:
        self._rows[positions] = rows

    def nearest(self, query: np.ndarray, visible: np.ndarray | None, wanted: int) -> list[int]:
        """The positions of the ``wanted`` vectors most like ``query`` among those
        ``visible`` marks (all, if None), best first."""
        if not self.size or wanted <= 0:
            return []
        # numpy's own loop, not BLAS: BLAS's threads spin against a busy kernel's and
        # took 12-29 ms here under load, where this takes about a millisecond.
        scores = np.einsum("ij,j->i", self._rows[: self.size], query, optimize=False)
        if visible is not None:
            scores = np.where(visible, scores, -np.inf)
        count = min(wanted, self.size)
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.isfinite(scores[top])]
        return [int(p) for p in top[np.lexsort((top, -scores[top]))]]


def fuse(rankings: list[list[int]], wanted: int) -> list[int]:
    """The ``wanted`` best positions by reciprocal rank fusion of ``rankings`` (each
    best first)."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking):
            scores[position] = scores.get(position, 0.0) + 1.0 / (_RRF_K + rank + 1)
    return sorted(scores, key=lambda p: (-scores[p], p))[:wanted]
