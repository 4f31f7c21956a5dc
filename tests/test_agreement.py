"""The agreement statistics against their published worked examples, degenerate input, the
bootstrap intervals, and ``nb.metrics.agreement`` on real votes.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_agreement.py (the fast tier).
"""

from __future__ import annotations

import pytest

import npc_nb
from tests.unit.test_agreement import one_row


def test_the_metrics_give_agreement_per_group_with_intervals(reviewed: npc_nb.Project) -> None:
    overall = one_row(reviewed.metrics.agreement())
    assert (overall["cards"], overall["reviewers"], overall["votes"]) == (4, 2, 8)
    assert overall["percent_agreement"] == pytest.approx(0.5)
    assert overall["kappa_kind"] == "cohen" and overall["resamples"] == 1000
    collapsed = one_row(reviewed.metrics.agreement(collapse_edits=True))
    assert collapsed["percent_agreement"] == pytest.approx(0.75)  # an edit is an approval
    by_category = reviewed.metrics.agreement(by="category")
    assert by_category[["category", "cards"]].values.tolist() == [["fact", 2], ["preference", 2]]
    assert by_category["percent_agreement"].tolist() == [1.0, 0.0]
    pair = one_row(reviewed.metrics.agreement(pairwise=True))
    assert (pair["reviewer_a"], pair["reviewer_b"]) == ("ada", "bob")
    with pytest.raises(npc_nb.UnknownFilterError, match="Cannot group by 'reviewer'"):
        reviewed.metrics.agreement(by="reviewer")


def test_the_agreement_plot_draws_each_statistic_with_its_interval(
    reviewed: npc_nb.Project,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    ax = reviewed.metrics.plot_agreement(by="category")
    labels = [text.get_text() for text in ax.get_xticklabels()]
    assert labels == ["fact\n(n=2)", "preference\n(n=2)"]
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend == ["percent agreement", "cohen kappa", "Krippendorff's alpha", "Gwet's AC1"]
    assert len(ax.containers) == 4  # one errorbar container per statistic
