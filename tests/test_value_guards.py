"""The guards read values, through the public API.

Every change of value issue 34 lists (a sign, a comparator, a unit prefix, an exponent,
a superscript, a number word against a digit) is asked, in both directions: never
suppressed by the tombstone of what it corrects, never taken as a reinforcement of the
approved value, under the offline matcher and under a matcher that says "same" to
everything. And every rewording it lists stands when a correct judge calls it the same
fact: suppressed after a rejection, reinforced after an approval.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import npc_nb

#: (one value, the other, what the card says changed).
VALUE_CHANGES = [
    ("Effects count as significant when p < 0.05.", "Effects count as significant when p > 0.05.",
     "comparator"),
    ("Each job may use ≤ 8 GPUs.", "Each job may use ≥ 8 GPUs.", "comparator"),
    ("The correlation of dose and response is 0.4.",
     "The correlation of dose and response is -0.4.", "sign"),
    ("The correlation of dose and response is 0.4.",
     "The correlation of dose and response is \u22120.4.", "sign"),
    ("The calibration offset is +0.3.", "The calibration offset is -0.3.", "sign"),
    ("The calibration offset is +0.3.", "The calibration offset is \u22120.3.", "sign"),
    ("The learning rate is 0.01.", "The learning rate is -0.01.", "sign"),
    ("Store the samples at -20 °C.", "Store the samples at 20 °C.", "sign"),
    ("The request timeout is 120 ms.", "The request timeout is 120 s.", "unit"),
    ("The laser power is 5 mW.", "The laser power is 5 MW.", "unit"),
    ("The hash table holds 2**16 entries.", "The hash table holds 216 entries.", "number"),
    ("We need 10⁵ samples.", "We need 105 samples.", "number"),
    ("The grid has 10<sup>3</sup> cells.", "The grid has 103 cells.", "number"),
    ("The survey has three sections.", "The survey has 4 sections.", "number"),
]  # fmt: skip

#: (the memory, a rewording of it a correct judge calls the same fact).
REWORDINGS = [
    ("The user dislikes footnotes.", "The user would rather not have footnotes."),
    ("P-values should be shown to three decimal places.",
     "P-values should be shown to 3 decimal places."),
    ("Jira is the issue tracker.", "Basically, jira is the issue tracker."),
    ("Personal data must never leave the EU servers.",
     "Personal data has to stay on servers in the EU."),
]  # fmt: skip


def says_same(candidate: str, neighbours: list[str]) -> list[str]:
    """A matcher that calls everything the same fact: only the guards stand between it
    and a lost correction (and, on the rewordings above, it is right)."""
    return ["same"] * len(neighbours)


@pytest.fixture
def opened(project_dir: Path) -> Iterator[list[npc_nb.Project]]:
    projects: list[npc_nb.Project] = []
    yield projects
    for nb in projects:
        nb.close()


def _open(opened: list[npc_nb.Project], project_dir: Path, matcher: object) -> npc_nb.Project:
    nb = npc_nb.open(project_dir, matcher=matcher)
    opened.append(nb)
    return nb


@pytest.mark.parametrize("matcher", ["offline", says_same], ids=["offline", "always-same"])
@pytest.mark.parametrize("decision", ["reject", "approve"])
@pytest.mark.parametrize(("one", "other", "kind"), VALUE_CHANGES)
def test_a_changed_value_is_asked_never_suppressed_or_reinforced(
    opened: list[npc_nb.Project],
    project_dir: Path,
    matcher: object,
    decision: str,
    one: str,
    other: str,
    kind: str,
) -> None:
    nb = _open(opened, project_dir, matcher)
    for npc, (before, after) in (("forward", (one, other)), ("backward", (other, one))):
        first = nb.add_candidate(before, category="fact", npc=npc)
        getattr(nb, decision)(first.memory_id)
        outcome = nb.add_candidate(after, category="fact", npc=npc)
        assert outcome.queued, (npc, outcome)
        assert outcome.memory_id != first.memory_id
        assert f"): {kind}:" in (outcome.differs or ""), outcome.differs
        if decision == "approve":  # a proposed update: approving it replaces the old value
            assert outcome.updates == first.memory_id
    assert len(nb.review_queue()) == 2


@pytest.mark.parametrize("decision", ["reject", "approve"])
@pytest.mark.parametrize(("memory", "rewording"), REWORDINGS)
def test_a_correct_judges_same_stands_on_a_rewording(
    opened: list[npc_nb.Project], project_dir: Path, decision: str, memory: str, rewording: str
) -> None:
    nb = _open(opened, project_dir, says_same)
    first = nb.add_candidate(memory, category="preference", npc="analyst")
    getattr(nb, decision)(first.memory_id)
    outcome = nb.add_candidate(rewording, category="preference", npc="analyst")
    expected = "suppressed" if decision == "reject" else "reinforced"
    assert (outcome.action, outcome.memory_id, outcome.verdict) == (
        expected,
        first.memory_id,
        "same",
    )
    assert nb.review_queue().empty
