"""The statistics of extraction experiments (npc_nb/analytics/comparison.py), checked
against published worked examples, each cited where it is used, and cross-checked
against SciPy (a test-only dependency: the package itself never imports it)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.special
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from npc_nb import InvalidValueError, NpcError
from npc_nb.analytics.comparison import (
    chi_square_test,
    cluster_bootstrap_difference,
    compare_categories,
    compare_proportions,
    fisher_exact,
    holm_adjust,
    newcombe_interval,
)
from npc_nb.analytics.intervals import wilson_interval
from npc_nb.analytics.significance import upper_gamma

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


# -- Fisher's exact test ----------------------------------------------------------------


def test_fisher_exact_gives_the_lady_tasting_tea_its_published_p_value() -> None:
    """Fisher (1935), The Design of Experiments, §2; Agresti (2002), Categorical Data
    Analysis, 2nd ed., §3.5.2 and Table 3.8: 3 of 4 milk-first cups named right,
    two-sided P = 0.486 (= 34/70)."""
    assert fisher_exact([[3, 1], [1, 3]]) == pytest.approx(34 / 70, rel=1e-12)
    assert round(fisher_exact([[3, 1], [1, 3]]), 4) == 0.4857


def test_fisher_exact_gives_the_dieting_example_its_published_p_value() -> None:
    """Wikipedia, "Fisher's exact test", Example: 1 of 10 men and 11 of 14 women
    dieting, two-tailed p = 0.002759."""
    assert round(fisher_exact([[1, 9], [11, 3]]), 6) == 0.002759


def test_fisher_exact_sums_every_table_no_more_likely_than_the_observed_one() -> None:
    """By hand for the tea: P(a) = C(4, a) C(4, 4 - a) / C(8, 4) = 1, 16, 36, 16, 1 / 70.
    Observing a = 2 (the likeliest table) gives 1; a = 4 gives (1 + 1) / 70."""
    assert fisher_exact([[2, 2], [2, 2]]) == pytest.approx(1.0)
    assert fisher_exact([[4, 0], [0, 4]]) == pytest.approx(2 / 70, rel=1e-12)


def test_fisher_exact_handles_large_counts_without_overflow() -> None:
    p = fisher_exact([[10_000, 20_000], [20_100, 40_000]])
    assert p == pytest.approx(
        scipy.stats.fisher_exact([[10_000, 20_000], [20_100, 40_000]])[1], rel=1e-8
    )


def test_fisher_exact_without_variation_is_one_and_without_an_arm_is_nan() -> None:
    assert fisher_exact([[5, 0], [7, 0]]) == 1.0  # every trial a success in both arms
    assert math.isnan(fisher_exact([[0, 0], [3, 4]]))  # the first arm has no trials
    assert math.isnan(fisher_exact([[0, 0], [0, 0]]))


@pytest.mark.parametrize(
    "table", [[[1, 2, 3], [4, 5, 6]], [[1, 2]], [[1, -2], [3, 4]], [[1, 2.5], [3, 4]], 7]
)
def test_fisher_exact_refuses_what_is_not_a_2x2_table_of_counts(table: object) -> None:
    with pytest.raises(NpcError, match="2x2|whole numbers|list of rows"):
        fisher_exact(table)  # type: ignore[arg-type]


counts = st.integers(min_value=0, max_value=60)


@settings(max_examples=300, deadline=None)
@given(counts, counts, counts, counts)
def test_fisher_exact_agrees_with_scipy(a: int, b: int, c: int, d: int) -> None:
    table = [[a, b], [c, d]]
    if a + b == 0 or c + d == 0:
        assert math.isnan(fisher_exact(table))
    else:
        assert fisher_exact(table) == pytest.approx(scipy.stats.fisher_exact(table)[1], rel=1e-9)


# -- Pearson's chi-square test ----------------------------------------------------------


def test_chi_square_test_gives_agrestis_party_identification_table_its_published_statistic() -> (
    None
):
    """Agresti (2007), An Introduction to Categorical Data Analysis, 2nd ed., Table 2.5
    (gender by party identification, General Social Survey): X² = 30.07, df = 2,
    P < 0.001; with df = 2 the tail is exactly exp(-X²/2)."""
    statistic, df, p = chi_square_test([[762, 327, 468], [484, 239, 477]])
    assert (round(statistic, 2), df) == (30.07, 2)
    assert p == pytest.approx(math.exp(-statistic / 2), rel=1e-12)
    assert p < 0.001


def test_chi_square_test_of_the_dieting_table_matches_its_published_p_value() -> None:
    """The dieting table of Fisher's exact test above: QI Macros' worked example
    ("Fisher Exact Test of a 2x2 Table") reports the uncorrected chi-square p = 0.00093."""
    statistic, df, p = chi_square_test([[1, 9], [11, 3]])
    assert df == 1
    assert round(p, 5) == 0.00093
    assert statistic == pytest.approx(10.971428571428572, rel=1e-12)


def test_chi_square_test_drops_empty_rows_and_columns() -> None:
    assert chi_square_test([[10, 0, 5], [0, 0, 0], [3, 0, 9]]) == pytest.approx(
        chi_square_test([[10, 5], [3, 9]])
    )


@pytest.mark.parametrize("table", [[[0, 0], [0, 0]], [[3, 4], [0, 0]], [[3, 0], [5, 0]], [[7]], []])
def test_chi_square_test_of_a_degenerate_table_is_nan(table: list[list[int]]) -> None:
    statistic, df, p = chi_square_test(table)
    assert math.isnan(statistic) and math.isnan(p) and df == 0


def test_chi_square_test_refuses_ragged_or_negative_tables() -> None:
    with pytest.raises(NpcError, match="equal length"):
        chi_square_test([[1, 2, 3], [4, 5]])
    with pytest.raises(NpcError, match="whole numbers"):
        chi_square_test([[1, -2], [4, 5]])


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=2, max_value=4).flatmap(
        lambda rows: st.integers(min_value=2, max_value=5).flatmap(
            lambda columns: st.lists(
                st.lists(
                    st.integers(min_value=1, max_value=500), min_size=columns, max_size=columns
                ),
                min_size=rows,
                max_size=rows,
            )
        )
    )
)
def test_chi_square_test_agrees_with_scipy(table: list[list[int]]) -> None:
    statistic, df, p = chi_square_test(table)
    expected = scipy.stats.chi2_contingency(table, correction=False)
    assert statistic == pytest.approx(expected.statistic, rel=1e-10, abs=1e-12)
    assert df == expected.dof
    assert p == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("a", [0.5, 1, 1.5, 2, 3.5, 5, 10, 25.5, 50, 100, 500, 2000])
def test_upper_gamma_matches_scipy_gammaincc_on_a_grid(a: float) -> None:
    for x in [1e-8, 0.01, 0.1, 0.5, 1, 2, 5, a / 2, a - 1, a, a + 1, a + 5, 2 * a, 5 * a + 10, 700]:
        if x < 0:
            continue
        expected = float(scipy.special.gammaincc(a, x))
        assert upper_gamma(a, x) == pytest.approx(expected, rel=1e-9, abs=1e-10), (a, x)


def test_upper_gamma_at_its_ends() -> None:
    assert upper_gamma(3, 0) == 1.0
    assert upper_gamma(3, math.inf) == 0.0
    with pytest.raises(NpcError, match="a > 0"):
        upper_gamma(0, 1)


# -- Holm's step-down adjustment --------------------------------------------------------


def test_holm_adjust_reproduces_the_worked_example() -> None:
    """Wikipedia, "Holm-Bonferroni method", Example: p = 0.01, 0.04, 0.03, 0.005 at
    alpha = 0.05 rejects H1 and H4 only. The adjusted p-values (as R's
    p.adjust(method = "holm") gives them): 4 x 0.005, 3 x 0.01, max(2 x 0.03, ...), ..."""
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert [p < 0.05 for p in adjusted] == [True, False, False, True]


def test_holm_adjust_caps_at_one_and_keeps_nan_in_place() -> None:
    assert holm_adjust([0.5, math.nan, 0.6]) == pytest.approx([1.0, math.nan, 1.0], nan_ok=True)
    assert holm_adjust([0.01, math.nan, 0.03]) == pytest.approx([0.02, math.nan, 0.03], nan_ok=True)
    assert holm_adjust([]) == []


def test_holm_adjust_refuses_what_is_not_a_p_value() -> None:
    with pytest.raises(NpcError, match="between 0 and 1"):
        holm_adjust([0.2, 1.5])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1) | st.just(math.nan), max_size=12))
def test_holm_adjust_is_monotone_at_least_the_raw_value_and_at_most_bonferroni(
    pvalues: list[float],
) -> None:
    adjusted = holm_adjust(pvalues)
    m = sum(not math.isnan(p) for p in pvalues)
    pairs = [(p, q) for p, q in zip(pvalues, adjusted, strict=True) if not math.isnan(p)]
    assert all(math.isnan(q) for p, q in zip(pvalues, adjusted, strict=True) if math.isnan(p))
    for p, q in pairs:
        assert p <= q <= min(1.0, m * p) + 1e-15
    for (p1, q1), (p2, q2) in itertools.product(pairs, repeat=2):
        if p1 < p2:
            assert q1 <= q2


# -- the cluster bootstrap --------------------------------------------------------------


def _cards(outcomes: dict[str, list[list[int]]]) -> pd.DataFrame:
    """One row per card: ``outcomes[arm][k]`` lists the outcomes of the arm's cards in
    conversation k."""
    return pd.DataFrame(
        [
            {"conversation": k, "arm": arm, "approved": value}
            for arm, per_conversation in outcomes.items()
            for k, values in enumerate(per_conversation)
            for value in values
        ]
    )


def _bootstrap(frame: pd.DataFrame, **options: object) -> tuple[float, float, int]:
    return cluster_bootstrap_difference(
        frame,
        cluster="conversation",
        group="arm",
        outcome="approved",
        baseline="A",
        other="B",
        **options,  # type: ignore[arg-type]
    )


def _simulated(seed: int, conversations: int = 200) -> pd.DataFrame:
    """Each conversation has its own approval propensity u ~ U(0.2, 0.7) (cards of one
    conversation are alike); arm B adds 0.1 to it, so the true difference is 0.1."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(0.2, 0.7, conversations)
    return _cards(
        {
            "A": [list(rng.random(3) < p) for p in u],
            "B": [list(rng.random(3) < p + 0.1) for p in u],
        }
    )


