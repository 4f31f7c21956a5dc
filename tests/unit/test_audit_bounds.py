"""The audit's error bound and sample-size planner (npc_nb/analytics/audit_bounds.py),
against published and hand-computed values, cross-checked against SciPy (a test-only
dependency) and checked for what a bound must do: cover the true rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from npc_nb import InvalidValueError, NpcError
from npc_nb.analytics.audit_bounds import audit_sample_size, error_bound, hypergeometric_ways

# -- reference values ---------------------------------------------------------------------


def test_zero_errors_in_59_bounds_the_rate_below_five_percent_and_58_do_not() -> None:
    assert error_bound(0, 59) < 0.05 <= error_bound(0, 58)
    assert error_bound(0, 59) == pytest.approx(0.04951, abs=1e-5)


def test_zero_in_ten_is_the_published_clopper_pearson_limit() -> None:
    # One-sided 95%: 1 - 0.05 ** (1 / 10) = 0.2589 (the "rule of three" exact form).
    assert error_bound(0, 10) == pytest.approx(1 - 0.05 ** (1 / 10), rel=1e-12)
    assert error_bound(0, 10) == pytest.approx(0.2589, abs=1e-4)


def test_every_card_wrong_bounds_the_rate_at_one() -> None:
    assert error_bound(7, 7) == 1.0
    assert error_bound(7, 7, population=30) == 1.0


def test_a_hand_computed_hypergeometric_bound() -> None:
    # Batch of 10, 3 drawn, none wrong. With D wrong cards P(X = 0) = C(10-D, 3)/C(10, 3)
    # = 120, 84, 56, 35, 20, 10, 4, 1 over 120 for D = 0..7: > 0.05 (6/120) up to D = 5
    # (10/120), not at D = 6 (4/120). The bound is 5/10.
    assert error_bound(0, 3, population=10) == 0.5
    # At 80%: P > 0.2 (24/120) up to D = 4 (20/120 is not > 24/120; 35/120 is): 3/10.
    assert error_bound(0, 3, confidence=0.8, population=10) == 0.3


def test_a_whole_batch_reviewed_is_bounded_by_what_was_found() -> None:
    assert error_bound(3, 50, population=50) == 0.06
    assert error_bound(0, 20, population=20) == 0.0


def test_the_planner_gives_59_for_the_defaults() -> None:
    assert audit_sample_size() == 59
    assert audit_sample_size(expected_errors=1) == 93  # 1 in 93 < 5%, 1 in 92 not
    assert error_bound(1, 93) < 0.05 <= error_bound(1, 92)


def test_a_small_batch_may_need_every_card_reviewed() -> None:
    # 1 wrong card of 20 is exactly 5%: only a sample of 19 (P(miss it) = 1/20) shows it.
    assert audit_sample_size(population=20) == 19
    assert audit_sample_size(population=100) == 45
    assert audit_sample_size(population=1000) == 57


def test_planned_size_is_the_smallest_whose_bound_meets_the_tolerance() -> None:
    for population in (None, 40, 100, 500, 3000):
        for errors in (0, 1, 2):
            if population is not None and errors >= math.ceil(0.05 * population):
                continue
            n = audit_sample_size(0.05, 0.95, population, errors)
            assert error_bound(errors, n, 0.95, population) < 0.05
            if n - 1 > errors:
                assert error_bound(errors, n - 1, 0.95, population) >= 0.05


def test_tolerance_is_read_as_written_for_a_finite_batch() -> None:
    # 0.07 * 100 is 7.000000000000001 in floating point: 7 wrong cards must still be
    # "at the tolerance", so the bound 7/100 does not meet 0.07.
    n = audit_sample_size(0.07, 0.95, population=100)
    assert error_bound(0, n, population=100) < 0.07
    assert error_bound(0, n - 1, population=100) >= 0.07


# -- nonsense is refused -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: error_bound(5, 4),
        lambda: error_bound(-1, 4),
        lambda: error_bound(1.5, 4),
        lambda: error_bound(True, 4),
        lambda: error_bound(0, 10, confidence=1.0),
        lambda: error_bound(0, 10, confidence=0),
        lambda: error_bound(0, 10, confidence="95%"),
        lambda: error_bound(0, 10, population=9),
        lambda: error_bound(0, 0, population=0),
        lambda: audit_sample_size(tolerance=0),
        lambda: audit_sample_size(tolerance=1.2),
        lambda: audit_sample_size(population=100, expected_errors=5),
        lambda: audit_sample_size(expected_errors=-1),
    ],
)
def test_nonsense_is_refused_with_an_npc_error(call: object) -> None:
    with pytest.raises(InvalidValueError) as caught:
        call()  # type: ignore[operator]
    assert isinstance(caught.value, NpcError)
    assert "take" in str(caught.value) or "Use one of" in str(caught.value)


def test_numpy_counts_are_accepted() -> None:
    assert error_bound(np.int64(0), np.int64(59)) == error_bound(0, 59)


# -- cross-checks against SciPy ------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
def test_clopper_pearson_matches_the_beta_quantile(confidence: float) -> None:
    for sample in (1, 2, 5, 10, 30, 59, 100, 250, 1000, 5000):
        for errors in sorted({0, 1, 2, 3, sample // 10, sample // 2, sample - 1} - {sample}):
            if errors > sample:
                continue
            expected = scipy.stats.beta.ppf(confidence, errors + 1, sample - errors)
            assert error_bound(errors, sample, confidence) == pytest.approx(
                expected, rel=1e-9, abs=1e-12
            ), (errors, sample)


def _scipy_hypergeometric_bound(errors: int, sample: int, population: int, c: float) -> float:
    """The largest D with P(X <= errors) > 1 - c, in floating point: an exact tie (P equal
    to 1 - c, as 50/500 = 0.1 is) is not "more than", whatever 1 - 0.9 rounds to."""
    d = np.arange(population + 1)
    cdf = scipy.stats.hypergeom.cdf(errors, population, d, sample)
    return float(d[cdf > round(1 - c, 12) * (1 + 1e-9)].max()) / population


@pytest.mark.parametrize("population", [10, 37, 100, 500])
def test_hypergeometric_bound_matches_scipy(population: int) -> None:
    for sample in sorted({1, 3, population // 4, population // 2, population - 1, population}):
        for errors in sorted({0, 1, 2, sample // 3, sample}):
            if errors > sample:
                continue
            for confidence in (0.9, 0.95, 0.99):
                mine = error_bound(errors, sample, confidence, population)
                theirs = _scipy_hypergeometric_bound(errors, sample, population, confidence)
                assert mine == theirs, (errors, sample, population, confidence)


# -- properties ---------------------------------------------------------------------------

counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)


@settings(max_examples=60, deadline=None)
@given(counts, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_more_errors_never_lower_the_bound(pair: tuple[int, int], confidence: float) -> None:
    errors, sample = pair
    if errors < sample:
        assert error_bound(errors + 1, sample, confidence) >= error_bound(
            errors, sample, confidence
        )


@settings(max_examples=60, deadline=None)
@given(counts, st.sampled_from([0.8, 0.95, 0.99]))
def test_a_larger_sample_with_the_same_errors_never_raises_the_bound(
    pair: tuple[int, int], confidence: float
) -> None:
    errors, sample = pair
    assert error_bound(errors, sample + 1, confidence) <= error_bound(errors, sample, confidence)


@settings(max_examples=60, deadline=None)
@given(counts, st.integers(min_value=0, max_value=2000), st.sampled_from([0.9, 0.95]))
def test_a_known_batch_size_never_loosens_the_bound(
    pair: tuple[int, int], extra: int, confidence: float
) -> None:
    errors, sample = pair
    population = sample + extra
    assert error_bound(errors, sample, confidence, population) <= error_bound(
        errors, sample, confidence
    )


@pytest.mark.parametrize(("population", "sample"), [(12, 4), (20, 19), (30, 10), (40, 25)])
def test_the_hypergeometric_bound_covers_every_true_count(population: int, sample: int) -> None:
    """For each true number of wrong cards D, the exact chance (by enumeration) that the
    bound falls below D / N is at most 1 - confidence."""
    for confidence in (0.8, 0.95):
        bounds = [error_bound(x, sample, confidence, population) for x in range(sample + 1)]
        for defects in range(population + 1):
            pmf = scipy.stats.hypergeom.pmf(np.arange(sample + 1), population, defects, sample)
            missed = sum(p for p, b in zip(pmf, bounds, strict=True) if b < defects / population)
            assert missed <= 1 - confidence + 1e-12, (defects, confidence)


@pytest.mark.parametrize("sample", [5, 20, 59])
def test_clopper_pearson_covers_every_true_rate(sample: int) -> None:
    bounds = [error_bound(x, sample) for x in range(sample + 1)]
    for rate in np.linspace(0.001, 0.999, 181):
        pmf = scipy.stats.binom.pmf(np.arange(sample + 1), sample, rate)
        missed = sum(p for p, b in zip(pmf, bounds, strict=True) if b < rate)
        assert missed <= 0.05 + 1e-12, rate


def test_bound_is_exact_not_approximate_at_zero_errors() -> None:
    for sample in (1, 7, 59, 300):
        assert error_bound(0, sample) == pytest.approx(-math.expm1(math.log(0.05) / sample))


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=1, max_value=60), st.data())
def test_the_sum_of_ways_by_ratios_is_the_sum_of_binomial_products(
    population: int, data: st.DataObject
) -> None:
    defects = data.draw(st.integers(min_value=0, max_value=population))
    sample = data.draw(st.integers(min_value=0, max_value=population))
    errors = data.draw(st.integers(min_value=0, max_value=sample))
    direct = sum(
        math.comb(defects, x) * math.comb(population - defects, sample - x)
        for x in range(errors + 1)
        if sample - x <= population - defects
    )
    assert hypergeometric_ways(errors, population, defects, sample) == direct


def test_a_large_batch_is_bounded_quickly_and_exactly() -> None:
    """250 wrong in 5,000 of 100,000: the same bound as SciPy's, from integer sums."""
    d = np.arange(4000, 8001)  # the bound lies in here (5,523 wrong cards)
    cdf = scipy.stats.hypergeom.cdf(250, 100_000, d, 5000)
    assert cdf[0] > 0.05 > cdf[-1]
    assert error_bound(250, 5000, population=100_000) == d[cdf > 0.05].max() / 100_000
