"""In a real JupyterLab, in headless Chromium, with every outside request blocked: the
knowledge graph's drawing library reaches the page inline and draws on its canvas, and
nothing is fetched from anywhere but the lab."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

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

# Pixels drawn on the graph's canvas (0 while vis.js has not drawn anything).
COUNT_DRAWN = """() => {
    const canvas = document.querySelector("canvas");
    if (!canvas || !canvas.width) return 0;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let drawn = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
    return drawn;
}"""

# What the graph's frame holds: the library itself, and every URL any element points to.
FRAME_FACTS = """() => ({
    vis: typeof vis,
    network: typeof vis === "undefined" ? "undefined" : typeof vis.Network,
    drawnBy: typeof network === "object" && network !== null
        && network.body.container.contains(document.querySelector("canvas")),
    scripts: [...document.scripts].map(s => s.src).filter(Boolean),
    stylesheets: [...document.querySelectorAll("link")].map(l => l.href),
    urls: [...document.querySelectorAll("[src], [href], [srcset], [data], [action]")]
        .map(e => e.getAttribute("src") || e.getAttribute("href") || e.getAttribute("srcset")
             || e.getAttribute("data") || e.getAttribute("action")),
    resources: performance.getEntriesByType("resource").map(r => r.name),
})"""

OUTPUT_URLS = """output => [...output.querySelectorAll("[src], [href]")]
    .map(e => e.getAttribute("src") || e.getAttribute("href"))"""


def test_the_graph_draws_in_jupyterlab_with_the_network_blocked(tmp_path: Path) -> None:
    requested: list[tuple[str, str]] = []
    with jupyterlab(tmp_path, {}) as lab:
        url = lab.write_notebook("graph.ipynb", [SETUP, "%npc_graph"])
        with browser_page(lab) as page:
            page.on("request", lambda request: requested.append((request.url, frame_of(request))))
            page.goto(url)
            ARTIFACTS.mkdir(exist_ok=True)
            run_all_cells(page, 2)
            try:
                frame = page.wait_for_selector(".jp-OutputArea-output iframe", timeout=60_000)
                graph = frame.content_frame()
                graph.wait_for_function(f"() => ({COUNT_DRAWN})() > 500", timeout=60_000)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "graph-in-jupyterlab-failed.png"))
                raise
            page.screenshot(path=str(ARTIFACTS / "graph-in-jupyterlab.png"))
            facts = graph.evaluate(FRAME_FACTS)
            output = page.query_selector(".jp-OutputArea-output .npc-nb-graph")
            output_urls = page.evaluate(OUTPUT_URLS, output)
            srcdoc = frame.get_attribute("srcdoc") or ""
            summary = page.inner_text(".jp-OutputArea-output .npc-nb-graph small")
        blocked = list(lab.blocked)
        lab_host = urlsplit(lab.url).netloc

    # The drawing library itself reached the frame (inline) and drew this graph.
    assert (facts["vis"], facts["network"], facts["drawnBy"]) == ("object", "function", True)
    assert "vis-network" in srcdoc and "new vis.Network(" in srcdoc
    # Nothing in the drawn HTML points anywhere: no script or stylesheet to load, no URL.
    assert facts["scripts"] == [] and facts["stylesheets"] == [], facts
    assert facts["urls"] == [] and facts["resources"] == [], facts
    assert output_urls == [], output_urls
    assert not [u for u in (facts["urls"] + output_urls) if u.startswith(("http:", "https:", "//"))]
    # No request left for anything but the lab, and the graph's frame made none at all.
    assert blocked == [], blocked
    assert not [u for u, _ in requested if urlsplit(u).netloc not in ("", lab_host)], requested
    assert not [u for u, in_frame in requested if in_frame == "about:srcdoc"], requested
    assert "concepts" in summary and "memories" in summary


def frame_of(request: object) -> str:
    """The URL of the frame that made ``request`` ("" if it has none, e.g. a worker's)."""
    try:
        return request.frame.url  # type: ignore[attr-defined]
    except Exception:
        return ""