def test_the_cluster_bootstrap_is_reproducible_from_its_seed() -> None:
    frame = _simulated(seed=7)
    assert _bootstrap(frame, seed=3) == _bootstrap(frame, seed=3)
    assert _bootstrap(frame, seed=3) != _bootstrap(frame, seed=4)


def test_the_cluster_bootstrap_interval_covers_the_true_difference() -> None:
    """Twenty simulated experiments with a known difference of 0.1: a 95% interval
    should miss it about once; more than four misses would be far off (P < 0.003)."""
    intervals = [_bootstrap(_simulated(seed), resamples=500, seed=seed) for seed in range(20)]
    covered = sum(low <= 0.1 <= high for low, high, _ in intervals)
    assert covered >= 16, intervals
    assert all(used == 500 for _, _, used in intervals)


def test_the_cluster_bootstrap_resamples_whole_conversations() -> None:
    """All the variation is between conversations: each arm's cards in a conversation
    are all approved or all rejected. 40 conversations carry the information of 40
    cards per arm, not 1000: resampling rows independently (as the Newcombe interval
    takes them) gives an interval several times too narrow."""
    rng = np.random.default_rng(0)
    frame = _cards({arm: [[int(rng.random() < 0.5)] * 25 for _ in range(40)] for arm in "AB"})
    low, high, _ = _bootstrap(frame)
    approved = frame.groupby("arm")["approved"].agg(["sum", "count"])
    _, row_low, row_high = newcombe_interval(
        int(approved.loc["B", "sum"]), 1000, int(approved.loc["A", "sum"]), 1000
    )
    assert high - low > 3 * (row_high - row_low)
    assert high - low > 0.25


