"""The statistics of extraction experiments (npc_nb/analytics/comparison.py), checked
against published worked examples, each cited where it is used, and cross-checked
against SciPy (a test-only dependency: the package itself never imports it)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from npc_nb import NpcError
from npc_nb.analytics.comparison import newcombe_interval
from npc_nb.analytics.intervals import wilson_interval

# -- Newcombe's hybrid score interval ---------------------------------------------------

# Newcombe RG (1998), "Interval estimation for the difference between independent
# proportions: comparison of eleven methods", Statistics in Medicine 17:873-890,
# Table II, method 10 (score interval, no continuity correction): the eight examples.
NEWCOMBE_TABLE_II = [
    ((56, 70, 48, 80), (0.2000, 0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.6000, 0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.5714, 0.0582, 0.8062)),
    ((5, 56, 0, 29), (0.0893, -0.0381, 0.1926)),
    ((0, 10, 0, 20), (0.0000, -0.1611, 0.2775)),
    ((0, 10, 0, 10), (0.0000, -0.2775, 0.2775)),
    ((10, 10, 0, 20), (1.0000, 0.6791, 1.0000)),
    ((10, 10, 0, 10), (1.0000, 0.6075, 1.0000)),
]


@pytest.mark.parametrize(("counts", "published"), NEWCOMBE_TABLE_II)
def test_newcombe_interval_matches_newcombe_1998_table_ii_method_10(
    counts: tuple[int, int, int, int], published: tuple[float, float, float]
) -> None:
    computed = newcombe_interval(*counts)
    assert [round(value, 4) for value in computed] == pytest.approx(list(published), abs=1e-12)


def test_newcombe_interval_is_built_from_the_wilson_intervals_the_metrics_use() -> None:
    """Method 10 combines each arm's Wilson interval (l, u) as
    d - sqrt((p1 - l1)² + (u2 - p2)²), d + sqrt((u1 - p1)² + (p2 - l2)²)."""
    low, high = wilson_interval(pd.Series([56, 48]), pd.Series([70, 80]))
    (l1, l2), (u1, u2) = low.tolist(), high.tolist()
    p1, p2 = 56 / 70, 48 / 80
    expected = (
        p1 - p2,
        p1 - p2 - math.hypot(p1 - l1, u2 - p2),
        p1 - p2 + math.hypot(u1 - p1, p2 - l2),
    )
    assert newcombe_interval(56, 70, 48, 80) == pytest.approx(expected, abs=1e-12)


def test_newcombe_interval_widens_with_the_confidence() -> None:
    _, low90, high90 = newcombe_interval(56, 70, 48, 80, confidence=0.90)
    _, low99, high99 = newcombe_interval(56, 70, 48, 80, confidence=0.99)
    assert low99 < low90 < 0.2 < high90 < high99


@pytest.mark.parametrize("counts", [(0, 0, 3, 10), (3, 10, 0, 0), (0, 0, 0, 0)])
def test_newcombe_interval_without_trials_is_nan_not_an_error(
    counts: tuple[int, int, int, int],
) -> None:
    assert all(math.isnan(value) for value in newcombe_interval(*counts))


@pytest.mark.parametrize(
    ("counts", "confidence"),
    [
        ((11, 10, 3, 10), 0.95),
        ((-1, 10, 3, 10), 0.95),
        ((1.5, 10, 3, 10), 0.95),
        ((1, 10, 3, 10), 1.0),
        ((1, 10, 3, 10), 95),
    ],
)
def test_newcombe_interval_refuses_impossible_counts_and_confidences(
    counts: tuple[float, int, int, int], confidence: float
) -> None:
    with pytest.raises(NpcError, match="must|cannot"):
        newcombe_interval(*counts, confidence=confidence)  # type: ignore[arg-type]
