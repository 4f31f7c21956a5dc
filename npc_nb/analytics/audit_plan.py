"""The audit's pre-declared sequential design: at which sample sizes ("looks") the bound
is read, how many errors each look tolerates, and the confidence each look is read at.

Reading the bound again after extending a sample is a second test: judged each time at
plain 95%, a batch exactly at the tolerance is approved far more often than 5% of the
time (a first sample of 59 and 20 more per look up to 400 approves such a batch about
14% of the time). ``plan_audit`` fixes the looks before anything is reviewed and then
calibrates one nominal confidence for all of them, so that the EXACT probability of
approving a batch with D0 = ceil(tolerance * population) wrong cards, over every path
through the looks, is at most 1 - confidence. Approval only gets less likely as the
batch holds more wrong cards, so D0 is the worst bad batch: the guarantee holds for
every batch at or above the tolerance, extensions included.

The key design choice: the probability is computed, not simulated, by a dynamic
programme over the looks (``audit_chances``) whose state is the errors seen so far, up
to the largest threshold; anything above it can never approve and is absorbed. The
calibration searches the discrete thresholds, not a continuous confidence: each
candidate is one of the exact critical values of the per-look bound, so a bisection
over them takes a dozen runs of the programme, and the nominal confidence recorded is
the shortest decimal inside the winning band (98.3%, not 98.2947...), read back through
the same exact bound so that ``verdict`` and ``bound`` always agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import pairwise
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from .audit_bounds import (
    audit_sample_size,
    binomial_cdf,
    check_population,
    check_tolerance,
    count,
    error_bound,
    hypergeometric_ways,
    level,
    tolerance_defects,
)
from .audit_chances import audit_chances

__all__ = ["AuditPlan", "plan_audit"]

_DECIMALS = 12  # the nominal confidence is recorded with at most this many decimals
# The default schedule in units of 1 / tolerance (at 5%: first look 50, then every 25,
# last 450): chosen so that a batch of 1,000 at 2% true error settles in about 200
# questions on average (docs/audits.md, bench/bench_audit.py). A batch large enough
# that a tenth of it is past the last look goes on in steps twice as wide, up to a
# tenth of the batch or _LONGEST: failing it means reviewing all of it, so a longer
# audit pays (at 10,000 cards and 2% error: ~270 questions instead of ~800).
_FIRST, _STEP, _LAST, _LONGEST = 2.5, 1.25, 22.5, 50.0


@dataclass(frozen=True)
class AuditPlan:
    """A sequential audit design. ``looks`` are cumulative sample sizes; at look j the
    batch is approvable when the errors found are at most ``thresholds[j]`` (-1: no
    count approves there), i.e. when the bound at ``nominal_confidence`` is below the
    tolerance. ``method`` says so in one sentence for the audit's record."""

    population: int | None
    tolerance: float
    confidence: float
    looks: tuple[int, ...]
    nominal_confidence: float
    thresholds: tuple[int, ...]
    method: str

    def bound(self, errors: int, sample: int) -> float:
        """The error bound at the plan's nominal confidence and population."""
        return error_bound(errors, sample, self.nominal_confidence, self.population)

    def verdict(self, errors: int, sample: int) -> str:
        """ "approve" (the bound is below the tolerance at this planned look), "extend"
        (it is not, but a later look still could be) or "fail" (no later look can)."""
        look = self._look_index(sample)
        errors = count("errors", errors, most=sample, most_name="sample")
        if errors <= self.thresholds[look]:
            return "approve"
        later = self.thresholds[look + 1 :]
        return "extend" if later and errors <= max(later) else "fail"

    def approval_probability(self, defects: int) -> float:
        """The exact probability that this design approves a batch holding ``defects``
        wrong cards (the dynamic programme, no simulation)."""
        return audit_chances(*self._design, self._defects(defects)).approve

    def expected_questions(self, defects: int) -> float:
        """The expected number of cards a person decides to settle a batch holding
        ``defects`` wrong cards: the sample up to the approving look, or the whole
        batch when the audit fails (the rest then goes to ordinary review)."""
        return audit_chances(*self._design, self._defects(defects)).questions

    @property
    def _design(self) -> tuple[int | None, tuple[int, ...], tuple[int, ...]]:
        return self.population, self.looks, self.thresholds

    def _defects(self, defects: int) -> int:
        if self.population is None:
            raise InvalidValueError(
                "population",
                None,
                "a batch size",
                lead="An unbounded batch has no count of wrong cards",
                hint="Plan with plan_audit(population=...) to ask about one.",
            )
        if isinstance(defects, bool) or not isinstance(defects, int) or defects < 0:
            raise InvalidValueError("defects", defects, "a whole number of wrong cards >= 0")
        if defects > self.population:
            raise InvalidValueError(
                "defects", defects, f"a whole number from 0 to population={self.population}"
            )
        return defects

    def _look_index(self, sample: int) -> int:
        if sample not in self.looks:
            raise InvalidValueError(
                "sample",
                sample,
                self.looks,
                lead=f"sample={sample!r} is not one of the plan's looks",
                hint="The bound is only read where the plan said it would be.",
            )
        return self.looks.index(sample)


