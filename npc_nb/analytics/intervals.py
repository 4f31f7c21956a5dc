"""95% confidence intervals for the metrics' rates, computed column-wise with numpy.

A rate of 3 out of 4 and one of 300 out of 400 are both 0.75, but they are not the same
evidence; a paper needs the interval. The key design choice: score intervals (Wilson's
for a proportion, its Poisson counterpart for a count per unit), because they stay
inside the possible range, are defined at 0 and at n, and keep close to 95% coverage
for the small counts a lab has; the textbook ``p ± 1.96 sqrt(p(1-p)/n)`` collapses to
a zero-width interval at 0 and at 1. Where ``n`` is 0 the interval is NaN, like the rate.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

__all__ = ["Z95", "poisson_score_interval", "wilson_interval"]

#: The standard normal quantile of a two-sided 95% interval (1.95996...).
Z95 = NormalDist().inv_cdf(0.975)


def wilson_interval(
    successes: pd.Series, n: pd.Series, z: float = Z95
) -> tuple[pd.Series, pd.Series]:
    """The Wilson score interval of ``successes / n`` (each 0 <= successes <= n):

    (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n),  p = successes / n.
    """
    k, total = _floats(successes, n)
    p = k / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z / (1 + z * z / total) * np.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    return pd.Series(low, index=successes.index), pd.Series(high, index=successes.index)


def poisson_score_interval(
    events: pd.Series, n: pd.Series, z: float = Z95
) -> tuple[pd.Series, pd.Series]:
    """The score interval of a rate ``events / n`` whose events may outnumber ``n`` (a
    count per unit, such as repeats per new candidate), taking the events as Poisson:

    (x + z²/2 ± z·sqrt(x + z²/4)) / n,  x = events.
    """
    x, total = _floats(events, n)
    centre, half = x + z * z / 2, z * np.sqrt(x + z * z / 4)
    low, high = np.maximum((centre - half) / total, 0.0), (centre + half) / total
    return pd.Series(low, index=events.index), pd.Series(high, index=events.index)


def _floats(count: pd.Series, n: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Counts as float arrays, with NaN for ``n`` = 0 (no interval without a denominator)."""
    total = n.to_numpy(dtype="float64", na_value=np.nan)
    total = np.where(total > 0, total, np.nan)
    return count.to_numpy(dtype="float64", na_value=np.nan), total
