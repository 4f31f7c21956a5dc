"""The seeded order in which an audit's batch is sampled: its first ``n`` cards are the
sample at a look of ``n``.

Key design choice: the whole batch is put in one random order when the audit starts,
from ``numpy.random.default_rng(seed)``, and stored; every look takes a prefix of it.
So the sample is reproducible from the seed, and an extension adds cards to the
sample already reviewed instead of drawing a new one. Stratified (by persona and
category), each stratum is shuffled on its own and the strata are interleaved so that
every prefix holds each stratum in proportion to its size (within one card): a sample
of any size is a proportional stratified sample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["sample_order", "stratum_of"]


def stratum_of(card: dict) -> str:
    """A card's stratum: its persona and category ("analyst/fact")."""
    return f"{card.get('npc') or '-'}/{card.get('category') or '-'}"


def sample_order(ids: Sequence[str], strata: Sequence[str] | None, seed: int) -> list[str]:
    """``ids`` in the audit's random order (``strata``: each id's stratum, or None for
    a simple random order)."""
    rng = np.random.default_rng(seed)
    if strata is None:
        return [ids[i] for i in rng.permutation(len(ids))]
    groups: dict[str, list[str]] = {}
    for memory_id, stratum in zip(ids, strata, strict=True):
        groups.setdefault(stratum, []).append(memory_id)
    names = sorted(groups)
    shuffled = [[groups[name][i] for i in rng.permutation(len(groups[name]))] for name in names]
    tie_order = rng.permutation(len(names))  # ties between strata broken at random
    return _interleaved(shuffled, [int(rank) for rank in tie_order])


def _interleaved(groups: list[list[str]], tie_order: list[int]) -> list[str]:
    """The groups merged so that each prefix is proportional: at step ``k`` the group
    furthest below its share ``k * size / total`` gives its next card."""
    total = sum(len(group) for group in groups)
    taken = [0] * len(groups)
    order: list[str] = []
    for k in range(1, total + 1):
        best = max(
            (g for g in range(len(groups)) if taken[g] < len(groups[g])),
            key=lambda g: (k * len(groups[g]) / total - taken[g], -tie_order[g]),
        )
        order.append(groups[best][taken[best]])
        taken[best] += 1
    return order
