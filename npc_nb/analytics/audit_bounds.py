"""The exact one-sided bound on a batch's error rate from a random audit sample, and the
sample size that can show a batch meets a tolerance.

A reviewer decides ``sample`` cards drawn at random from a batch and finds ``errors``
of them wrong. ``error_bound`` answers: at this confidence, how large can the batch's
error rate be? Two exact answers, never a normal approximation (the counts are small
and the interesting case is zero errors, where the Wald interval has zero width):

* an unbounded batch (``population=None``): the Clopper–Pearson upper limit, the rate
  ``p`` at which P(X <= errors; sample, p) = 1 - confidence for X binomial (Clopper &
  Pearson 1934, Biometrika 26:404-413). 0 errors in n gives 1 - (1 - confidence)^(1/n),
  so 0 in 59 bounds the rate below 5% at 95% and 0 in 58 does not;
* a batch of ``population`` cards: the exact hypergeometric limit, the largest number of
  wrong cards D with P(X <= errors; population, D, sample) > 1 - confidence, as D /
  population. Drawing without replacement tells more about a small batch, so this bound
  is never above Clopper–Pearson's, and a whole batch reviewed gives errors / population.

The key design choice: the finite case is decided in exact integer arithmetic
(``math.comb`` sums compared with the confidence read as the decimal it was written
as, 0.95 = 19/20), so that "meets the tolerance" (``bound < tolerance``, strict: with a
finite batch D / N equal to the tolerance is a bad batch) never turns on a rounding
error; the unbounded case finds its root by bisection on the exact binomial CDF summed
in log space. No SciPy: the tests cross-check both against it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..errors import InvalidValueError

__all__ = [
    "audit_sample_size",
    "binomial_cdf",
    "check_population",
    "check_tolerance",
    "count",
    "error_bound",
    "hypergeometric_cdf_exceeds",
    "hypergeometric_ways",
    "level",
    "tolerance_defects",
]

_BISECTIONS = 200  # far past double precision: the loop stops when the bracket stops moving
_MAX_SAMPLE = 10**8  # an unbounded batch's planner gives up beyond this many cards


def error_bound(
    errors: int, sample: int, confidence: float = 0.95, population: int | None = None
) -> float:
    """The one-sided upper ``confidence`` bound on the batch's error rate after ``errors``
    wrong cards among ``sample`` drawn at random (Clopper–Pearson when ``population`` is
    None, the exact hypergeometric bound D / population otherwise). 1.0 when every card
    sampled was wrong (or nothing was sampled)."""
    sample = count("sample", sample)
    errors = count("errors", errors, most=sample, most_name="sample")
    alpha = level(confidence)
    if population is None:
        return _clopper_pearson_upper(errors, sample, float(alpha))
    population = check_population(population, sample)
    return _hypergeometric_upper(errors, sample, population, alpha) / population


def audit_sample_size(
    tolerance: float = 0.05,
    confidence: float = 0.95,
    population: int | None = None,
    expected_errors: int = 0,
) -> int:
    """The smallest sample whose bound, with ``expected_errors`` wrong cards in it, is
    strictly below ``tolerance`` (59 for the defaults). With a ``population`` the answer
    may be the whole batch (nothing short of reviewing everything shows it); an
    InvalidValueError when not even that can (``expected_errors`` at or above the
    tolerance's share of the batch)."""
    tolerance = check_tolerance(tolerance)
    alpha = level(confidence)
    errors = count("expected_errors", expected_errors)
    if population is None:
        return _smallest(
            errors + 1, _MAX_SAMPLE, lambda n: _binomial_meets(errors, n, tolerance, alpha)
        )
    population = check_population(population, errors)
    defects = tolerance_defects(tolerance, population)
    if errors >= defects:
        raise InvalidValueError(
            "expected_errors",
            expected_errors,
            f"a whole number below {defects}",
            lead=f"expected_errors={expected_errors} is at or above the tolerance's share "
            f"of a batch of {population} ({defects} cards at {tolerance:.2%}): no sample "
            "can show such a batch meets it",
            hint="Raise the tolerance or plan for fewer errors.",
        )
    return _smallest(
        errors + 1,
        population,
        lambda n: not hypergeometric_cdf_exceeds(errors, population, defects, n, alpha),
    )


def level(confidence: float) -> Fraction:
    """1 - ``confidence`` exactly, the confidence read as the decimal it was written as
    (0.95 -> 1/20), after checking it lies strictly between 0 and 1."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise InvalidValueError("confidence", confidence, "a number between 0 and 1, like 0.95")
    if not 0 < confidence < 1:
        raise InvalidValueError(
            "confidence", confidence, "a number strictly between 0 and 1, like 0.95 for 95%"
        )
    return 1 - Fraction(str(float(confidence)))


def check_tolerance(tolerance: float) -> float:
    """The tolerated error rate as a float, refused unless strictly between 0 and 1."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, int | float | np.floating):
        raise InvalidValueError("tolerance", tolerance, "an error rate between 0 and 1, like 0.05")
    if not 0 < tolerance < 1:
        raise InvalidValueError(
            "tolerance", tolerance, "an error rate strictly between 0 and 1, like 0.05 for 5%"
        )
    return float(tolerance)


def check_population(population: int, sample: int = 0) -> int:
    """The batch size as an int, refused unless a whole number >= 1 and >= ``sample``."""
    population = count("population", population)
    if population < 1 or population < sample:
        raise InvalidValueError(
            "population",
            population,
            f"a whole number of cards >= 1 and >= the sample ({sample})",
            hint="Pass the batch's size, or population=None for an unbounded batch.",
        )
    return population


def tolerance_defects(tolerance: float, population: int) -> int:
    """The fewest wrong cards that make a batch of ``population`` miss ``tolerance``:
    ceil(tolerance * population), exactly (0.07 of 100 is 7, not 8)."""
    return math.ceil(Fraction(str(tolerance)) * population)


def hypergeometric_cdf_exceeds(
    errors: int, population: int, defects: int, sample: int, alpha: Fraction
) -> bool:
    """Whether P(X <= errors) > ``alpha`` for X the wrong cards among ``sample`` drawn
    without replacement from ``population`` holding ``defects``, in exact integers."""
    ways = hypergeometric_ways(errors, population, defects, sample)
    return ways * alpha.denominator > alpha.numerator * math.comb(population, sample)


def hypergeometric_ways(errors: int, population: int, defects: int, sample: int) -> int:
    """The number of samples with at most ``errors`` wrong cards: the sum over x of
    C(defects, x) C(population - defects, sample - x). Each term comes from the one
    before by an exact integer ratio, T(x+1) = T(x) (D-x)(n-x) / ((x+1)(N-D-n+x+1)), so
    a long sum costs one big product per term instead of two binomial coefficients."""
    good = population - defects
    low, high = max(0, sample - good), min(errors, defects, sample)
    if high < low:
        return 0
    term = math.comb(defects, low) * math.comb(good, sample - low)
    ways = term
    for x in range(low, high):
        term = term * (defects - x) * (sample - x) // ((x + 1) * (good - sample + x + 1))
        ways += term
    return ways


def binomial_cdf(errors: int, sample: int, rate: float) -> float:
    """P(X <= errors) for X binomial(sample, rate), summed in log space so that large
    samples neither overflow nor underflow."""
    if errors >= sample or rate <= 0.0:
        return 1.0
    if rate >= 1.0:
        return 0.0
    k = np.arange(errors + 1, dtype=np.float64)
    log_terms = _log_choose(sample, errors) + k * math.log(rate) + (sample - k) * math.log1p(-rate)
    top = float(log_terms.max())
    return min(1.0, math.exp(top) * float(np.exp(log_terms - top).sum()))


def _log_choose(n: int, errors: int) -> np.ndarray:
    """log C(n, k) for k = 0..errors, through log-gamma."""
    k = np.arange(errors + 1)
    gammas = np.array([math.lgamma(x + 1) for x in k]) + np.array(
        [math.lgamma(n - x + 1) for x in k]
    )
    return np.asarray(math.lgamma(n + 1) - gammas, dtype=np.float64)


def _binomial_meets(errors: int, sample: int, tolerance: float, alpha: Fraction) -> bool:
    """Clopper–Pearson's bound < tolerance, i.e. P(X <= errors; sample, tolerance) < alpha
    (the CDF falls as the rate grows, and the bound is where it equals alpha)."""
    return binomial_cdf(errors, sample, tolerance) < float(alpha)


def _clopper_pearson_upper(errors: int, sample: int, alpha: float) -> float:
    if errors >= sample:
        return 1.0
    if errors == 0:  # the closed form, exact to the last bit
        return -math.expm1(math.log(alpha) / sample)
    low, high = 0.0, 1.0
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if binomial_cdf(errors, sample, middle) > alpha:
            low = middle
        else:
            high = middle
    return high


def _hypergeometric_upper(errors: int, sample: int, population: int, alpha: Fraction) -> int:
    """The largest D with P(X <= errors; population, D, sample) > alpha: the CDF falls as D
    grows, so a binary search between the errors seen and every unseen card wrong."""
    low, high = errors, population - (sample - errors)
    while low < high:
        middle = (low + high + 1) // 2
        if hypergeometric_cdf_exceeds(errors, population, middle, sample, alpha):
            low = middle
        else:
            high = middle - 1
    return low


def _smallest(start: int, most: int, check: Callable[[int], bool]) -> int:
    """The smallest n in [start, most] with ``check(n)`` (which holds from some n on),
    by doubling then bisecting."""
    step, low = 1, start
    high = start
    while not check(high):
        low = high + 1
        if high >= most:
            raise InvalidValueError(
                "tolerance", None, "a larger tolerance", lead=f"No sample up to {most} meets it"
            )
        high = min(most, high + step)
        step *= 2
    while low < high:
        middle = (low + high) // 2
        if check(middle):
            high = middle
        else:
            low = middle + 1
    return high


def count(what: str, value: int, *, most: int | None = None, most_name: str = "") -> int:
    """A whole number >= 0 as an int (numpy integers and 3.0 accepted), else an error."""
    number: int | None = None
    if isinstance(value, float | np.floating):
        number = int(value) if float(value).is_integer() else None
    elif not isinstance(value, bool):
        try:
            number = operator.index(value)
        except TypeError:
            number = None
    if number is None or number < 0:
        raise InvalidValueError(what, value, "a whole number >= 0")
    if most is not None and number > most:
        raise InvalidValueError(
            what,
            value,
            f"a whole number from 0 to {most_name}={most}",
            lead=f"{what}={value!r} is more than {most_name}={most}",
            hint=f"The {what} are counted among the {most_name}.",
        )
    return number