def test_the_cluster_bootstrap_keeps_a_conversations_arms_together() -> None:
    """Both arms agree card for card within each conversation, but conversations differ:
    every resample that draws a conversation draws both arms' cards, so the difference
    is 0 in every resample (arms resampled apart would give a wide interval)."""
    per_conversation = [[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 0], [1, 0, 0]] * 4
    frame = _cards({"A": per_conversation, "B": per_conversation})
    assert _bootstrap(frame) == (0.0, 0.0, 2000)


def test_the_cluster_bootstrap_drops_resamples_without_an_arm() -> None:
    """Arm B has cards in one conversation of ten: a resample misses it with probability
    0.9^10 (about a third), and such resamples cannot give a difference."""
    frame = _cards({"A": [[1, 0]] * 10, "B": [[1, 1]] + [[]] * 9})
    low, high, used = _bootstrap(frame, resamples=1000)
    assert 500 < used < 800
    assert low == pytest.approx(0.5) and high == pytest.approx(0.5)


def test_the_cluster_bootstrap_without_an_arm_is_nan() -> None:
    frame = _cards({"A": [[1, 0], [1]]})
    low, high, used = _bootstrap(frame)
    assert math.isnan(low) and math.isnan(high) and used == 0
    low, high, used = _bootstrap(frame.iloc[0:0])
    assert math.isnan(low) and math.isnan(high) and used == 0


