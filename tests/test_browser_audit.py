"""``%npc_review --audit NAME`` in a real JupyterLab, in headless Chromium: the panel
opens on the audit's first sampled card, single keys approve and reject through the
sample in the audit's order, no tally is shown at any point, and once the sample is
complete the panel sends the reviewer to ``audit.result()``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import npc_nb
from tests.helpers import propose
from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
SETUP = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
os.environ["NPC_NB_REVIEWER"] = "browser"
import npc_nb
nb = npc_nb.open({project!r})
%load_ext npc_nb
"""
PANEL = ".npc-review-panel"
CARD = f"{PANEL} .npc-card-text"
#: A tally or an error count, which a blind review never shows.
TALLY = re.compile(r"\d+ (approved|rejected|edited|deferred|errors?)", re.IGNORECASE)


def test_an_audit_sample_reviewed_with_keys_in_jupyterlab(
    nb: npc_nb.Project, project_dir: Path, isolated_home: Path, tmp_path: Path
) -> None:
    ids = {
        propose(nb, f"Ringing site {n + 1} was visited at dawn."): f"site {n + 1}"
        for n in range(30)
    }
    audit = nb.audit(tolerance=0.3, confidence=0.8, seed=1, looks=1, name="spring")
    texts = nb.memories().set_index("id")["final_text"].to_dict()
    sample = [texts[memory_id] for memory_id in audit.pending()]
    assert 2 < len(sample) < len(ids)
    nb.close()
    setup = SETUP.format(home=str(isolated_home), project=str(project_dir))
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("audit.ipynb", [setup, "%npc_review --audit spring"])
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 2)
            try:
                _review_the_sample(page, sample)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "audit-panel-failed.png"))
                raise
    again = npc_nb.open(project_dir)
    try:
        status = again.memories().set_index("final_text")["status"].to_dict()
        assert status[sample[0]] == "human-rejected"
        assert {status[text] for text in sample[1:]} == {"human-approved"}
        assert len(again.review_queue()) == len(ids) - len(sample)
    finally:
        again.close()


def _review_the_sample(page: object, sample: list[str]) -> None:
    page.wait_for_selector(CARD, timeout=60_000)  # type: ignore[attr-defined]
    assert page.inner_text(CARD) == sample[0]  # type: ignore[attr-defined]
    page.click(CARD)  # type: ignore[attr-defined]
    for number, text in enumerate(sample):
        page.wait_for_function(  # type: ignore[attr-defined]
            f"text => document.querySelector('{CARD}')?.textContent === text",
            arg=text,
            timeout=WAIT_MS,
        )
        _wait_for(page, f"{number} of {len(sample)} sampled cards decided")
        page.wait_for_function(  # type: ignore[attr-defined]
            f"() => !document.querySelector('{PANEL}.npc-busy')", timeout=WAIT_MS
        )
        assert not TALLY.search(page.inner_text(PANEL))  # type: ignore[attr-defined]
        page.keyboard.press("r" if number == 0 else "a")  # type: ignore[attr-defined]
    _wait_for(page, "Review finished")  # the end: the summary where the card was
    page.wait_for_selector(CARD, state="detached", timeout=WAIT_MS)  # type: ignore[attr-defined]
    shown = page.inner_text(PANEL)  # type: ignore[attr-defined]
    assert f"{len(sample)} of {len(sample)} sampled cards decided" in shown
    assert "The sample is complete: call audit.result()" in shown
    assert not TALLY.search(shown), shown
    assert "Approve all" not in shown
    page.screenshot(path=str(ARTIFACTS / "audit-panel-end.png"))  # type: ignore[attr-defined]


def _wait_for(page: object, text: str) -> None:
    page.wait_for_function(  # type: ignore[attr-defined]
        "text => document.querySelector('.npc-review-panel')?.innerText.includes(text)",
        arg=text,
        timeout=WAIT_MS,
    )
