"""The permutation (randomisation) test of a difference of two arms' rates over
conversations: the test to report when conversations are few.

An experiment re-extracts the same conversations under each arm, so the design is
paired by conversation, and a conversation's cards are alike. Under the null hypothesis
(the arm makes no difference to which cards are approved) the two arms' cards of one
conversation could as well have carried each other's labels. The test swaps them in
every subset of the K conversations (2^K arrangements) and asks how often the
difference of pooled rates is at least as far from zero as observed (Fisher 1935, The
Design of Experiments, §21; Edgington & Onghena 2007, Randomization Tests, 4th ed.,
ch. 6). It is exact: its p-value assumes nothing about the conversations beyond
exchangeability, and it says plainly what few conversations can show (the smallest
p-value of K conversations is 2/2^K). The key design choice: every arrangement is
enumerated while there are at most ``exact_limit`` of them, else a seeded Monte Carlo
sample of arrangements is drawn, and the result always names its method and its count.
NumPy is imported inside the function: ``import npc_nb`` stays fast.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError
from .clusters import cluster_sums, require_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EXACT_LIMIT", "permutation_test_difference"]

#: Arrangements enumerated exactly (2^16: up to 16 conversations); more are sampled.
EXACT_LIMIT = 2**16
_TOLERANCE = 1e-12  # an arrangement as extreme as the observed one, up to rounding
_CHUNK = 2**20  # arrangement x conversation cells held at once (8 MB of float64)


def permutation_test_difference(
    frame: pd.DataFrame,
    *,
    cluster: str,
    group: str,
    outcome: str,
    baseline: Any,
    other: Any,
    exact_limit: int = EXACT_LIMIT,
    resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, int, str]:
    """The two-sided p-value of the paired permutation test of (rate of ``outcome`` in
    group ``other``) - (rate in group ``baseline``), permuting the groups' labels within
    each cluster (conversation).

    ``frame`` has one row per observation (a card): its ``cluster``, its ``group`` and a
    0/1 or boolean ``outcome``; rows with a missing outcome are left out. With s_gk, n_gk
    the successes and trials of group g in cluster k, an arrangement swaps the two
    groups' (s, n) in a subset of the clusters, and its statistic is

        T = Σ_k s_ok / Σ_k n_ok - Σ_k s_bk / Σ_k n_bk   (o: other, b: baseline)

    Exact (``method == "exact"``) when the 2^K arrangements number at most
    ``exact_limit``: p = #{arrangements with |T| >= |T_observed|} / #arrangements.
    Otherwise ``resamples`` arrangements are drawn (each cluster swapped with
    probability 1/2, ``numpy.random.default_rng(seed)``) and p = (1 + hits) / (1 +
    resamples) (``method == "monte carlo"``; Phipson & Smyth 2010, Statistical
    Applications in Genetics and Molecular Biology 9(1):39, so p is never 0).
    Arrangements that leave a group without trials are left out of the count. Swapping
    every cluster turns T into -T, so the null distribution is symmetric and this p is
    twice the one-sided one. Returns ``(p, arrangements counted, method)``; NaN and 0
    when a group has no rows at all.
    """
    import numpy as np

    _check(frame, cluster, group, outcome, baseline, other, exact_limit, resamples)
    sums = cluster_sums(frame, cluster, group, outcome, (baseline, other))
    if sums is None:
        return (math.nan, 0, "exact")
    successes, trials = sums
    k = trials.shape[1]
    exact = k < 63 and 2**k <= exact_limit
    observed = abs(_differences(successes, trials, np.zeros((1, k)))[0])
    rng = np.random.default_rng(seed)
    total = 2**k if exact else resamples
    hits = counted = 0
    for start in range(0, total, max(1, _CHUNK // k)):  # a few MB of arrangements at a time
        rows = min(max(1, _CHUNK // k), total - start)
        if exact:
            swaps = (np.arange(start, start + rows)[:, None] >> np.arange(k)) & 1
        else:
            swaps = rng.integers(0, 2, (rows, k))
        found = _differences(successes, trials, swaps.astype("float64"))
        found = found[~np.isnan(found)]
        hits += int((np.abs(found) >= observed - _TOLERANCE).sum())
        counted += len(found)
    if exact:
        return (hits / counted, counted, "exact")
    return ((1 + hits) / (1 + counted), counted, "monte carlo")


def _differences(successes: Any, trials: Any, swaps: Any) -> Any:
    """T for each arrangement (a row of ``swaps``, 1 where a cluster's groups swap);
    NaN where a group has no trials. Row 0 of the sums is the baseline, row 1 the other."""
    import numpy as np

    other_s = successes[1].sum() + swaps @ (successes[0] - successes[1])
    other_n = trials[1].sum() + swaps @ (trials[0] - trials[1])
    base_s, base_n = successes.sum() - other_s, trials.sum() - other_n
    usable = (other_n > 0) & (base_n > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(usable, other_s / other_n - base_s / base_n, np.nan)


def _check(
    frame: pd.DataFrame,
    cluster: str,
    group: str,
    outcome: str,
    baseline: Any,
    other: Any,
    exact_limit: int,
    resamples: int,
) -> None:
    require_columns(frame, cluster, group, outcome)
    if baseline == other:
        raise ArgumentError(f"baseline and other are both {other!r}: name two different groups.")
    for name, value in (("exact_limit", exact_limit), ("resamples", resamples)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ArgumentError(f"{name} must be a whole number >= 1, not {value!r}")
