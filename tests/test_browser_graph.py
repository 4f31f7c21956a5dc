"""In a real JupyterLab, in headless Chromium, with every outside request blocked: the
knowledge graph draws with the renderer npc_nb installs (its drawing library bundled, so
nothing is fetched from anywhere but the lab), labels and tooltips stay text in the UI's
font, no label lies over a category box, and a saved notebook's graphs draw again from
their outputs alone."""

from __future__ import annotations

import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import pytest

import npc_nb
from npc_nb.graph.view import MIME_TYPE
from tests.jupyterlab import ARTIFACTS, Lab, browser_page, jupyterlab, run_all_cells
from tests.test_browser_layout import HIDDEN

pytestmark = pytest.mark.browser

HOSTILE = "Notes <img src=x onerror=alert(1)> from </script><script>alert(2)</script> Vienna"
MEMORIES = [
    ("We decided to use DuckDB for the ringing database", "analyst"),
    ("The ringing database is backed up to Zenodo", "analyst"),
    ("We decided to submit the paper to Ibis", "writer"),
    ("Ibis wants the methods section by Friday", "writer"),
    (HOSTILE, "writer"),
]
SETUP = f"""
import os, tempfile
os.environ["NPC_NB_HOME"] = tempfile.mkdtemp()
import npc_nb
nb = npc_nb.open(tempfile.mkdtemp())
for text, npc in {MEMORIES!r}:
    nb.approve(nb.add_candidate(text, category="decision", npc=npc).memory_id)
%load_ext npc_nb
"""

GRAPH = ".jp-OutputArea .npc-nb-graph"

# Pixels drawn on one graph's canvas (0 while vis-network has not drawn anything).
COUNT_DRAWN = """graph => {
    const canvas = graph.querySelector("canvas");
    if (!canvas || !canvas.width) return 0;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let drawn = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) drawn++;
    return drawn;
}"""

# Every node's drawn extent (its label included) against every category box.
OVER_BOXES = """graph => {
    const network = graph.npcNbNetwork;
    const ids = network.body.data.nodes.getIds();
    const boxes = ids.filter(id => id.startsWith("category:"));
    const hit = (a, b) =>
        a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const over = [];
    for (const box of boxes)
        for (const id of ids)
            if (id !== box && hit(network.getBoundingBox(box), network.getBoundingBox(id)))
                over.push([id, box]);
    return {boxes: boxes.length, over};
}"""

# Where a node is drawn, in page pixels.
NODE_ON_PAGE = """(graph, id) => {
    const network = graph.npcNbNetwork;
    const at = network.canvasToDOM(network.getPositions([id])[id]);
    const frame = graph.querySelector("canvas").getBoundingClientRect();
    return {x: frame.left + at.x, y: frame.top + at.y};
}"""

TOOLTIP = """graph => {
    const tip = graph.querySelector("div.vis-tooltip");
    if (!tip || tip.style.visibility === "hidden" || !tip.textContent) return null;
    return {
        text: tip.innerText,
        elements: tip.querySelectorAll("*").length - 1,  // the text holder itself
        font: getComputedStyle(tip).fontFamily,
        uiFont: getComputedStyle(graph).getPropertyValue("--jp-ui-font-family").trim(),
    };
}"""


def test_the_graph_draws_in_jupyterlab_with_the_network_blocked(tmp_path: Path) -> None:
    requested: list[str] = []
    with jupyterlab(tmp_path, {}) as lab:
        url = lab.write_notebook("graph.ipynb", [SETUP, "%npc_graph"])
        with browser_page(lab) as page:
            page.on("request", lambda request: requested.append(request.url))
            page.goto(url)
            run_all_cells(page, 2)
            graph = wait_until_drawn(page, 1, "graph-in-jupyterlab")
            boxes = graph.evaluate(OVER_BOXES)
            hidden = graph.evaluate(HIDDEN)
            memory = next(n for n in node_ids(graph) if "Notes" in label_of(graph, n))
            at = graph.evaluate(NODE_ON_PAGE, memory)
            page.mouse.move(at["x"], at["y"])
            page.wait_for_function(f"g => ({TOOLTIP})(g) !== null", arg=graph, timeout=30_000)
            tooltip = graph.evaluate(TOOLTIP)
            page.screenshot(path=str(ARTIFACTS / "graph-tooltip-in-jupyterlab.png"))
            markup = graph.evaluate("g => g.querySelectorAll('img, iframe, script').length")
            summary = graph.evaluate("g => g.querySelector('.npc-nb-graph-summary').innerText")
        blocked = list(lab.blocked)
        lab_host = urlsplit(lab.url).netloc

    # Nothing left the lab: the drawing library came with the renderer.
    assert blocked == [], blocked
    assert not [u for u in requested if urlsplit(u).netloc not in ("", lab_host)], requested
    # No label over a category box; in this small graph nothing over anything.
    assert boxes["boxes"] == 1 and boxes["over"] == [], boxes
    assert hidden["overlapping"] == hidden["underArrows"] == hidden["underLabels"] == [], hidden
    # The hostile memory is text: in the tooltip, in the UI's font, and no element made.
    assert tooltip["text"].startswith(HOSTILE), tooltip
    assert tooltip["elements"] == 0 and markup == 0, tooltip
    assert tooltip["font"] == tooltip["uiFont"] and "sans-serif" in tooltip["font"], tooltip
    assert "concepts" in summary and "memories" in summary


