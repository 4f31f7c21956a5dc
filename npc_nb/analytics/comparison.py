"""Comparing two extractors: differences of rates, exact and chi-square tests, Holm's
adjustment and a cluster bootstrap, as pure functions (the statistics of experiments).

An experiment asks whether arm B's candidates are approved more often than arm A's. The
answer a paper needs is a difference with its interval and a p-value, corrected for the
number of arms compared, with the counts beside it. The key design choice: only methods
with a published worked example to test against (Newcombe's hybrid score interval,
Fisher's exact test, Pearson's chi-square, Holm's step-down), written here in plain
``math`` and NumPy, so SciPy is not a dependency (the tests cross-check against it).
Cards cluster within conversations, so the frame-level comparison also offers a
bootstrap that resamples whole conversations. Degenerate input (no trials, an empty
frame) gives NaN and, where a frame is returned, a ``note`` saying why; never an error
or a warning. NumPy and pandas are imported inside the functions: ``import npc_nb``
stays fast.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "chi_square_test",
    "cluster_bootstrap_difference",
    "compare_categories",
    "compare_proportions",
    "fisher_exact",
    "holm_adjust",
    "newcombe_interval",
]


def newcombe_interval(
    x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """The difference ``p1 - p2`` of two independent proportions and its interval by
    Newcombe's hybrid score method (Newcombe 1998, Statistics in Medicine 17:873-890,
    method 10), built from the Wilson score interval (l_i, u_i) of each proportion:

        d = p1 - p2,  p_i = x_i / n_i
        low  = d - sqrt((p1 - l1)² + (u2 - p2)²)
        high = d + sqrt((u1 - p1)² + (p2 - l2)²)

    Returns ``(d, low, high)``; NaN for all three when ``n1`` or ``n2`` is 0.
    """
    _check_count(x1, n1)
    _check_count(x2, n2)
    if n1 == 0 or n2 == 0:
        return (math.nan, math.nan, math.nan)
    z = _z(confidence)
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = _wilson(x1, n1, z)
    l2, u2 = _wilson(x2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (d, low, high)


def fisher_exact(table: Sequence[Sequence[int]]) -> float:
    """The two-sided p-value of Fisher's exact test for a 2x2 table of counts
    ``[[a, b], [c, d]]`` (rows the two groups, columns success and failure).

    With the margins fixed, ``a`` follows the hypergeometric distribution
    P(a) = C(a+c, a) C(b+d, b) / C(n, a+b). The p-value sums P over every table with
    the same margins that is no more likely than the observed one, within a relative
    tolerance of 1e-7 as SciPy does (Fisher 1935; Agresti, Categorical Data Analysis,
    §3.5). Computed in log space with ``math.lgamma``, so large counts do not overflow.
    NaN when a row (a group) has no counts; 1.0 when a column is empty (nothing varies).
    """
    (a, b), (c, d) = _table(table, shape=(2, 2))
    trials1, trials2, successes = a + b, c + d, a + c
    if trials1 == 0 or trials2 == 0:
        return math.nan
    n = trials1 + trials2
    log_total = _log_choose(n, successes)

    def log_p(k: int) -> float:  # P(a = k): hypergeometric, the margins fixed
        return _log_choose(trials1, k) + _log_choose(trials2, successes - k) - log_total

    threshold = log_p(a) + math.log1p(1e-7)
    tables = range(max(0, successes - trials2), min(trials1, successes) + 1)
    p = math.fsum(math.exp(value) for k in tables if (value := log_p(k)) <= threshold)
    return min(p, 1.0)


def chi_square_test(table: Sequence[Sequence[float]]) -> tuple[float, int, float]:
    """Pearson's chi-square test of independence for an r x c table of counts:

        X² = Σ (O_ij - E_ij)² / E_ij,  E_ij = (row_i total)(column_j total) / n
        df = (r - 1)(c - 1),  p = Q(df/2, X²/2)

    where Q is the regularised upper incomplete gamma function, the chi-square
    distribution's upper tail (Pearson 1900; Agresti, Categorical Data Analysis, §3.2).
    No continuity correction. Rows and columns that are all zero are dropped first; a
    table left with fewer than two rows or two columns gives ``(nan, 0, nan)``.
    """
    raise NotImplementedError


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of m p-values (Holm 1979, Scandinavian Journal of
    Statistics 6:65-70): with p_(1) <= ... <= p_(m) sorted,

        adjusted p_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))

    so the adjusted values keep the order of the raw ones and never exceed 1. Rejecting
    where the adjusted value is below alpha controls the family-wise error rate at alpha.
    NaN stays NaN in its place and does not count in m.
    """
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


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
    raise NotImplementedError


def _wilson(x: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of x / n (Wilson 1927), the scalar form of
    ``analytics.intervals.wilson_interval`` (which works on Series):

    (2x + z² ± z sqrt(z² + 4x(n - x)/n)) / (2(n + z²)).
    """
    root = z * math.sqrt(z * z + 4 * x * (n - x) / n)
    denominator = 2 * (n + z * z)
    return ((2 * x + z * z - root) / denominator, (2 * x + z * z + root) / denominator)


def _whole(value: object) -> bool:
    """Whether ``value`` is a whole number (an int, or a float or numpy number like 3.0)."""
    if isinstance(value, bool | str | bytes):
        return False
    try:
        return float(value).is_integer()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _log_choose(n: int, k: int) -> float:
    """log C(n, k), through log-gamma so that large counts do not overflow."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _table(table: Sequence[Sequence[Any]], shape: tuple[int, int] | None = None) -> list[list[int]]:
    """A table of counts as lists of ints: rectangular, whole numbers >= 0, of ``shape``."""
    try:
        rows = [list(row) for row in table]
    except TypeError:
        raise ArgumentError(
            f"A table of counts is a list of rows, like [[3, 1], [1, 3]], not {table!r}"
        ) from None
    widths = {len(row) for row in rows}
    if len(widths) > 1 or (shape is not None and (len(rows), *widths) != shape):
        wanted = "a 2x2 table [[a, b], [c, d]]" if shape == (2, 2) else "rows of equal length"
        raise ArgumentError(f"Expected {wanted} of counts, got {rows!r}")
    for row in rows:
        for value in row:
            _check_count(value, value)
    return [[int(value) for value in row] for row in rows]


def _z(confidence: float) -> float:
    """The standard normal quantile of a two-sided interval of this confidence."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ArgumentError(f"confidence must be a number between 0 and 1, not {confidence!r}")
    if not 0 < confidence < 1:
        raise ArgumentError(
            f"confidence must be between 0 and 1 (0.95 for a 95% interval), not {confidence!r}"
        )
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _check_count(successes: int, trials: int) -> None:
    """Refuse counts that are not whole numbers with 0 <= successes <= trials."""
    for value in (successes, trials):
        if not _whole(value) or value < 0:
            raise ArgumentError(
                f"Counts must be whole numbers >= 0, not {value!r}: pass the number of "
                "successes and of trials."
            )
    if successes > trials:
        raise ArgumentError(
            f"{successes} successes out of {trials} trials: successes cannot exceed trials."
        )
