"""An experiment's blind review panel in a real JupyterLab, in headless Chromium: the
panel's text names no arm, model or prompt version, card after card."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

WAIT_MS = 30_000

SETUP = """
import json, os
os.environ["NPC_NB_HOME"] = {home!r}
os.environ["NPC_NB_REVIEWER"] = "browser"
import npc_nb
nb = npc_nb.open({project!r}, extract_in_background=False)
nb.npc("analyst", directive="You help.", model="npc_nb/offline")
nb.chat("analyst", "We decided to use DuckDB for all survey data. I prefer plots with large fonts.")
nb.extraction.cancel()
def scripted(user, reply):
    said = "We decided to use DuckDB for all survey data"
    return json.dumps({{"memories": [{{"statement": said + ".", "category": "decision",
                                       "evidence_quote": said}}]}})
exp = nb.experiment("secret-experiment", arms={{
    "control-arm": {{"model": "npc_nb/offline", "prompt_version": "prompt-v1-secret"}},
    "treatment-arm": {{"extractor": scripted, "prompt_version": "prompt-v2-secret"}}}},
    npc="analyst")
exp.run()
exp.wait(timeout=120)
%load_ext npc_nb
"""
REVEALING = (
    "control-arm",
    "treatment-arm",
    "prompt-v1-secret",
    "prompt-v2-secret",
    "npc_nb/offline",
    "secret-experiment",
    "scripted",
)


def test_the_blind_panel_names_no_arm_in_jupyterlab(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project))
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook(
            "blind.ipynb", [setup, "%npc_review --experiment secret-experiment"]
        )
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 2)
            seen = []
            try:
                page.wait_for_selector(".npc-review-panel .npc-card-text", timeout=60_000)
                page.click(".npc-review-panel .npc-card-text")  # the panel takes the keys
                for _ in range(3):  # three cards: the offline arm's two, the scripted arm's
                    page.wait_for_function(
                        "() => !document.querySelector('.npc-review-panel.npc-busy')",
                        timeout=WAIT_MS,
                    )
                    seen.append(page.inner_text(".npc-review-panel"))
                    page.keyboard.press("a")
                    page.wait_for_function(  # two cards may say the same: wait for the tally
                        "n => document.querySelector('.npc-review-panel')"
                        "?.innerText.includes(n + ' approved')",
                        arg=len(seen),
                        timeout=WAIT_MS,
                    )
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "blind-panel-failed.png"))
                raise
    shown = "\n".join(seen)
    assert "We decided to use DuckDB for all survey data." in shown
    assert "hidden (blind review)" in shown
    for revealing in REVEALING:
        assert revealing not in shown, revealing
    nb = npc_nb.open(project)
    assert nb.experiment("secret-experiment").results()["decided"].sum() >= 3
    nb.close()