def test_a_saved_notebook_draws_its_graphs_from_the_outputs_alone(tmp_path: Path) -> None:
    """Three graph outputs saved in a notebook whose other outputs were cleared, reopened
    (untrusted, no cell run): each draws with the renderer, from its own data."""
    with jupyterlab(tmp_path, {}) as lab:
        url, expected = write_saved_graphs(lab, "saved.ipynb")
        with browser_page(lab) as page:
            page.goto(url)
            graphs = [wait_until_drawn(page, n, "saved-graphs-in-jupyterlab") for n in (1, 2, 3)]
            page.screenshot(path=str(ARTIFACTS / "saved-graphs-in-jupyterlab.png"))
            drawn = [len(node_ids(graph)) for graph in graphs]
            pictures = page.locator(".jp-OutputArea-output img").count()
            prompts = page.locator(".jp-InputPrompt").all_inner_texts()
        blocked = list(lab.blocked)

    assert drawn == expected  # all, the writer's, DuckDB's neighbourhood
    assert pictures == 0  # the renderer, not the static fallback, drew them
    assert all("*" not in prompt for prompt in prompts), prompts  # nothing ran
    assert blocked == [], blocked


def write_saved_graphs(lab: Lab, name: str) -> tuple[str, list[int]]:
    """A notebook as saved after drawing three graphs, the setup cell's output cleared:
    its URL, and how many nodes each graph has."""
    home = tempfile.mkdtemp()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NPC_NB_HOME", home)
        nb = npc_nb.open(tempfile.mkdtemp())
        for text, npc in MEMORIES[:4]:
            nb.approve(nb.add_candidate(text, category="decision", npc=npc).memory_id)
        views = [nb.graph.show(), nb.graph.show(npc="writer"), nb.graph.show(focus="DuckDB")]
        nb.close()
    cells = [SETUP, "%npc_graph", "%npc_graph --npc writer", "%npc_graph --focus DuckDB"]
    url = lab.write_notebook(name, cells)
    notebook = nbformat.read(lab.root / name, as_version=4)
    for cell, view in zip(notebook.cells[1:], views, strict=True):
        bundle = view._repr_mimebundle_()
        assert MIME_TYPE in bundle and "text/html" not in bundle
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    nbformat.write(notebook, lab.root / name)
    return url, [view.graph.number_of_nodes() for view in views]


def wait_until_drawn(page: object, nth: int, shot: str) -> object:
    """The ``nth`` graph output, once its layout has settled and its canvas is drawn."""
    selector = f":nth-match({GRAPH}[data-state='drawn'], {nth})"
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        graph = page.wait_for_selector(selector, timeout=60_000)  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            f"g => ({COUNT_DRAWN})(g) > 500", arg=graph, timeout=30_000
        )
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f"{shot}-failed.png"))  # type: ignore[attr-defined]
        raise
    graph.scroll_into_view_if_needed()
    return graph


def node_ids(graph: object) -> list[str]:
    return graph.evaluate("g => g.npcNbNetwork.body.data.nodes.getIds()")  # type: ignore[attr-defined]


def label_of(graph: object, node: str) -> str:
    return graph.evaluate(  # type: ignore[attr-defined]
        "(g, id) => g.npcNbNetwork.body.data.nodes.get(id).label", node
    )
