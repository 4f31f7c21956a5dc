"""The scalar statistics of a comparison: Newcombe's interval for a difference of two
proportions, Fisher's exact test, Pearson's chi-square test (with the incomplete gamma
function behind its p-value) and Holm's adjustment of several p-values.

Each is a pure function of counts, written in plain ``math`` with its formula and
published source in its docstring, so that neither SciPy nor statsmodels is a
dependency (the tests cross-check against SciPy and check each published worked
example). ``analytics.comparison`` builds the experiment's frames from them and
re-exports them. Degenerate counts (no trials) give NaN, never an error or a warning;
impossible ones (negative, fractional, more successes than trials) an ``ArgumentError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from ..errors import ArgumentError

__all__ = ["chi_square_test", "fisher_exact", "holm_adjust", "newcombe_interval", "upper_gamma"]

_EPSILON = 1e-15  # the series and the continued fraction stop at double precision
_TINY = 1e-300  # keeps the Lentz method's denominators away from zero


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
    rows = [row for row in _table(table) if any(row)]
    kept = [j for j in range(len(rows[0]) if rows else 0) if any(row[j] for row in rows)]
    rows = [[row[j] for j in kept] for row in rows]
    if len(rows) < 2 or len(kept) < 2:
        return (math.nan, 0, math.nan)
    row_totals = [sum(row) for row in rows]
    column_totals = [sum(column) for column in zip(*rows, strict=True)]
    n = sum(row_totals)
    statistic = math.fsum(
        (observed - expected) ** 2 / expected
        for row, row_total in zip(rows, row_totals, strict=True)
        for observed, column_total in zip(row, column_totals, strict=True)
        if (expected := row_total * column_total / n)
    )
    df = (len(rows) - 1) * (len(kept) - 1)
    return (statistic, df, upper_gamma(df / 2, statistic / 2))


def upper_gamma(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a), a > 0,
    x >= 0; Q(k/2, x/2) is the upper tail of the chi-square distribution with k degrees
    of freedom. By the series of P = 1 - Q for x < a + 1 and the continued fraction of Q
    (modified Lentz) otherwise, both with the prefactor e^-x x^a / Γ(a) in log space
    (Numerical Recipes, 3rd ed., §6.2; Abramowitz & Stegun 6.5.29 and 6.5.31).
    """
    if not a > 0 or not x >= 0:
        raise ArgumentError(f"Q(a, x) needs a > 0 and x >= 0, not a={a!r}, x={x!r}")
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    prefactor = math.exp(-x + a * math.log(x) - math.lgamma(a))
    limit = 200 + int(20 * math.sqrt(a))  # both converge in O(sqrt(a)) steps
    if x < a + 1:
        return max(0.0, 1.0 - prefactor * _lower_series(a, x, limit))
    return min(1.0, prefactor * _upper_fraction(a, x, limit))


def _lower_series(a: float, x: float, limit: int) -> float:
    """Σ_{n>=0} x^n / (a (a+1) ... (a+n)): P(a, x) = e^-x x^a / Γ(a) times this."""
    term = total = 1.0 / a
    for n in range(1, limit):
        term *= x / (a + n)
        total += term
        if abs(term) < abs(total) * _EPSILON:
            break
    return total


def _upper_fraction(a: float, x: float, limit: int) -> float:
    """1 / (x + 1 - a - 1(1 - a) / (x + 3 - a - 2(2 - a) / (x + 5 - a - ...))), evaluated
    by the modified Lentz method: Q(a, x) = e^-x x^a / Γ(a) times this."""
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, limit):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1 / (d if abs(d) > _TINY else _TINY)
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        if abs(d * c - 1) < _EPSILON:
            break
    return h


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of m p-values (Holm 1979, Scandinavian Journal of
    Statistics 6:65-70): with p_(1) <= ... <= p_(m) sorted,

        adjusted p_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))

    so the adjusted values keep the order of the raw ones and never exceed 1. Rejecting
    where the adjusted value is below alpha controls the family-wise error rate at alpha.
    NaN stays NaN in its place and does not count in m.
    """
    values = [float(p) for p in pvalues]
    if any(not (math.isnan(p) or 0 <= p <= 1) for p in values):
        raise ArgumentError(f"p-values must lie between 0 and 1 (or be NaN), not {values!r}")
    order = sorted((i for i, p in enumerate(values) if not math.isnan(p)), key=values.__getitem__)
    adjusted = list(values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * values[i]))
        adjusted[i] = running
    return adjusted


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
