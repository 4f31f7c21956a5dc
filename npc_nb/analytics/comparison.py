"""Comparing two extractors: differences of rates, exact and chi-square tests, Holm's
adjustment and a cluster bootstrap, as pure functions (the statistics of experiments).

An experiment asks whether arm B's candidates are approved more often than arm A's. The
answer a paper needs is a difference with its interval and a p-value, corrected for the
number of arms compared, with the counts beside it. The key design choice: only methods
with a published worked example to test against (Newcombe's hybrid score interval,
Fisher's exact test, Pearson's chi-square, Holm's step-down), written here in plain
``math`` and NumPy, so SciPy is not a dependency (the tests cross-check against it).
The scalar tests live in ``analytics.significance`` and are re-exported here; this
module builds the experiment's frames from them. Cards cluster within conversations,
so it also offers a bootstrap that resamples whole conversations, the caveat that says
when that bootstrap cannot be trusted (few conversations, an arm at 0 or 1), and
re-exports the permutation test over conversations (``analytics.permutation``), the
test to report when conversations are few. Degenerate input (no
trials, an empty frame) gives NaN and, where a frame is returned, a ``note`` saying
why; never an error or a warning. NumPy and pandas are imported inside the functions:
``import npc_nb`` stays fast.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, InvalidValueError
from .clusters import cluster_sums, require_columns
from .permutation import permutation_test_difference
from .significance import (
    _check_count,
    _z,
    chi_square_test,
    fisher_exact,
    holm_adjust,
    newcombe_interval,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FEW_CONVERSATIONS",
    "bootstrap_caveat",
    "chi_square_test",
    "cluster_bootstrap_difference",
    "compare_categories",
    "compare_proportions",
    "fisher_exact",
    "holm_adjust",
    "newcombe_interval",
    "permutation_test_difference",
]

#: Below this many conversations a percentile bootstrap over them is not to be trusted.
FEW_CONVERSATIONS = 20


def cluster_bootstrap_difference(
    frame: pd.DataFrame,
    *,
    cluster: str,
    group: str,
    outcome: str,
    baseline: Any,
    other: Any,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, int]:
    """A percentile bootstrap interval for (rate of ``outcome`` in group ``other``) -
    (rate in group ``baseline``), resampling whole clusters (Davison & Hinkley 1997,
    Bootstrap Methods and their Application, §3.8; Field & Welsh 2007, JRSS B 69:369-390).

    ``frame`` has one row per observation (a card): its ``cluster`` (the conversation),
    its ``group`` (the arm) and a 0/1 or boolean ``outcome``; rows with a missing outcome
    are left out. Each resample draws the clusters with replacement (both arms' rows of
    a drawn cluster come together: the design is paired by conversation) and computes
    Σ successes / Σ trials per arm over the drawn clusters. The interval is the
    (α/2, 1-α/2) quantiles of the differences. Resamples in which an arm has no trials
    are dropped; returns ``(low, high, resamples used)``, NaN and 0 when an arm has no
    rows at all. Seeded with ``numpy.random.default_rng(seed)``.
    """
    import numpy as np

    require_columns(frame, cluster, group, outcome)
    if baseline == other:
        raise ArgumentError(f"baseline and other are both {other!r}: name two different groups.")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ArgumentError(f"resamples must be a whole number >= 1, not {resamples!r}")
    _z(confidence)
    sums = cluster_sums(frame, cluster, group, outcome, (baseline, other))
    if sums is None:
        return (math.nan, math.nan, 0)
    successes, trials = sums  # each 2 x K: baseline's row, then other's
    draws = np.random.default_rng(seed).integers(0, trials.shape[1], (resamples, trials.shape[1]))
    drawn_successes, drawn_trials = successes[:, draws].sum(axis=2), trials[:, draws].sum(axis=2)
    usable = (drawn_trials > 0).all(axis=0)
    if not usable.any():
        return (math.nan, math.nan, 0)
    rates = drawn_successes[:, usable] / drawn_trials[:, usable]
    alpha = 1 - confidence
    low, high = np.quantile(rates[1] - rates[0], [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high), int(usable.sum()))


def bootstrap_caveat(conversations: int, rates: dict[Any, float]) -> str | None:
    """Why a cluster bootstrap interval cannot be trusted, or None: fewer than
    ``FEW_CONVERSATIONS`` conversations, or an arm (``rates``: arm -> its rate) whose rate
    is 0 or 1.

    A percentile bootstrap over few clusters is too narrow: the resamples can only mix
    the few conversations' rates, so the interval covers the true difference less often
    than it claims (Cameron, Gelbach & Miller 2008, Review of Economics and Statistics
    90:414-427, with 5 to 30 clusters; Davison & Hinkley 1997, §2.5, on small samples).
    An arm at 0 or 1 has the same rate in every resample, so the interval carries none
    of that arm's uncertainty. The note points to the Newcombe interval and the
    permutation test, which are exact or nearly so at any size.
    """
    reasons = []
    if conversations < FEW_CONVERSATIONS:
        reasons.append(f"only {conversations} conversations (fewer than {FEW_CONVERSATIONS})")
    reasons += [
        f"arm {arm!r} has a rate of {rate:g}" for arm, rate in rates.items() if rate in (0.0, 1.0)
    ]
    if not reasons:
        return None
    return (
        f"the bootstrap interval cannot be trusted here: {'; '.join(reasons)}. Report the "
        "Newcombe interval (ci_low, ci_high) and the permutation test (permutation_p)."
    )


def compare_proportions(
    counts: pd.DataFrame, *, baseline: Any, confidence: float = 0.95
) -> pd.DataFrame:
    """Each arm against the baseline arm on a yes/no outcome. ``counts`` has one row per
    arm with columns ``arm``, ``successes`` and ``trials``. Returns one row per other arm:
    ``arm``, ``baseline``, the counts of both (``successes``, ``trials``,
    ``baseline_successes``, ``baseline_trials``), ``rate``, ``baseline_rate``,
    ``difference`` (rate - baseline_rate) with its Newcombe interval ``ci_low``,
    ``ci_high`` (see ``newcombe_interval``), ``p_value`` of Fisher's exact test on the
    2x2 table, ``p_holm`` (Holm-adjusted across the arms compared), ``test``
    (``"fisher"``) and ``note`` (why a value is NaN, else missing).
    """
    import pandas as pd

    require_columns(counts, "arm", "successes", "trials")
    _z(confidence)
    base, others = _split_arms(counts, baseline)
    rows = []
    for _, row in others.iterrows():
        x, n = _count(row["successes"]), _count(row["trials"])
        bx, bn = _count(base["successes"]), _count(base["trials"])
        difference, low, high = newcombe_interval(x, n, bx, bn, confidence)
        rows.append(
            {
                "arm": row["arm"],
                "baseline": baseline,
                "successes": x,
                "trials": n,
                "baseline_successes": bx,
                "baseline_trials": bn,
                "rate": x / n if n else math.nan,
                "baseline_rate": bx / bn if bn else math.nan,
                "difference": difference,
                "ci_low": low,
                "ci_high": high,
                "p_value": fisher_exact([[x, n - x], [bx, bn - bx]]),
                "test": "fisher",
                "note": _no_trials(row["arm"], n, bn),
            }
        )
    frame = pd.DataFrame(rows, columns=[*_PROPORTION_COLUMNS, "test", "note"])
    return _with_holm(frame)


def compare_categories(counts: pd.DataFrame, *, baseline: Any) -> pd.DataFrame:
    """Each arm against the baseline arm on an outcome of several categories (approved,
    edited, rejected). ``counts`` has one row per arm: ``arm`` and one count column per
    category. Returns one row per other arm: ``arm``, ``baseline``, ``trials``,
    ``baseline_trials``, each category's count for the arm and, prefixed ``baseline_``,
    for the baseline, then Pearson's ``statistic``, ``df`` and ``p_value`` on the 2 x k
    table (see ``chi_square_test``), ``p_holm`` (Holm across the arms), ``test``
    (``"chi-square"``) and ``note`` (why a value is NaN, or that an expected count is
    below 5, where the chi-square approximation is rough).
    """
    import pandas as pd

    require_columns(counts, "arm")
    categories = [str(column) for column in counts.columns if column != "arm"]
    base, others = _split_arms(counts, baseline)
    base_counts = [] if base is None else [_count(base[category]) for category in categories]
    rows = []
    for _, row in others.iterrows():
        arm_counts = [_count(row[category]) for category in categories]
        statistic, df, p = chi_square_test([arm_counts, base_counts])
        rows.append(
            {
                "arm": row["arm"],
                "baseline": baseline,
                "trials": sum(arm_counts),
                "baseline_trials": sum(base_counts),
                **dict(zip(categories, arm_counts, strict=True)),
                **{f"baseline_{c}": v for c, v in zip(categories, base_counts, strict=True)},
                "statistic": statistic,
                "df": df,
                "p_value": p,
                "test": "chi-square",
                "note": _chi_square_note(row["arm"], arm_counts, base_counts, statistic),
            }
        )
    columns = ["arm", "baseline", "trials", "baseline_trials", *categories]
    columns += [f"baseline_{c}" for c in categories] + ["statistic", "df", "p_value"]
    frame = pd.DataFrame(rows, columns=[*columns, "test", "note"])
    return _with_holm(frame)


_PROPORTION_COLUMNS = [
    "arm",
    "baseline",
    "successes",
    "trials",
    "baseline_successes",
    "baseline_trials",
    "rate",
    "baseline_rate",
    "difference",
    "ci_low",
    "ci_high",
    "p_value",
]


def _split_arms(counts: pd.DataFrame, baseline: Any) -> tuple[Any, pd.DataFrame]:
    """The baseline's row and the other arms' rows; an empty frame has neither."""
    arms = counts["arm"].tolist()
    if len(set(arms)) < len(arms):
        raise ArgumentError(f"Each arm needs exactly one row of counts; the arms are {arms!r}")
    if counts.empty:
        return None, counts
    if baseline not in arms:
        raise InvalidValueError(
            "baseline", baseline, tuple(arms), lead=f"No arm {baseline!r} in the counts"
        )
    return counts[counts["arm"] == baseline].iloc[0], counts[counts["arm"] != baseline]


def _count(value: Any) -> int:
    """One count of the frame as an int (a whole number >= 0)."""
    _check_count(value, value)
    return int(value)


def _no_trials(arm: Any, trials: int, baseline_trials: int) -> str | None:
    if not trials:
        return f"no trials in arm {arm!r}: no rate to compare"
    return "no trials in the baseline: no rate to compare" if not baseline_trials else None


def _chi_square_note(
    arm: Any, counts: list[int], baseline_counts: list[int], statistic: float
) -> str | None:
    """Why the test is NaN, or that the chi-square approximation is rough here."""
    if not sum(counts) or not sum(baseline_counts):
        return _no_trials(arm, sum(counts), sum(baseline_counts))
    if math.isnan(statistic):
        return "every card in both arms fell in one category: nothing to test"
    n = sum(counts) + sum(baseline_counts)
    totals = [a + b for a, b in zip(counts, baseline_counts, strict=True) if a + b]
    if min(totals) * min(sum(counts), sum(baseline_counts)) / n < 5:  # the smallest E_ij
        return "an expected count is below 5: the chi-square p-value is approximate"
    return None


def _with_holm(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``p_holm`` after ``p_value`` (Holm across the arms compared); notes as strings."""
    frame.insert(
        frame.columns.get_loc("p_value") + 1, "p_holm", holm_adjust(frame["p_value"].tolist())
    )
    frame["p_value"] = frame["p_value"].astype("float64")
    frame["p_holm"] = frame["p_holm"].astype("float64")
    frame["note"] = frame["note"].astype("string")
    return frame
