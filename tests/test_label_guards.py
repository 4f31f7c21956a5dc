"""A changed value is never swallowed (issue 41), through the public API.

One-letter labels ("Plan B" / "Plan A", "option I" / "option a", "writer a" / "writer
b"), Roman numerals and lookalike letters, and qualifiers that add or drop a value of a
known kind ("week 3" / "week 3 of May"), are asked in both directions: never suppressed
by the tombstone of what they correct, never taken as a reinforcement of the approved
value, never merged into the card of another, under the offline matcher and under a
matcher that says "same" to everything. A lookalike of a letter is that letter.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import npc_nb

#: (one statement, the other, what the card says changed).
CHANGES = [
    ("Plan B is approved.", "Plan A is approved.", "label"),
    ("Samples go to freezer B.", "Samples go to freezer A.", "label"),
    ("We store raw data on drive B.", "We store raw data on drive A.", "label"),
    ("We use option I.", "We use option a.", "label"),
    ("writer a fact number 7", "writer b fact number 7", "label"),
    ("The trial is in phase II.", "The trial is in phase III.", "label"),
    ("The pilot starts in week 3.", "The pilot starts in week 3 of May.", "date"),
    ("The seminar is at 3 pm.", "The seminar is at 3 pm on Fridays.", "date"),
    ("The workshop is in the main hall.", "The workshop is in the main hall in Berlin.",
     "name"),
    ("The field notes are checked.", "The field notes are checked by Priya.",
     "name"),
    ("Order pipette tips for the lab.", "Order 500 pipette tips for the lab.", "number"),
    ("The scan timeout is 30.", "The scan timeout is 30 s.", "unit"),
    ("The paper is due on March 15.", "The paper is due on March 15, 2027.", "date"),
    ("Budget of 10k approved.", "Budget approved.", "number"),
]  # fmt: skip

#: (a memory, the same statement with a lookalike letter or in other words).
SAME = [
    ("Uses P for the statistics.", "Uses \u03a1 for the statistics."),  # Greek capital Rho
    ("Uses R for the statistics.", "Uses \u03a1 for the statistics."),  # Rho stands for R
    ("Plan R is approved.", "Plan \u0420 is approved."),  # Cyrillic Er: looks P, stands R
    ("Plan B is approved.", "Plan \u0392 is approved."),  # Greek capital Beta
    ("We use option a.", "We use option \u0430."),  # Cyrillic small a
    ("Plan B is approved.", "Basically, plan B is approved."),
    ("Group A gets the placebo.", "Note: group A gets the placebo, as discussed."),
]


def says_same(candidate: str, neighbours: list[str]) -> list[str]:
    """A matcher that calls everything the same fact: only the guards stand between it
    and a lost correction."""
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


MATCHERS = pytest.mark.parametrize("matcher", ["offline", says_same], ids=["offline", "same"])


@MATCHERS
@pytest.mark.parametrize("decision", ["reject", "approve"])
@pytest.mark.parametrize(("one", "other", "kind"), CHANGES)
def test_a_changed_label_or_qualifier_is_asked_in_both_directions(
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
        assert f"{kind}:" in (outcome.differs or ""), (npc, outcome.differs)
    assert len(nb.review_queue()) == 2
    assert nb.reproposals().empty


@MATCHERS
@pytest.mark.parametrize(("one", "other", "kind"), CHANGES)
def test_a_changed_label_or_qualifier_is_never_merged_into_a_pending_card(
    opened: list[npc_nb.Project],
    project_dir: Path,
    matcher: object,
    one: str,
    other: str,
    kind: str,
) -> None:
    nb = _open(opened, project_dir, matcher)
    for npc, (before, after) in (("forward", (one, other)), ("backward", (other, one))):
        first = nb.add_candidate(before, category="fact", npc=npc)
        outcome = nb.add_candidate(after, category="fact", npc=npc)
        assert outcome.queued and outcome.memory_id != first.memory_id, (npc, outcome)
    assert len(nb.review_queue()) == 4


@MATCHERS
def test_two_writers_facts_are_never_merged_into_each_others_cards(
    opened: list[npc_nb.Project], project_dir: Path, matcher: object
) -> None:
    """Two kernels write at once: "writer a fact number N" and "writer b fact number N"
    are different facts, whichever arrives first."""
    kernels = {w: _open(opened, project_dir, matcher) for w in ("a", "b")}
    for number in range(1, 11):
        for writer in ("b", "a") if number % 2 else ("a", "b"):
            text = f"writer {writer} fact number {number}"
            outcome = kernels[writer].add_candidate(text, category="fact", npc="writer")
            assert outcome.queued, (text, outcome)
    queue = kernels["a"].review_queue()
    assert len(queue) == 20
    assert (queue["variants"] == 1).all()
    assert kernels["b"].reproposals().empty


@MATCHERS
@pytest.mark.parametrize("decision", ["reject", "approve"])
@pytest.mark.parametrize(("memory", "again"), SAME)
def test_a_lookalike_letter_or_a_rewording_is_the_same_label(
    opened: list[npc_nb.Project],
    project_dir: Path,
    matcher: object,
    decision: str,
    memory: str,
    again: str,
) -> None:
    nb = _open(opened, project_dir, matcher)
    first = nb.add_candidate(memory, category="fact", npc="analyst")
    getattr(nb, decision)(first.memory_id)
    outcome = nb.add_candidate(again, category="fact", npc="analyst")
    expected = "suppressed" if decision == "reject" else "reinforced"
    assert (outcome.action, outcome.memory_id) == (expected, first.memory_id), outcome
    assert nb.review_queue().empty


def test_the_exact_repeat_hash_keeps_labels(
    opened: list[npc_nb.Project], project_dir: Path
) -> None:
    """With no matcher at all (exact repeats only), "Plan A" is not a repeat of a
    rejected "Plan B": normalisation folds case and lookalikes, never a label."""
    nb = _open(opened, project_dir, None)
    first = nb.add_candidate("Plan B is approved.", category="fact", npc="analyst")
    nb.reject(first.memory_id)
    again = nb.add_candidate("plan b is approved", category="fact", npc="analyst")
    assert (again.action, again.memory_id) == ("suppressed", first.memory_id)
    assert nb.add_candidate("Plan A is approved.", category="fact", npc="analyst").queued
    assert nb.add_candidate("We use option I.", category="fact", npc="analyst").queued
    assert nb.add_candidate("We use option a.", category="fact", npc="analyst").queued


@pytest.mark.parametrize(
    ("before", "after", "says"),
    [
        ("Plan B is approved.", "Plan A is approved.", "label: B → A"),
        ("Plan B is approved.", "Plan is approved.", "label: B → none"),
        ("Plan is approved.", "Plan B is approved.", "label: none → B"),
        ("Budget of 10k approved.", "Budget approved.", "number: 10k → none"),
        ("The pilot starts in week 3.", "The pilot starts in week 3 of May.", "date: none → May"),
    ],
)
def test_the_card_says_what_changed_from_the_memory_to_the_candidate(
    opened: list[npc_nb.Project], project_dir: Path, before: str, after: str, says: str
) -> None:
    """A label reads like every other value: the approved memory's, then the new one."""
    nb = _open(opened, project_dir, "offline")
    nb.approve(nb.add_candidate(before, category="fact", npc="analyst").memory_id)
    outcome = nb.add_candidate(after, category="fact", npc="analyst")
    assert outcome.differs is not None and outcome.differs.endswith(says), outcome.differs