def plan_audit(
    population: int | None,
    tolerance: float = 0.05,
    confidence: float = 0.95,
    looks: int | Sequence[int] | None = None,
) -> AuditPlan:
    """The audit's design for a batch of ``population`` cards (None: unbounded).
    ``looks=None`` takes the default schedule (at 5%: 50, 75, ..., 450 cards, capped at
    the batch; a batch over 5,000 goes on every 50 up to a tenth of it, at most 1,000
    cards), less its first looks that could not approve even with no error;
    ``looks=1`` the fixed design (one sample of ``audit_sample_size``, read once at
    ``confidence``); an int n > 1 the first n looks of the default schedule; a list the
    cumulative sample sizes to look at."""
    tolerance = check_tolerance(tolerance)
    alpha = level(confidence)
    if population is not None:
        population = check_population(population)
    schedule = _schedule(population, tolerance, confidence, looks)
    draft = AuditPlan(population, tolerance, float(confidence), schedule, 0.5, (), "")
    nominal, thresholds = _calibrate(draft, alpha)
    if looks is None:
        # A default look that cannot approve even with no error is not read at all:
        # no batch stops there, so leaving it out changes no chance, only the questions
        # a reviewer is told to answer before the first look that can settle the batch.
        kept = [j for j, most in enumerate(thresholds) if most >= 0] or [len(schedule) - 1]
        first = kept[0]
        schedule, thresholds = schedule[first:], thresholds[first:]
    plan = AuditPlan(population, tolerance, float(confidence), schedule, nominal, thresholds, "")
    return AuditPlan(**{**plan.__dict__, "method": _method(plan)})


def _plain_ints(looks: object) -> Any:
    """``looks`` with NumPy whole numbers as Python ints (a count or each sample size),
    as ``error_bound`` takes them; anything else is left for ``_schedule`` to judge."""
    if isinstance(looks, np.integer):
        return int(looks)
    if isinstance(looks, Sequence) and not isinstance(looks, str):
        return [int(n) if isinstance(n, np.integer) else n for n in looks]
    return looks


def _schedule(
    population: int | None, tolerance: float, confidence: float, looks: int | Sequence[int] | None
) -> tuple[int, ...]:
    looks = _plain_ints(looks)
    if looks == 1 and not isinstance(looks, bool):
        fixed = audit_sample_size(tolerance, confidence, population)
        return (fixed,)
    if looks is None or (isinstance(looks, int) and not isinstance(looks, bool)):
        sizes = _default_looks(population, tolerance)
        if looks is not None:
            if looks < 1:
                raise InvalidValueError(
                    "looks", looks, "None, a number of looks >= 1, or sample sizes"
                )
            sizes = sizes[:looks]
    elif isinstance(looks, Sequence):
        sizes = list(looks)
        if not sizes or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes):
            raise InvalidValueError("looks", looks, "None, a number of looks >= 1, or sample sizes")
        if sizes != sorted(set(sizes)):
            raise InvalidValueError("looks", looks, "increasing cumulative sample sizes")
    else:
        raise InvalidValueError("looks", looks, "None, a number of looks >= 1, or sample sizes")
    if population is not None:
        sizes = sorted({min(n, population) for n in sizes})
    return tuple(sizes)


