"""The shipped notebooks run the workflows they teach, as a researcher would: in
two-reviewers each reviewer votes in a review panel and the disagreements are settled in
the ``%npc_review --adjudicate`` panel; in experiment the arms' cards are decided in the
blind panel ``exp.review()``; reproducible saves a pinned, recorded study and re-runs it,
every cell identical. Read from the saved notebooks, as a reader opens them: each panel
cell's saved output is the widget, and the outputs are those of one run top to bottom.
Where no browser draws a panel, it is driven as a person drives it: its buttons, and
``press(key)`` for a key, which the notebooks use for the adjudicator's number keys."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat

import npc_nb
from tests.helpers import REPO, propose, status_of

WIDGET = "application/vnd.jupyter.widget-view+json"
#: A decision made by calling Python instead of in a panel.
DECIDED_IN_PYTHON = re.compile(
    r"\.(approve|reject|edit|defer|skip|adjudicate|decide|adjudicate_vote)\(|review_session\("
)


def code_cells(name: str) -> list[Any]:
    book = nbformat.read(REPO / "notebooks" / name, as_version=4)
    return [entry for entry in book.cells if entry.cell_type == "code"]


def shows_a_widget(entry: Any) -> bool:
    return any(WIDGET in output.get("data", {}) for output in entry.outputs)


def saved_text(entry: Any) -> str:
    return "".join(
        "".join(output.get("text") or output.get("data", {}).get("text/plain", ""))
        for output in entry.outputs
    )


def test_two_reviewers_vote_in_panels_and_adjudicate_in_the_npc_review_panel() -> None:
    cells = code_cells("two-reviewers.ipynb")
    adjudicating = [entry for entry in cells if "%npc_review --adjudicate" in entry.source]
    assert adjudicating and all(shows_a_widget(entry) for entry in adjudicating)
    voting = [entry for entry in cells if re.search(r"\.review(_panel)?\(", entry.source)]
    assert len([entry for entry in voting if shows_a_widget(entry)]) >= 2  # ada's, bob's
    in_python = [entry.source for entry in cells if DECIDED_IN_PYTHON.search(entry.source)]
    assert in_python == []


def test_the_experiment_is_reviewed_in_its_blind_panel() -> None:
    cells = code_cells("experiment.ipynb")
    blind = [entry for entry in cells if "exp.review()" in entry.source]
    assert blind and all(shows_a_widget(entry) for entry in blind)
    in_python = [entry.source for entry in cells if DECIDED_IN_PYTHON.search(entry.source)]
    assert in_python == []


def test_the_audit_sample_is_reviewed_in_the_audit_panel_and_the_rest_approved_once() -> None:
    cells = code_cells("audit.ipynb")
    auditing = [entry for entry in cells if "%npc_review --audit" in entry.source]
    assert auditing and all(shows_a_widget(entry) for entry in auditing)
    in_python = [entry.source for entry in cells if DECIDED_IN_PYTHON.search(entry.source)]
    assert in_python == []
    (approving,) = [entry for entry in cells if "audit.approve_rest(" in entry.source]
    assert "memories approved in one batch" in saved_text(approving)


def test_each_workflow_notebook_is_saved_from_one_run_top_to_bottom() -> None:
    for name in ("two-reviewers.ipynb", "experiment.ipynb", "reproducible.ipynb", "audit.ipynb"):
        counts = [entry.execution_count for entry in code_cells(name)]
        assert counts == list(range(1, len(counts) + 1)), name


def test_reproducible_saves_a_study_and_shows_its_rerun_identical() -> None:
    cells = code_cells("reproducible.ipynb")
    (rerun,) = [entry for entry in cells if "npc_nb.rerun(" in entry.source]
    shown = saved_text(rerun)
    assert "identical" in shown and "changed" not in shown and "failed" not in shown
    saving = [entry for entry in cells if "nbformat.write(" in entry.source]
    assert saving and cells.index(saving[0]) < cells.index(rerun), "saved, then re-run"


def test_a_key_pressed_headless_decides_the_card_on_screen(nb: npc_nb.Project) -> None:
    first, second = propose(nb, "The seminar is in room A3"), propose(nb, "Lunch is at noon")
    panel = nb.review(by="ada")
    panel.press("a")
    panel.reason.value = "not said"
    panel.press("r")
    assert [status_of(nb, m) for m in (first, second)] == ["human-approved", "human-rejected"]
    assert nb.decisions(second)["reason"].iloc[-1] == "not said"
    panel.press("q")
    assert "Unknown key 'q'" in panel.status.value


def test_the_adjudicator_presses_the_number_of_a_vote(project_dir: Path) -> None:
    owner = npc_nb.open(project_dir)
    owner.access.set_policy(review_mode="independent", reviewers_per_card=2)
    card = propose(owner, "The seminar is in room A3")
    kernels = [npc_nb.open(project_dir, reviewer=name) for name in ("ada", "bob", "carol")]
    try:
        kernels[0].approve(card)
        kernels[1].reject(card, reason="it moved")
        panel = kernels[2].review(adjudicate=True)
        assert panel.session.current == card
        panel.press("2")  # bob's vote, the second shown
        assert "adjudicated as vote 2" in panel.status.value
        assert status_of(owner, card) == "human-rejected"
    finally:
        for project in (*kernels, owner):
            project.close()
