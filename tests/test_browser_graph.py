"""In a real JupyterLab, in headless Chromium, with every outside request blocked: the
knowledge graph draws on its canvas."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

SETUP = """
import os, tempfile
os.environ["NPC_NB_HOME"] = tempfile.mkdtemp()
import npc_nb
nb = npc_nb.open(tempfile.mkdtemp())
for text, npc in [("We decided to use DuckDB for the ringing database", "analyst"),
                  ("The ringing database is backed up to Zenodo", "analyst"),
                  ("We decided to submit the paper to Ibis", "writer"),
                  ("Ibis wants the methods section by Friday", "writer")]:
    nb.approve(nb.add_candidate(text, category="decision", npc=npc).memory_id)
%load_ext npc_nb
"""

COUNT_DRAWN = """() => {
    const canvas = document.querySelector("canvas");
    if (!canvas || !canvas.width) return 0;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let drawn = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
    return drawn;
}"""


def test_the_graph_draws_in_jupyterlab_with_the_network_blocked(tmp_path: Path) -> None:
    with jupyterlab(tmp_path, {}) as lab:
        url = lab.write_notebook("graph.ipynb", [SETUP, "%npc_graph"])
        with browser_page(lab) as page:
            page.goto(url)
            ARTIFACTS.mkdir(exist_ok=True)
            run_all_cells(page, 2)
            try:
                frame = page.wait_for_selector(".jp-OutputArea-output iframe", timeout=60_000)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "graph-in-jupyterlab-failed.png"))
                raise
            graph = frame.content_frame()
            graph.wait_for_selector("canvas", timeout=30_000)
            drawn = 0
            deadline = time.monotonic() + 30
            while drawn == 0 and time.monotonic() < deadline:
                drawn = graph.evaluate(COUNT_DRAWN)
                time.sleep(0.25)
            time.sleep(1.5)  # let the layout settle for the screenshot
            page.screenshot(path=str(ARTIFACTS / "graph-in-jupyterlab.png"))
            summary = page.inner_text(".jp-OutputArea-output .npc-nb-graph small")
    assert drawn > 500, "the graph canvas stayed empty"
    assert "concepts" in summary and "memories" in summary
    from_graph = [blocked for blocked in lab.blocked if blocked[1] == "about:srcdoc"]
    assert from_graph == [], from_graph
    assert not [u for u, _ in lab.blocked if "jsdelivr" in u or "bootstrap" in u]
