"""The audit's sequential design (npc_nb/analytics/audit_plan.py, audit_chances.py): its
exact validity under repeated looks, that it is not merely conservative, the targets of
the issue, and the naive re-test it replaces."""

from __future__ import annotations

import dataclasses
import itertools
import math
from fractions import Fraction

import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from npc_nb import InvalidValueError
from npc_nb.analytics.audit_bounds import audit_sample_size, error_bound
from npc_nb.analytics.audit_chances import audit_chances
from npc_nb.analytics.audit_plan import AuditPlan, plan_audit


def _naive(population: int | None, looks: tuple[int, ...]) -> AuditPlan:
    """Every look read at plain 95%, as if it were the only one."""
    thresholds = tuple(_most_errors_meeting(n, population) for n in looks)
    return AuditPlan(population, 0.05, 0.95, looks, 0.95, thresholds, "naive re-test")


def _most_errors_meeting(sample: int, population: int | None) -> int:
    errors = -1
    while error_bound(errors + 1, sample, 0.95, population) < 0.05:
        errors += 1
    return errors


def _enumerated_approval(plan: AuditPlan, defects: int) -> Fraction:
    """By brute force: every placement of the wrong cards in the random order is equally
    likely; the errors at look j are the wrong cards among the first looks[j]."""
    assert plan.population is not None
    approved = total = 0
    for placement in itertools.combinations(range(plan.population), defects):
        total += 1
        for size, threshold in zip(plan.looks, plan.thresholds, strict=True):
            if sum(1 for position in placement if position < size) <= threshold:
                approved += 1
                break
    return Fraction(approved, total)


# -- exact validity -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("population", "tolerance"),
    [(20, 0.05), (100, 0.05), (500, 0.05), (1000, 0.05), (1000, 0.1), (3000, 0.03), (250, 0.08)],
)
def test_a_batch_at_the_tolerance_is_approved_at_most_one_time_in_twenty(
    population: int, tolerance: float
) -> None:
    plan = plan_audit(population, tolerance, 0.95)
    worst = math.ceil(Fraction(str(tolerance)) * population)
    assert plan.approval_probability(worst) <= 0.05
    for worse in (worst + 1, worst + 5, min(population, 2 * worst)):  # and above it
        assert plan.approval_probability(worse) <= plan.approval_probability(worst)


def test_the_programme_matches_brute_force_enumeration() -> None:
    plan = dataclasses.replace(_naive(14, (3, 6, 9, 12)), thresholds=(0, 0, 1, 2))
    for defects in range(6):
        assert plan.approval_probability(defects) == pytest.approx(
            float(_enumerated_approval(plan, defects)), abs=1e-12
        )


def test_the_programme_matches_a_sequential_hypergeometric_sum() -> None:
    plan = plan_audit(60, 0.1, 0.9, looks=(10, 20, 30))
    defects = 6
    approve = 0.0
    for first in range(defects + 1):  # errors in the first 10, then in the next 10, ...
        p1 = scipy.stats.hypergeom.pmf(first, 60, defects, 10)
        if first <= plan.thresholds[0]:
            approve += p1
            continue
        for second in range(defects - first + 1):
            p2 = p1 * scipy.stats.hypergeom.pmf(second, 50, defects - first, 10)
            if first + second <= plan.thresholds[1]:
                approve += p2
                continue
            for third in range(defects - first - second + 1):
                p3 = p2 * scipy.stats.hypergeom.pmf(third, 40, defects - first - second, 10)
                if first + second + third <= plan.thresholds[2]:
                    approve += p3
    assert plan.approval_probability(defects) == pytest.approx(approve, abs=1e-12)


def test_the_default_design_is_not_merely_conservative() -> None:
    plan = plan_audit(1000)
    assert plan.approval_probability(50) > 0.04  # spends nearly all of its 5%
    assert plan.approval_probability(20) > 0.99  # and approves a good batch
    assert plan.nominal_confidence > 0.95  # the price of looking more than once


# -- the targets ------------------------------------------------------------------


def test_a_thousand_at_two_percent_settles_within_250_questions_on_average() -> None:
    plan = plan_audit(1000, 0.05, 0.95)
    assert plan.expected_questions(20) <= 250
    assert plan.approval_probability(50) <= 0.05


def test_the_naive_re_test_approves_a_bad_batch_about_one_time_in_seven() -> None:
    """The issue's simulation (first sample 59, 20 more per look up to 400, each look at
    plain 95%, true error 5%), computed exactly: ~14% instead of at most 5%."""
    looks = tuple(range(59, 401, 20))
    unbounded = _naive(None, looks)
    assert audit_chances(
        None, unbounded.looks, unbounded.thresholds, 0.05
    ).approve == pytest.approx(0.139, abs=0.001)
    assert _naive(1000, looks).approval_probability(50) > 0.14
    calibrated = plan_audit(1000, looks=looks)
    assert calibrated.approval_probability(50) <= 0.05


# -- the plan's shape ---------------------------------------------------------------------


