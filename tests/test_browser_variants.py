"""One card per fact in a real JupyterLab, in headless Chromium: a card with three
wordings decided with one key, a wording split off with x and its number, and an
automatic outcome put back from ``%npc_review --auto``; the panel's text never shows an
id, the store and the audit log are checked afterwards, and screenshots of the wordings
card and the automatic list are saved (docs/images holds copies)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import npc_nb
from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
FACT = "We store the ringing data in DuckDB."
WORDINGS = (
    "Note: we store the ringing data in DuckDB, as discussed.",
    "As discussed, we store the ringing data in DuckDB.",
)
OTHER = "The field season starts in April."
OTHER_WORDINGS = ("Note: the field season starts in April.",)
REJECTED = "The batch size is 32."
REPEAT = "Note: the batch size is 32."

SETUP = f"""
import os
os.environ["NPC_NB_HOME"] = {{home!r}}
os.environ["NPC_NB_REVIEWER"] = "browser"
import npc_nb
nb = npc_nb.open({{project!r}})
def add(text):
    return nb.add_candidate(text, category="fact", npc="analyst")
rejected = add({REJECTED!r}).memory_id
nb.reject(rejected, by="earlier")
assert add({REPEAT!r}).action == "suppressed"
for text in {(FACT, *WORDINGS)!r}:
    add(text)
for text in {(OTHER, *OTHER_WORDINGS)!r}:
    add(text)
assert nb.review_queue()["variants"].tolist() == [3, 2], nb.review_queue()
%load_ext npc_nb
"""

REOPEN = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
os.environ["NPC_NB_REVIEWER"] = "browser"
os.chdir({project!r})  # the magics' project is found from the working folder
%load_ext npc_nb
"""


def panel_text(page: object) -> str:
    return page.inner_text(".npc-review-panel .npc-card")  # type: ignore[attr-defined]


#: The start of a UUID: what a reviewer should never have to read.
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}")


def no_ids(page: object) -> None:
    """The panel's whole text (card, tally, status line) names nothing by its id."""
    text = page.inner_text(".npc-review-panel")  # type: ignore[attr-defined]
    assert not UUID.search(text), text


def wait_for(page: object, text: str, *, shown: bool = True) -> None:
    """Wait until the panel's card area shows ``text`` (or, ``shown=False``, no longer
    does) and the panel is not busy."""
    page.wait_for_function(  # type: ignore[attr-defined]
        "([text, shown]) => { const p = document.querySelector('.npc-review-panel');"
        " const card = p?.querySelector('.npc-card')?.innerText;"
        " return !!card && !p.classList.contains('npc-busy') &&"
        " card.includes(text) === shown; }",
        arg=[text, shown],
        timeout=WAIT_MS,
    )


def test_one_card_per_fact_in_jupyterlab(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project))
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("variants.ipynb", [setup, "%npc_review"])
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 2)
            try:
                wait_for(page, "3 wordings of this fact")
                page.screenshot(path=str(ARTIFACTS / "review-variants.png"))
                no_ids(page)
                page.click(".npc-review-panel .npc-card")
                page.keyboard.press("3")  # the third wording, one key
                wait_for(page, "2 wordings of this fact")
                assert OTHER in panel_text(page)
                panel = page.inner_text(".npc-review-panel")
                assert "1 approved (1 as another wording) · 0 edited" in panel, panel
                assert f"approve as wording 3: {WORDINGS[1]}" in panel, panel
                page.keyboard.press("x")
                wait_for(page, "Split:")
                page.keyboard.press("2")  # split the second wording off
                wait_for(page, "wordings of this fact", shown=False)  # one wording left
                assert "Split wording 2 off as its own card \u2018Note: the field season" in (
                    page.inner_text(".npc-review-panel")
                )
                no_ids(page)
                page.screenshot(path=str(ARTIFACTS / "review-split-named.png"))
                page.keyboard.press("a")
                wait_for(page, OTHER_WORDINGS[0])  # the split card comes next; left open
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "review-variants-failed.png"))
                raise
        with browser_page(lab) as page:
            reopen = REOPEN.format(home=str(tmp_path / "home"), project=str(project))
            url = lab.write_notebook("auto.ipynb", [reopen, "%npc_review --auto"])
            page.goto(url)
            run_all_cells(page, 2)
            try:
                wait_for(page, REPEAT)
                page.screenshot(path=str(ARTIFACTS / "review-auto.png"))
                no_ids(page)
                page.click(".npc-review-panel .npc-card")
                # no review has listed them yet: the repeat (the oldest) is number 1
                page.keyboard.press("1")
                wait_for(page, "(no source message)")
                assert REPEAT in page.inner_text(".npc-review-panel .npc-card-text")  # type: ignore[attr-defined]
                assert f"Put back as its own card \u2018{REPEAT}\u2019" in page.inner_text(
                    ".npc-review-panel"
                )
                no_ids(page)
                page.keyboard.press("a")
                wait_for(page, "Review finished")
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "review-auto-failed.png"))
                raise

    nb = npc_nb.open(project)
    try:
        memories = nb.memories().set_index("final_text")
        assert memories.loc[WORDINGS[1], "status"] == "human-approved"  # the third wording
        assert memories.loc[WORDINGS[1], "initial_text"] == FACT
        assert memories.loc[OTHER, "status"] == "human-approved"
        assert memories.loc[OTHER_WORDINGS[0], "status"] == "pending_approval"  # split off
        assert memories.loc[REPEAT, "status"] == "human-approved"  # put back from --auto
        labels = nb.reproposals().dropna(subset=["label"]).set_index("proposed_text")["label"]
        assert labels.to_dict() == {OTHER_WORDINGS[0]: "split", REPEAT: "requeued"}
        events = nb.decisions()
        decided = events[(events["reviewer"] == "browser") & (events["action"] != "propose")]
        assert sorted(decided["action"]) == ["approve", "approve", "approve"]
        assert decided["wording"].notna().sum() == 1  # the third wording, named
        assert decided["review_session"].notna().all()
        put_back = nb.reproposals().dropna(subset=["label"])["new_memory_id"]
        proposals = events[events["memory_id"].isin(put_back)]
        assert sorted(proposals["action"]) == ["approve", "propose", "propose"]
        assert set(proposals["reviewer"]) == {"browser"}
        merged = nb.metrics.matching(group_by="outcome").set_index("outcome")
        assert merged.loc["merged", "put_back"] == 1 and merged.loc["suppressed", "put_back"] == 1
    finally:
        nb.close()
