"""What a first session looks like in a real JupyterLab at its default width (a 1280-pixel
window, the file browser open beside the notebook), in headless Chromium: the review
panel, its edit box and the knowledge graph fit the notebook's width (no horizontal
scrollbar, a long URL in a card included), and in a small graph nothing drawn hides
anything else: no label lies over another node, no arrowhead over a concept, no edge's
label over a node."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

WAIT_MS = 60_000
LONG_URL = "https://example.org/" + "/".join(["a-path-with-no-spaces"] * 6)
SETUP = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
os.environ["NPC_NB_REVIEWER"] = "browser"
import npc_nb
nb = npc_nb.open({project!r})
for npc, text in [
    ("analyst", "We decided to use DuckDB for the ringing database"),
    ("analyst", "The ringing database is backed up to Zenodo"),
    ("writer", "We decided to submit the paper to Ibis"),
    ("writer", "Ibis wants the methods section by Friday"),
]:
    nb.approve(nb.add_candidate(text, category="decision", npc=npc).memory_id)
nb.add_candidate("The field team wants the long-format export, see {url}", category="fact",
                 npc="analyst")
%load_ext npc_nb
"""

# Each element that must fit: (what, scrollWidth, clientWidth); none may scroll sideways.
WIDTHS = """() => {
    const found = [];
    const measure = (what, selector) => document.querySelectorAll(selector).forEach(
        (element, n) => found.push([`${what} ${n}`, element.scrollWidth, element.clientWidth]));
    measure("output", ".jp-OutputArea-output");
    measure("panel", ".npc-review-panel");
    measure("edit box", ".npc-review-panel .npc-edit");
    measure("edit text", ".npc-review-panel .npc-edit textarea");
    measure("graph", ".npc-nb-graph");
    return found;
}"""

# Every node's drawn extent (label included) against every other's, every arrowhead
# (vis-network's own arrow geometry) against every concept it does not join, and every
# edge label against every node its edge does not join.
HIDDEN = """graph => {
    const network = graph.npcNbNetwork;
    const ids = network.body.data.nodes.getIds();
    const hit = (a, b) =>
        a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const overlapping = [];
    for (let i = 0; i < ids.length; i++)
        for (let j = i + 1; j < ids.length; j++)
            if (hit(network.getBoundingBox(ids[i]), network.getBoundingBox(ids[j])))
                overlapping.push([ids[i], ids[j]]);
    const ctx = graph.querySelector("canvas").getContext("2d");
    const underArrows = [];
    for (const edge of Object.values(network.body.edges)) {
        const via = edge.edgeType._getViaCoordinates();
        const values = {width: edge.options.width, toArrowScaleFactor: 1, toArrowType: "arrow"};
        const arrow = edge.edgeType.getArrowData(ctx, "to", via, false, false, values);
        const half = arrow.length / 2;
        const area = {
            left: Math.min(arrow.point.x, arrow.core.x) - half,
            right: Math.max(arrow.point.x, arrow.core.x) + half,
            top: Math.min(arrow.point.y, arrow.core.y) - half,
            bottom: Math.max(arrow.point.y, arrow.core.y) + half,
        };
        for (const id of ids)
            if (id.startsWith("concept:") && id !== edge.fromId && id !== edge.toId
                    && hit(area, network.getBoundingBox(id)))
                underArrows.push([edge.fromId, edge.toId, id]);
    }
    const underLabels = [];
    for (const edge of Object.values(network.body.edges)) {
        const size = edge.labelModule.size;
        if (!edge.options.label || !size.width) continue;
        const area = {left: size.left, right: size.left + size.width,
                      top: size.top, bottom: size.top + size.height};
        for (const id of ids)
            if (id !== edge.fromId && id !== edge.toId && hit(area, network.getBoundingBox(id)))
                underLabels.push([edge.options.label, id]);
    }
    return {nodes: ids.length, overlapping, underArrows, underLabels};
}"""


def test_panel_edit_box_and_graph_fit_and_a_small_graph_hides_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project), url=LONG_URL)
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("first-hour.ipynb", [setup, "%npc_review", "%npc_graph"])
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 3)
            try:
                page.wait_for_selector(".npc-review-panel .npc-card-text", timeout=WAIT_MS)
                graph = page.wait_for_selector(".npc-nb-graph[data-state='drawn']", timeout=WAIT_MS)
                page.click(".npc-review-panel .npc-card-text")
                page.keyboard.press("e")  # the edit box, holding the card's long URL
                page.wait_for_selector(".npc-edit textarea", state="visible", timeout=WAIT_MS)
                sidebar = page.evaluate("() => document.querySelector('#jp-left-stack')"
                                        "?.getBoundingClientRect().width || 0")  # fmt: skip
                widths = page.evaluate(WIDTHS)
                hidden = graph.evaluate(HIDDEN)
            finally:
                page.locator(".npc-review-panel").screenshot(
                    path=str(ARTIFACTS / "first-hour-panel.png")
                )
                page.locator(".npc-nb-graph").screenshot(
                    path=str(ARTIFACTS / "first-hour-graph.png")
                )

    assert sidebar > 0  # JupyterLab's default layout: the file browser beside the notebook
    assert {what.rsplit(" ", 1)[0] for what, *_ in widths} >= {
        "output", "panel", "edit box", "edit text", "graph",
    }  # fmt: skip
    scrolling = [(what, scroll, client) for what, scroll, client in widths if scroll > client]
    assert scrolling == [], scrolling
    assert hidden["nodes"] >= 10 and hidden["overlapping"] == [], hidden
    assert hidden["underArrows"] == [] and hidden["underLabels"] == [], hidden
