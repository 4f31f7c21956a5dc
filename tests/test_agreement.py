"""The agreement statistics against their published worked examples, degenerate input, the
bootstrap intervals, and ``nb.metrics.agreement`` on real votes.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_agreement.py (the fast tier).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from tests.helpers import as_reviewer, propose
from tests.unit.test_agreement import one_row


@pytest.fixture
def reviewed(project_dir: Path):
    """A project two reviewers voted on: ada and bob agree on three cards of four."""
    nb = npc_nb.open(project_dir, review_mode="independent")
    cards = [propose(nb, f"Fact number {n} about the lab", category=c)
             for n, c in enumerate(["fact", "fact", "preference", "preference"])]  # fmt: skip
    for card in cards:
        as_reviewer(nb, "ada").approve(card)
    as_reviewer(nb, "bob").approve(cards[0])
    as_reviewer(nb, "bob").approve(cards[1])
    as_reviewer(nb, "bob").edit(cards[2], "Fact number 2 about the lab, edited")
    as_reviewer(nb, "bob").reject(cards[3])
    yield nb
    nb.close()


def test_the_metrics_give_agreement_per_group_with_intervals(reviewed: npc_nb.Project) -> None:
    overall = one_row(reviewed.metrics.agreement())
    assert (overall["cards"], overall["reviewers"], overall["votes"]) == (4, 2, 8)
    assert overall["percent_agreement"] == pytest.approx(0.5)
    assert overall["kappa_kind"] == "cohen" and overall["resamples"] == 1000
    collapsed = one_row(reviewed.metrics.agreement(collapse_edits=True))
    assert collapsed["percent_agreement"] == pytest.approx(0.75)  # an edit is an approval
    by_category = reviewed.metrics.agreement(group_by="category")
    assert by_category[["category", "cards"]].values.tolist() == [["fact", 2], ["preference", 2]]
    assert by_category["percent_agreement"].tolist() == [1.0, 0.0]
    pair = one_row(reviewed.metrics.agreement(pairwise=True))
    assert (pair["reviewer_a"], pair["reviewer_b"]) == ("ada", "bob")
    with pytest.raises(npc_nb.InvalidValueError, match="Cannot group by 'reviewer'"):
        reviewed.metrics.agreement(group_by="reviewer")


def test_the_agreement_plot_draws_each_statistic_with_its_interval(
    reviewed: npc_nb.Project,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    ax = reviewed.metrics.plot_agreement(group_by="category")
    labels = [text.get_text() for text in ax.get_xticklabels()]
    assert labels == ["fact\n(n=2)", "preference\n(n=2)"]
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend == ["percent agreement", "cohen kappa", "Krippendorff's alpha", "Gwet's AC1"]
    assert len(ax.containers) == 4  # one errorbar container per statistic


def test_agreement_as_of_a_snapshot_is_the_agreement_then(reviewed: npc_nb.Project) -> None:
    then = reviewed.metrics.agreement(group_by="category")
    reviewed.snapshot("v1")
    card = propose(reviewed, "Fact number 9 about the lab", category="fact")
    as_reviewer(reviewed, "ada").approve(card)
    as_reviewer(reviewed, "bob").reject(card)
    now = reviewed.metrics.agreement(group_by="category")
    assert now["cards"].tolist() == [3, 2]
    pd.testing.assert_frame_equal(reviewed.metrics.agreement(group_by="category", as_of="v1"), then)
    with pytest.raises(TypeError):
        reviewed.metrics.agreement("category")  # group_by and as_of only by keyword