def _default_looks(population: int | None, tolerance: float) -> list[int]:
    first, step, last = (round(units / tolerance) for units in (_FIRST, _STEP, _LAST))
    sizes = list(range(first, last + 1, step))
    if population is not None:
        longest = min(population // 10, round(_LONGEST / tolerance))
        sizes += range(last + 2 * step, longest + 1, 2 * step)
    return sizes


def _calibrate(draft: AuditPlan, alpha: Fraction) -> tuple[float, tuple[int, ...]]:
    """The least conservative nominal confidence (>= the stated one) whose thresholds keep
    the exact approval probability of the worst bad batch at most ``alpha``."""
    criticals = _critical_values(draft, alpha)
    edges = [*criticals, alpha]
    bands = list(pairwise(edges))
    bands = [(Fraction(0), edges[0]), *bands] if edges[0] > 0 else bands
    # Only a band holding a decimal of at most _DECIMALS places can be recorded; bands
    # below 1e-12 (a nominal confidence of 0.999999999999...) are left out.
    nominals = [n for n in (_inside(low, high, alpha) for low, high in bands) if n is not None]
    good, bad = -1, len(nominals)
    while bad - good > 1:  # validity only grows stricter downwards: find the last valid
        middle = (good + bad) // 2
        if _valid(draft, alpha, nominals[middle]):
            good = middle
        else:
            bad = middle
    if good < 0:
        raise InvalidValueError(
            "looks",
            draft.looks,
            "looks that a recorded confidence can calibrate",
            lead=f"No nominal confidence keeps the looks {draft.looks} valid",
            hint="Use fewer looks, or the default (looks=None).",
        )
    return nominals[good], _thresholds(draft, 1 - Fraction(str(nominals[good])))


def _valid(draft: AuditPlan, alpha: Fraction, nominal: float) -> bool:
    plan = AuditPlan(
        **{**draft.__dict__, "thresholds": _thresholds(draft, 1 - Fraction(str(nominal)))}
    )
    worst = _worst(plan)
    return audit_chances(*plan._design, worst).approve <= float(alpha)


def _worst(plan: AuditPlan) -> int | float:
    """The worst bad batch: D0 wrong cards, or the tolerance itself when unbounded."""
    if plan.population is None:
        return plan.tolerance
    return tolerance_defects(plan.tolerance, plan.population)


def _inside(low: Fraction, high: Fraction, alpha: Fraction) -> float | None:
    """A nominal confidence whose level lies strictly inside (low, high), the shortest
    decimal there, or the stated confidence itself when the band ends at it."""
    if high == alpha and low < alpha:
        return float(1 - alpha)
    for decimals in range(1, _DECIMALS + 1):
        scale = 10**decimals
        level_ = Fraction(math.floor(low * scale) + 1, scale)
        if level_ < high:
            nominal = round(float(1 - level_), decimals)
            if 1 - Fraction(str(nominal)) == level_:
                return nominal
    return None


def _critical_values(draft: AuditPlan, alpha: Fraction) -> list[Fraction]:
    """Every value of the per-look CDF at the worst bad batch that is below ``alpha``:
    the levels at which some threshold changes."""
    values: set[Fraction] = set()
    for sample in draft.looks:
        for value in _cdf_values(draft, sample):
            if value >= alpha:
                break
            values.add(value)
    return sorted(values)


def _cdf_values(draft: AuditPlan, sample: int) -> tuple[Fraction, ...]:
    return _cdf_table(draft.population, draft.tolerance, draft.confidence, sample)


@lru_cache(maxsize=4096)
def _cdf_table(
    population: int | None, tolerance: float, confidence: float, sample: int
) -> tuple[Fraction, ...]:
    """P(X <= k) for k = 0, 1, ... at the worst bad batch, until it passes the stated
    level (no nominal level is above it). Finite batch: from the least k possible.
    Cached: the calibration reads each look's table a dozen times."""
    out: list[Fraction] = []
    cut = level(confidence)
    if population is None:
        for k in range(sample + 1):
            out.append(Fraction(binomial_cdf(k, sample, tolerance)))
            if out[-1] > cut:
                break
        return tuple(out)
    n, d0 = population, tolerance_defects(tolerance, population)
    total = math.comb(n, sample)
    for k in range(max(0, sample - (n - d0)), min(sample, d0) + 1):
        out.append(Fraction(hypergeometric_ways(k, n, d0, sample), total))
        if out[-1] > cut:
            break
    return tuple(out)


def _thresholds(draft: AuditPlan, level_: Fraction) -> tuple[int, ...]:
    """Most errors at each look whose bound at level ``level_`` is below the tolerance."""
    out = []
    for sample in draft.looks:
        start = (
            0
            if draft.population is None
            else max(
                0,
                sample - (draft.population - tolerance_defects(draft.tolerance, draft.population)),
            )
        )
        best = start - 1  # fewer errors than ``start`` cannot happen: P(X <= k) = 0
        for k, value in enumerate(_cdf_values(draft, sample), start=start):
            meets = value < level_ if draft.population is None else value <= level_
            if not meets:
                break
            best = k
        out.append(best)
    return tuple(out)


def _method(plan: AuditPlan) -> str:
    exact = "Clopper-Pearson" if plan.population is None else "hypergeometric"
    looks = ", ".join(str(n) for n in plan.looks)
    if len(plan.looks) == 1 and plan.nominal_confidence == plan.confidence:
        return (
            f"Fixed sample of {plan.looks[0]} cards read once: approve when the exact "
            f"{exact} bound at {plan.confidence:.4g} is below {plan.tolerance:.4g}."
        )
    worst = audit_chances(*plan._design, _worst(plan)).approve
    return (
        f"Group-sequential exact design, looks at {looks} cards: approve at a look when the "
        f"exact {exact} bound at {plan.nominal_confidence:.6g} (calibrated) is below "
        f"{plan.tolerance:.4g}; a batch at the tolerance is approved with exact probability "
        f"{worst:.4f} <= {1 - plan.confidence:.4g}, extensions included."
    )
