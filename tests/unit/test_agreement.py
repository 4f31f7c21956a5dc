"""The agreement statistics against their published worked examples, degenerate input,
the bootstrap intervals, and ``nb.metrics.agreement`` on real votes.

Sources of the published values:

- Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School
  for Communication, University of Pennsylvania: the reliability data of 4 observers and
  12 units with missing values, nominal alpha = 0.743.
- Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed., and its R package
  irrCAC 1.0 (README and vignette "overview"), which prints each value: the same
  4 raters x 12 units as ``cac.raw4raters`` (percent agreement 0.8181818, Gwet's AC1
  0.77544, Fleiss' kappa 0.76117, Krippendorff's alpha 0.74342); the two-rater table
  ``cont3x3abstractors`` (Cohen's kappa 0.7964094, Gwet's AC1 0.8493305,
  Krippendorff's alpha 0.7972585, percent agreement 0.89); and ``distrib.6raters``,
  6 psychiatrists classifying 15 patients (Fleiss' kappa 0.4139265, Gwet's AC1
  0.4448007, Krippendorff's alpha 0.4204384, percent agreement 0.5511111).
- Wikipedia, "Fleiss' kappa", worked example: 14 raters, 10 subjects, 5 categories,
  P-bar = 0.378, kappa = 0.210.
- Wikipedia, "Cohen's kappa", simple example: 50 grant proposals, two readers, 20 both
  yes, 15 both no, 5 yes/no and 10 no/yes: kappa = 0.4.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

import npc_nb

NA = None
#: Krippendorff (2011) / irrCAC's cac.raw4raters: a row per unit, a column per rater.
RELIABILITY_DATA = [
    [1, 1, NA, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [NA, 5, 5, 5], [NA, NA, 1, 1], [NA, NA, 3, NA],
]  # fmt: skip
#: irrCAC's cont3x3abstractors: rater A's category by row, rater B's by column.
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
#: irrCAC's distrib.6raters: raters per category, a row per patient.
SIX_RATERS = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
]  # fmt: skip
#: Wikipedia's Fleiss' kappa example: raters per category, a row per subject.
FOURTEEN_RATERS = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def from_matrix(rows: list[list[int | None]]) -> pd.DataFrame:
    """Long ratings from a units x raters matrix (None: not rated)."""
    return pd.DataFrame(
        [(unit, f"coder {r}", v) for unit, row in enumerate(rows) for r, v in enumerate(row)
         if v is not None],
        columns=["unit", "coder", "value"],
    )  # fmt: skip


def from_table(table: list[list[int]]) -> pd.DataFrame:
    """Long ratings of two raters from their contingency table."""
    rows, item = [], 0
    for first, counts in enumerate(table):
        for second, count in enumerate(counts):
            for _ in range(count):
                rows += [(item, "A", first), (item, "B", second)]
                item += 1
    return pd.DataFrame(rows, columns=["item", "rater", "value"])


def from_distribution(table: list[list[int]]) -> pd.DataFrame:
    """Long ratings from raters per category (each subject's raters numbered anew)."""
    rows = []
    for item, counts in enumerate(table):
        values = [c for c, count in enumerate(counts) for _ in range(count)]
        rows += [(item, f"rater {r}", v) for r, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["item", "rater", "value"])


#: The columns of the long ratings above, by what they hold.
COLUMNS = {"item": "item", "reviewer": "rater", "value": "value"}


def one_row(frame: pd.DataFrame) -> dict:
    assert len(frame) == 1
    return frame.iloc[0].to_dict()


def test_krippendorffs_reliability_data_gives_the_published_values() -> None:
    found = one_row(
        npc_nb.agreement_from(
            from_matrix(RELIABILITY_DATA), item="unit", reviewer="coder", value="value"
        )
    )
    assert round(found["krippendorff_alpha"], 3) == 0.743  # Krippendorff (2011)
    assert found["krippendorff_alpha"] == pytest.approx(0.74342, abs=5e-6)  # Gwet (2014)
    assert found["percent_agreement"] == pytest.approx(0.8181818, abs=5e-8)
    assert found["gwet_ac1"] == pytest.approx(0.77544, abs=5e-6)
    assert (found["kappa_kind"], found["kappa"]) == ("fleiss", pytest.approx(0.76117, abs=5e-6))
    assert (found["items"], found["reviewers"], found["ratings"]) == (11, 4, 40)


def test_a_published_cohen_kappa_table_gives_its_values() -> None:
    found = one_row(npc_nb.agreement_from(from_table(ABSTRACTORS), **COLUMNS))
    assert (found["kappa_kind"], found["kappa"]) == ("cohen", pytest.approx(0.7964094, abs=5e-8))
    assert found["gwet_ac1"] == pytest.approx(0.8493305, abs=5e-8)
    assert found["krippendorff_alpha"] == pytest.approx(0.7972585, abs=5e-8)
    assert found["percent_agreement"] == pytest.approx(0.89)
    grants = one_row(npc_nb.agreement_from(from_table([[20, 5], [10, 15]]), **COLUMNS))
    assert grants["kappa"] == pytest.approx(0.4)  # Wikipedia's simple example


def test_published_fleiss_kappa_examples_give_their_values() -> None:
    wikipedia = one_row(npc_nb.agreement_from(from_distribution(FOURTEEN_RATERS), **COLUMNS))
    assert round(wikipedia["percent_agreement"], 3) == 0.378
    assert (wikipedia["kappa_kind"], round(wikipedia["kappa"], 3)) == ("fleiss", 0.210)
    six = one_row(npc_nb.agreement_from(from_distribution(SIX_RATERS), **COLUMNS))
    assert six["kappa"] == pytest.approx(0.4139265, abs=5e-8)
    assert six["gwet_ac1"] == pytest.approx(0.4448007, abs=5e-8)  # Gwet's AC1, worked
    assert six["krippendorff_alpha"] == pytest.approx(0.4204384, abs=5e-8)
    assert six["percent_agreement"] == pytest.approx(0.5511111, abs=5e-8)


@given(
    pairs=st.lists(
        st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd")), min_size=2, max_size=60
    )
)
def test_cohens_kappa_matches_scikit_learn(pairs: list[tuple[str, str]]) -> None:
    first, second = zip(*pairs, strict=True)
    assume(len(set(first) | set(second)) > 1)  # one category: undefined (tested below)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns where kappa is undefined
        expected = cohen_kappa_score(first, second)
    frame = pd.DataFrame(
        [(i, "A", a) for i, a in enumerate(first)] + [(i, "B", b) for i, b in enumerate(second)],
        columns=["item", "rater", "value"],
    )
    found = one_row(npc_nb.agreement_from(frame, **COLUMNS, resamples=20))
    if math.isnan(expected):
        assert math.isnan(found["kappa"])
    else:
        assert found["kappa"] == pytest.approx(expected, abs=1e-9)


def votes(*rows: tuple[object, str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["memory_id", "reviewer", "decision"])


def test_degenerate_input_is_nan_with_a_reason_never_an_error() -> None:
    alike = votes(
        (1, "a", "approve"), (1, "b", "approve"), (2, "a", "approve"), (2, "b", "approve")
    )
    one_category = one_row(npc_nb.agreement_from(alike))
    assert one_category["percent_agreement"] == 1.0
    assert math.isnan(one_category["kappa"]) and math.isnan(one_category["krippendorff_alpha"])
    assert "one category only" in one_category["note"]
    single = one_row(npc_nb.agreement_from(votes((1, "a", "approve"), (1, "b", "reject"))))
    assert math.isnan(single["kappa"]) and math.isnan(single["percent_agreement_ci_low"])
    assert "a single item" in single["note"]
    apart = one_row(npc_nb.agreement_from(votes((1, "a", "approve"), (2, "b", "reject"))))
    assert apart["items"] == 0 and math.isnan(apart["percent_agreement"])
    assert "no overlap" in apart["note"]
    empty = npc_nb.agreement_from(votes())
    assert empty["items"].tolist() == [0] and "fewer than two raters" in empty["note"][0]


def test_a_rater_rating_an_item_twice_is_refused() -> None:
    with pytest.raises(npc_nb.ArgumentError, match="rated item 1 more than once"):
        npc_nb.agreement_from(votes((1, "a", "approve"), (1, "a", "reject"), (1, "b", "reject")))
    with pytest.raises(npc_nb.InvalidValueError, match="no column 'coder'"):
        npc_nb.agreement_from(votes((1, "a", "approve")), reviewer="coder")


def simulated(cards: int, disagree: float, seed: int = 7) -> pd.DataFrame:
    """Two reviewers on ``cards`` cards: bob differs from ada on a share ``disagree``."""
    rng = np.random.default_rng(seed)
    ada = rng.choice(["approve", "edit", "reject"], size=cards, p=[0.6, 0.1, 0.3])
    differs = rng.random(cards) < disagree
    bob = np.where(differs, np.where(ada == "reject", "approve", "reject"), ada)
    return votes(*[(i, "ada", a) for i, a in enumerate(ada)],
                 *[(i, "bob", b) for i, b in enumerate(bob)])  # fmt: skip


def test_intervals_are_seeded_bootstraps_that_narrow_with_more_cards() -> None:
    small, large = simulated(40, 0.1), simulated(400, 0.1)
    first = one_row(npc_nb.agreement_from(small, seed=3))
    assert one_row(npc_nb.agreement_from(small, seed=3)) == first  # the same seed, the same CI
    assert (first["resamples"], first["seed"]) == (1000, 3)
    other = one_row(npc_nb.agreement_from(small, seed=4, resamples=200))
    assert other["resamples"] == 200 and other["kappa_ci_low"] != first["kappa_ci_low"]
    wide = first["kappa_ci_high"] - first["kappa_ci_low"]
    found = one_row(npc_nb.agreement_from(large))
    assert found["kappa_ci_low"] <= found["kappa"] <= found["kappa_ci_high"]
    assert found["kappa_ci_high"] - found["kappa_ci_low"] < wide
    assert found["percent_agreement"] == pytest.approx(0.9, abs=0.04)


def test_groups_and_pairs_of_raters() -> None:
    frame = simulated(60, 0.2)
    frame["npc"] = np.where(frame["memory_id"] % 2 == 0, "analyst", "writer")
    carol = frame[frame["reviewer"] == "ada"].assign(reviewer="carol")
    grouped = npc_nb.agreement_from(frame, group_by="npc")
    assert grouped["npc"].tolist() == ["analyst", "writer"]
    assert grouped["items"].tolist() == [30, 30]
    both = pd.concat([frame, carol])
    assert one_row(npc_nb.agreement_from(both))["kappa_kind"] == "fleiss"
    pairs = npc_nb.agreement_from(both, pairwise=True)
    assert pairs[["reviewer_a", "reviewer_b"]].values.tolist() == [
        ["ada", "bob"], ["ada", "carol"], ["bob", "carol"]
    ]  # fmt: skip
    assert pairs.set_index("reviewer_b").loc["carol", "kappa"].tolist() == [1.0, pytest.approx(
        pairs.set_index("reviewer_a").loc["bob", "kappa"])]  # fmt: skip


def test_the_pure_function_is_agreement_from_with_its_columns_by_keyword() -> None:
    frame = votes((1, "a", "approve"), (1, "b", "approve"), (2, "a", "reject"), (2, "b", "edit"))
    assert "agreement" not in npc_nb.__all__ and "agreement_from" in npc_nb.__all__
    with pytest.raises(AttributeError):
        npc_nb.agreement  # noqa: B018 (the old name is gone, not kept as an alias)
    renamed = frame.rename(columns={"reviewer": "coder", "decision": "code"})
    found = npc_nb.agreement_from(renamed, reviewer="coder", value="code", group_by="memory_id")
    assert found[["memory_id", "items", "reviewers"]].values.tolist() == [[1, 1, 2], [2, 1, 2]]
    for old in ({"rater": "reviewer"}, {"by": "memory_id"}):
        with pytest.raises(TypeError):
            npc_nb.agreement_from(frame, **old)
    with pytest.raises(TypeError):
        npc_nb.agreement_from(frame, "memory_id", "reviewer", "decision")