def test_the_cluster_bootstrap_leaves_out_undecided_cards() -> None:
    frame = _cards({"A": [[1, 0]] * 5, "B": [[1, 1]] * 5})
    undecided = pd.concat(
        [frame, pd.DataFrame({"conversation": [0, 1], "arm": ["B", "B"], "approved": [None, None]})]
    )
    assert _bootstrap(undecided) == _bootstrap(frame)


def test_the_cluster_bootstrap_refuses_unknown_columns_and_odd_outcomes() -> None:
    frame = _cards({"A": [[1, 0]] * 5, "B": [[1, 1]] * 5})
    with pytest.raises(NpcError, match="no column 'chat'.*conversation, arm, approved"):
        cluster_bootstrap_difference(
            frame, cluster="chat", group="arm", outcome="approved", baseline="A", other="B"
        )
    with pytest.raises(NpcError, match="True/False or 0/1"):
        _bootstrap(frame.assign(approved=frame["approved"] * 2))
    with pytest.raises(NpcError, match="resamples"):
        _bootstrap(frame, resamples=0)


# -- the frames: each arm against the baseline ------------------------------------------


def test_compare_proportions_gives_each_arm_its_difference_interval_and_tests() -> None:
    """Newcombe's first example (56/70 vs 48/80) as arm B against baseline A, and a third
    arm C at 9/10: the values are those of the scalar functions, Holm across B and C."""
    counts = pd.DataFrame(
        {"arm": ["A", "B", "C"], "successes": [48, 56, 9], "trials": [80, 70, 10]}
    )
    frame = compare_proportions(counts, baseline="A")
    assert frame.columns.tolist() == [
        "arm", "baseline", "successes", "trials", "baseline_successes", "baseline_trials",
        "rate", "baseline_rate", "difference", "ci_low", "ci_high", "p_value", "p_holm",
        "test", "note",
    ]  # fmt: skip
    b = frame.set_index("arm").loc["B"]
    assert (b["successes"], b["trials"], b["baseline_successes"], b["baseline_trials"]) == (
        56, 70, 48, 80,
    )  # fmt: skip
    assert (b["rate"], b["baseline_rate"]) == pytest.approx((0.8, 0.6))
    assert [round(b[c], 4) for c in ("difference", "ci_low", "ci_high")] == [0.2, 0.0524, 0.3339]
    assert b["p_value"] == pytest.approx(fisher_exact([[56, 14], [48, 32]]), rel=1e-12)
    p_values = [fisher_exact([[56, 14], [48, 32]]), fisher_exact([[9, 1], [48, 32]])]
    assert frame["p_holm"].tolist() == pytest.approx(holm_adjust(p_values))
    assert frame["test"].tolist() == ["fisher", "fisher"]
    assert frame["note"].isna().all()


def test_compare_proportions_with_an_arm_without_trials_is_nan_with_a_note() -> None:
    counts = pd.DataFrame({"arm": ["A", "B", "C"], "successes": [5, 0, 3], "trials": [9, 0, 4]})
    frame = compare_proportions(counts, baseline="A").set_index("arm")
    empty = frame.loc["B"]
    assert all(math.isnan(empty[c]) for c in ("rate", "difference", "ci_low", "p_value", "p_holm"))
    assert empty["note"] == "no trials in arm 'B': no rate to compare"
    # Holm counts only the arms that could be tested: C's p-value is not adjusted for B.
    assert frame.loc["C", "p_holm"] == pytest.approx(frame.loc["C", "p_value"])
    assert pd.isna(frame.loc["C", "note"])


