"""Independent review in a real JupyterLab, in headless Chromium: the panel of a
reviewer shows how many votes a card has and nothing of another reviewer's vote, edit
or reason, before and after its own vote; the adjudicator's panel shows the votes side
by side and a number key decides."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

WAIT_MS = 30_000  # the longest wait for something the page or kernel should do at once
BOBS_EDIT = "The seminar moved to room B12"
BOBS_REASON = "bob-saw-the-new-timetable"

SETUP = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
import npc_nb
bob = npc_nb.open({project!r}, review_mode="independent", reviewer="bob")  # bob's kernel
seminar = bob.add_candidate("The seminar is in room A3", category="fact", npc="analyst")
lunch = bob.add_candidate("Lunch is at noon", category="fact", npc="analyst")
bob.edit(seminar.memory_id, {edit!r})
bob.reject(lunch.memory_id, reason={reason!r})
bob.close()
nb = npc_nb.open({project!r}, review_mode="independent")
%load_ext npc_nb
"""


def panel_text(page: object, index: int) -> str:
    return page.locator(".npc-review-panel").nth(index).inner_text()  # type: ignore[attr-defined]


def wait_for(page: object, index: int, text: str) -> None:
    page.locator(".npc-review-panel").nth(index).get_by_text(text).first.wait_for(  # type: ignore[attr-defined]
        timeout=WAIT_MS
    )


def test_the_panel_never_shows_another_reviewers_vote(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project), edit=BOBS_EDIT,
                         reason=BOBS_REASON)  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    cells = [setup, "%npc_config reviewer=ada\n%npc_review"]
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("two-reviewers.ipynb", cells)
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 2)
            try:
                _vote_blind(page)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "two-reviewers-failed.png"))
                raise
            page.screenshot(path=str(ARTIFACTS / "two-reviewers.png"))
    nb = npc_nb.open(project)
    try:
        assert nb.review_queue(adjudicate=True, by="carol")["votes"].tolist() == [2, 2]
        assert set(nb.votes()["reviewer"]) == {"ada", "bob"}
    finally:
        nb.close()


def _vote_blind(page: object) -> None:
    wait_for(page, 0, "independent review: 1 of 2 votes")
    for expected in ("The seminar is in room A3", "Lunch is at noon"):
        shown = panel_text(page, 0)
        assert expected in shown and "independent review: 1 of 2 votes" in shown
        for secret in ("bob", BOBS_EDIT, BOBS_REASON):
            assert secret not in shown, secret
        page.click(".npc-review-panel .npc-card-text")  # type: ignore[attr-defined]
        page.keyboard.press("a")  # type: ignore[attr-defined]
        wait_for(page, 0, f"vote recorded (approve): {expected}")
    wait_for(page, 0, "Review finished")
    everything = page.inner_text(".jp-Notebook")  # type: ignore[attr-defined]
    for secret in ("bob", BOBS_EDIT, BOBS_REASON):
        assert secret not in everything.split("%npc_review")[-1], secret


#: Two projects, the same two cards, bob's vote the only difference: ada's approval of
#: the first card completes an agreement in one and a dispute in the other.
TWO_OUTCOMES = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
import npc_nb
panels = []
for folder, bobs in (({agreed!r}, "approve"), ({disputed!r}, "reject")):
    bob = npc_nb.open(folder, create=True, review_mode="independent", reviewer="bob")
    seminar = bob.add_candidate("The seminar is in room A3", category="fact", npc="analyst")
    bob.add_candidate("Lunch is at noon", category="fact", npc="analyst")
    getattr(bob, bobs)(seminar.memory_id)  # bob's kernel
    bob.close()
    nb = npc_nb.open(folder, review_mode="independent", reviewer="ada")  # ada's kernel
    panels.append(nb.review())
"""


def test_a_vote_shows_the_same_message_and_tally_whatever_it_completed(tmp_path: Path) -> None:
    agreed, disputed = tmp_path / "agreed", tmp_path / "disputed"
    setup = TWO_OUTCOMES.format(home=str(tmp_path / "home"), agreed=str(agreed),
                                disputed=str(disputed))  # fmt: skip
    cells = [setup, "panels[0]", "panels[1]"]
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("two-outcomes.ipynb", cells)
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 3)
            try:
                shown = [_approve_first_card(page, index) for index in (0, 1)]
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "two-outcomes-failed.png"))
                raise
    assert shown[0] == shown[1]  # message, tally, next card: nothing tells them apart
    assert "vote recorded (approve): The seminar is in room A3" in shown[0]
    assert "1 vote" in shown[0] and "1 approved" not in shown[0]
    statuses = []
    for folder in (agreed, disputed):
        nb = npc_nb.open(folder)
        statuses.append(nb.memories().set_index("final_text").loc["The seminar is in room A3"])
        nb.close()
    assert [s["status"] for s in statuses] == ["human-approved", "pending_approval"]


def _approve_first_card(page: object, index: int) -> str:
    wait_for(page, index, "independent review: 1 of 2 votes")
    page.locator(".npc-review-panel .npc-card-text").nth(index).click()  # type: ignore[attr-defined]
    page.keyboard.press("a")  # type: ignore[attr-defined]
    wait_for(page, index, "vote recorded (approve)")
    wait_for(page, index, "Lunch is at noon")
    return panel_text(page, index)