def test_one_look_is_the_fixed_design() -> None:
    plan = plan_audit(None, looks=1)
    assert plan.looks == (59,)
    assert plan.thresholds == (0,)
    assert plan.nominal_confidence == 0.95
    finite = plan_audit(1000, looks=1)
    assert finite.looks == (audit_sample_size(population=1000),) == (57,)
    assert finite.nominal_confidence == 0.95


def test_small_batches_get_sensible_plans() -> None:
    tiny = plan_audit(20)
    assert tiny.looks == (20,)  # only the whole batch shows 20 cards are within 5%
    assert tiny.verdict(0, 20) == "approve"
    assert tiny.verdict(1, 20) == "fail"
    hundred = plan_audit(100)
    assert hundred.looks[-1] == 100
    assert hundred.approval_probability(5) <= 0.05


def test_verdicts_follow_the_thresholds() -> None:
    plan = plan_audit(1000)
    first_approving = next(i for i, t in enumerate(plan.thresholds) if t >= 0)
    n = plan.looks[first_approving]
    assert plan.verdict(0, n) == "approve"
    assert plan.bound(0, n) < 0.05
    assert plan.verdict(plan.thresholds[first_approving] + 1, n) == "extend"
    assert plan.bound(plan.thresholds[first_approving] + 1, n) >= 0.05
    assert plan.verdict(plan.thresholds[-1] + 1, plan.looks[-1]) == "fail"
    assert plan.verdict(max(plan.thresholds) + 1, plan.looks[0]) == "fail"


def test_bound_and_verdict_agree_at_every_look() -> None:
    for population in (None, 100, 1000):
        plan = plan_audit(population)
        for n, threshold in zip(plan.looks, plan.thresholds, strict=True):
            for errors in range(max(0, threshold - 1), threshold + 3):
                meets = plan.bound(errors, n) < plan.tolerance
                assert meets == (plan.verdict(errors, n) == "approve"), (population, n, errors)


def test_the_method_says_what_was_done() -> None:
    plan = plan_audit(1000)
    assert "Group-sequential" in plan.method
    assert str(plan.looks[0]) in plan.method
    assert "Fixed sample of 57" in plan_audit(1000, looks=1).method


@pytest.mark.parametrize(
    "call",
    [
        lambda: plan_audit(0),
        lambda: plan_audit(100, tolerance=0),
        lambda: plan_audit(100, confidence=1),
        lambda: plan_audit(100, looks=0),
        lambda: plan_audit(100, looks=[50, 40]),
        lambda: plan_audit(100, looks=[]),
        lambda: plan_audit(100).verdict(0, 33),
        lambda: plan_audit(100).verdict(51, 50),
        lambda: plan_audit(100).verdict(-1, 50),
        lambda: plan_audit(100).approval_probability(101),
        lambda: plan_audit(None).approval_probability(3),
    ],
)
def test_nonsense_plans_are_refused(call: object) -> None:
    with pytest.raises(InvalidValueError):
        call()  # type: ignore[operator]


@settings(max_examples=25, deadline=None)
@given(
    st.one_of(st.none(), st.integers(min_value=1, max_value=2500)),
    st.sampled_from([0.01, 0.02, 0.05, 0.07, 0.1, 0.2]),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_every_plan_keeps_its_promise_at_and_above_the_tolerance(
    population: int | None, tolerance: float, confidence: float
) -> None:
    plan = plan_audit(population, tolerance, confidence)
    assert plan.nominal_confidence >= confidence
    if population is None:
        chances = [
            audit_chances(None, plan.looks, plan.thresholds, rate).approve
            for rate in (tolerance, tolerance * 1.2, min(0.99, tolerance * 2))
        ]
    else:
        worst = math.ceil(Fraction(str(tolerance)) * population)
        chances = [
            plan.approval_probability(d) for d in range(worst, min(population, worst + 8) + 1)
        ]
    assert chances[0] <= 1 - confidence
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(chances))
    for n, threshold in zip(plan.looks, plan.thresholds, strict=True):
        if threshold >= 0:
            assert plan.bound(threshold, n) < tolerance
        if threshold < n:
            assert plan.bound(threshold + 1, n) >= tolerance


def test_a_large_batch_gets_longer_looks_so_a_good_batch_rarely_fails() -> None:
    """Failing a batch of 10,000 costs 10,000 questions: its default plan looks further
    (in wider steps) than a batch of 1,000's, and a 2% batch is settled in ~270."""
    large = plan_audit(10_000)
    assert large.looks[-1] > plan_audit(1000).looks[-1]
    assert large.expected_questions(200) < 300
    assert large.approval_probability(500) <= 0.05


def test_looks_whose_strictest_levels_are_tiny_are_still_planned() -> None:
    """A look of 5,000 from an unbounded batch has critical levels down to 1e-112, which
    no recorded confidence can express: the calibration searches the ones that can."""
    single = plan_audit(None, looks=[5000])
    assert single.nominal_confidence == 0.95
    assert single.thresholds == (224,)
    double = plan_audit(None, looks=[5000, 6000])
    assert 0.95 < double.nominal_confidence < 1
    chance = audit_chances(None, double.looks, double.thresholds, 0.05).approve
    assert 0.04 < chance <= 0.05