def test_compare_proportions_when_every_card_is_approved_is_p_one() -> None:
    counts = pd.DataFrame({"arm": ["A", "B"], "successes": [7, 9], "trials": [7, 9]})
    row = compare_proportions(counts, baseline="A").iloc[0]
    assert (row["difference"], row["p_value"], row["p_holm"]) == (0.0, 1.0, 1.0)


def test_compare_proportions_of_an_empty_frame_is_an_empty_frame() -> None:
    empty = pd.DataFrame({"arm": [], "successes": [], "trials": []})
    frame = compare_proportions(empty, baseline="A")
    assert frame.empty and "ci_low" in frame.columns and "note" in frame.columns


def test_compare_proportions_refuses_an_unknown_baseline_or_a_missing_column() -> None:
    counts = pd.DataFrame({"arm": ["A", "B"], "successes": [1, 2], "trials": [3, 4]})
    with pytest.raises(InvalidValueError, match="No arm 'Z'.*A, B") as refused:
        compare_proportions(counts, baseline="Z")
    assert (refused.value.what, refused.value.allowed) == ("baseline", ("A", "B"))
    with pytest.raises(NpcError, match="no column 'trials'"):
        compare_proportions(counts.drop(columns="trials"), baseline="A")
    with pytest.raises(NpcError, match="cannot exceed"):
        compare_proportions(counts.assign(successes=[1, 5]), baseline="A")


def test_compare_categories_tests_each_arm_against_the_baseline_by_chi_square() -> None:
    """Agresti's party-identification table (see above) read as two arms, plus a third:
    the statistic is the published X² = 30.07 on 2 degrees of freedom."""
    counts = pd.DataFrame(
        {
            "arm": ["female", "male", "other"],
            "democrat": [762, 484, 700],
            "independent": [327, 239, 330],
            "republican": [468, 477, 470],
        }
    )
    frame = compare_categories(counts, baseline="female").set_index("arm")
    male = frame.loc["male"]
    assert (round(male["statistic"], 2), male["df"]) == (30.07, 2)
    assert (male["trials"], male["baseline_trials"]) == (1200, 1557)
    assert (male["republican"], male["baseline_republican"]) == (477, 468)
    assert frame["p_holm"].tolist() == pytest.approx(holm_adjust(frame["p_value"].tolist()))
    assert frame["test"].tolist() == ["chi-square", "chi-square"]
    assert frame["note"].isna().all()


def test_compare_categories_notes_small_expected_counts_and_degenerate_tables() -> None:
    counts = pd.DataFrame(
        {
            "arm": ["A", "B", "C", "D"],
            "approved": [30, 2, 0, 0],
            "edited": [10, 1, 0, 0],
            "rejected": [40, 0, 0, 0],
        }
    )
    frame = compare_categories(counts, baseline="A").set_index("arm")
    assert "expected count is below 5" in frame.loc["B", "note"]
    assert math.isnan(frame.loc["C", "p_value"]) and "no trials" in frame.loc["C", "note"]
    only_approved = pd.DataFrame({"arm": ["A", "B"], "approved": [4, 6], "rejected": [0, 0]})
    row = compare_categories(only_approved, baseline="A").iloc[0]
    assert math.isnan(row["p_value"]) and "one category" in row["note"]
    empty = compare_categories(pd.DataFrame({"arm": [], "approved": []}), baseline="A")
    assert empty.empty and "p_holm" in empty.columns


def test_comparisons_do_not_warn_on_degenerate_input() -> None:
    """pytest turns every warning into an error here (pyproject's filterwarnings), so
    these calls passing means no RuntimeWarning of a division by zero either."""
    zeros = pd.DataFrame({"arm": ["A", "B"], "successes": [0, 0], "trials": [0, 0]})
    assert compare_proportions(zeros, baseline="A")["note"].notna().all()
    assert compare_categories(zeros.drop(columns="trials"), baseline="A")["note"].notna().all()


def test_importing_the_statistics_loads_neither_numpy_nor_pandas_nor_scipy() -> None:
    """``import npc_nb`` stays fast: the functions import NumPy and pandas when called,
    and SciPy never (it is a test-only cross-check)."""
    code = (
        "import sys, npc_nb, npc_nb.analytics.comparison; "
        "print(sorted(m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
