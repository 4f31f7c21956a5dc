"""The exact chances of a sequential audit design: how likely it approves a batch, and
how many cards a person decides, on average, before the batch is settled.

A dynamic programme over the looks. Its state is the number of wrong cards found so
far; between two looks the new wrong cards among the next ``m`` drawn follow the
hypergeometric law of what is left of the batch (the binomial at the given rate for an
unbounded batch). At each look the paths at or under the look's threshold approve and
leave. The key design choice, which makes it fast: only the states up to the largest
threshold matter; every path above it can never approve and is absorbed into one
"cannot approve" state, so a look costs (largest threshold + 2)² products whatever the
batch size. Probabilities are summed in floating point from log-factorials (no
simulation); ``plan_audit`` uses it to calibrate, docs and bench to report.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["Chances", "audit_chances"]


@dataclass(frozen=True)
class Chances:
    """``approve``: the probability the design approves; ``sampled``: the expected cards
    reviewed in the audit (it stops at approval, or once no later look can approve);
    ``questions``: cards decided to settle the batch (the whole batch when it fails;
    equal to ``sampled`` when the batch is unbounded); ``by_look``: approval chance at
    each look."""

    approve: float
    sampled: float
    questions: float
    by_look: tuple[float, ...]


def audit_chances(
    population: int | None,
    looks: Sequence[int],
    thresholds: Sequence[int],
    defects: int | float,
) -> Chances:
    """The exact chances of a design (cumulative ``looks``, the most errors that approve
    at each) on a batch of ``population`` holding ``defects`` wrong cards, or, for an
    unbounded batch (``population=None``), at the error rate ``defects``."""
    cap = max(thresholds, default=-1)
    if cap < 0:  # no look can approve: every audit reviews its last look, then fails
        sampled = float(looks[-1])
        return Chances(0.0, sampled, float(population or sampled), (0.0,) * len(looks))
    increments = _Increments(population, defects, cap)
    state = np.zeros(cap + 2)
    state[0] = 1.0
    previous, sampled, by_look = 0, 0.0, []
    for look, (size, threshold) in enumerate(zip(looks, thresholds, strict=True)):
        sampled += state[: cap + 1].sum() * (size - previous)
        state = increments.step(state, previous, size - previous)
        approved = float(state[: threshold + 1].sum()) if threshold >= 0 else 0.0
        state[: threshold + 1] = 0.0
        later = max(thresholds[look + 1 :], default=-1)
        state[cap + 1] += state[later + 1 : cap + 1].sum()  # no later look can approve these
        state[later + 1 : cap + 1] = 0.0
        by_look.append(approved)
        previous = size
    approve = min(1.0, float(sum(by_look)))
    if population is None:
        questions = float(sampled)
    else:
        settled = sum(p * n for p, n in zip(by_look, looks, strict=True))
        questions = settled + (1.0 - approve) * population
    return Chances(approve, float(sampled), questions, tuple(by_look))


class _Increments:
    """The law of the wrong cards among the next ``m`` drawn, from each state."""

    def __init__(self, population: int | None, defects: int | float, cap: int) -> None:
        self.population, self.defects, self.cap = population, defects, cap
        self.log_factorial = _log_factorials(population or 0)

    def step(self, state: np.ndarray, drawn: int, more: int) -> np.ndarray:
        new = np.zeros_like(state)
        new[self.cap + 1] = state[self.cap + 1]
        for found in range(self.cap + 1):
            if state[found] == 0.0:
                continue
            pmf = self._pmf(found, drawn, more)
            reach = self.cap + 1 - found  # new states found .. cap
            new[found : self.cap + 1] += state[found] * pmf[:reach]
            new[self.cap + 1] += state[found] * max(0.0, 1.0 - float(pmf[:reach].sum()))
        return new

    def _pmf(self, found: int, drawn: int, more: int) -> np.ndarray:
        """P(j new wrong cards), j = 0 .. cap - found."""
        j = np.arange(self.cap + 1 - found)
        if self.population is None:
            rate = float(self.defects)
            logs = _log_comb_float(more, j) + j * math.log(rate) + (more - j) * math.log1p(-rate)
            return np.where(j <= more, np.exp(logs), 0.0)
        left, wrong = self.population - drawn, int(self.defects) - found
        fact = self.log_factorial
        ok = (j <= wrong) & (more - j <= left - wrong) & (j <= more)
        jj = np.where(ok, j, 0)
        logs = (
            _log_comb(fact, wrong, jj)
            + _log_comb(fact, left - wrong, more - jj)
            - _log_comb(fact, left, np.array(more))
        )
        return np.where(ok, np.exp(logs), 0.0)


@lru_cache(maxsize=8)
def _log_factorials(size: int) -> np.ndarray:
    """log k! for k = 0..size (cached: a calibration runs the programme a dozen times)."""
    table = np.array([math.lgamma(i + 1) for i in range(size + 1)])
    table.flags.writeable = False
    return table


def _log_comb(fact: np.ndarray, n: int, k: np.ndarray) -> np.ndarray:
    k = np.clip(k, 0, max(n, 0))
    return np.asarray(fact[max(n, 0)] - fact[k] - fact[max(n, 0) - k])


def _log_comb_float(n: int, k: np.ndarray) -> np.ndarray:
    kk = np.minimum(k, n)
    return np.array([math.lgamma(n + 1) - math.lgamma(x + 1) - math.lgamma(n - x + 1) for x in kk])
