"""Drawing the knowledge graph inline with pyvis, fully offline (the one pyvis importer).

vis-network is inlined into the page and pyvis's Bootstrap links (the only outside
resources it adds) are removed, so nothing is fetched from the network. The page is
embedded as an ``<iframe srcdoc>`` inside a ``<div>``: it renders in JupyterLab,
Notebook 7 and VS Code, and keeps its scripts apart from the notebook's. Large graphs
are cut to the best-connected nodes, with a note saying what was left out.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any

import networkx as nx

__all__ = ["GraphView", "render"]

DEFAULT_MAX_NODES = 250
CATEGORY_COLOURS = {
    "decision": "#4e79a7",
    "preference": "#f28e2b",
    "commitment": "#e15759",
    "constraint": "#76b7b2",
    "open_loop": "#edc948",
    "fact": "#59a14f",
}
_KIND_STYLE: dict[str, dict[str, object]] = {
    "persona": {"color": "#3b3b58", "shape": "star", "size": 22},
    "category": {"shape": "box", "size": 14},
    "concept": {"color": "#9c9ede", "shape": "dot"},
    "memory": {"shape": "dot", "size": 9},
}
_OUTSIDE = re.compile(
    r"<(link|script)\b[^>]*\b(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.IGNORECASE
)


@dataclass(frozen=True)
class GraphView:
    """A drawn graph: the HTML page, and what was left out to keep it usable."""

    graph: nx.MultiDiGraph
    page: str
    total_nodes: int
    height: int = 640

    @property
    def note(self) -> str:
        shown = self.graph.number_of_nodes()
        if shown == self.total_nodes:
            return ""
        return (
            f"Showing {shown:,} of {self.total_nodes:,} nodes (the best connected); use "
            "focus= and depth= (or --focus/--depth) to explore the rest."
        )

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for _, data in self.graph.nodes(data=True):
            kinds[data["kind"]] = kinds.get(data["kind"], 0) + 1
        plural = {"memory": "memories", "category": "categories"}
        counts = ", ".join(
            f"{n} {plural.get(kind, kind + 's') if n != 1 else kind}"
            for kind, n in sorted(kinds.items())
        )
        counts = counts or "empty"
        text = f"Knowledge graph of approved memories: {counts}; "
        text += f"{self.graph.number_of_edges()} edges."
        return f"{text} {self.note}".strip()

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        frame = (
            f'<div class="npc-nb-graph"><iframe srcdoc="{html.escape(self.page, quote=True)}" '
            f'style="width:100%;height:{self.height}px;border:1px solid #ddd" '
            'sandbox="allow-scripts"></iframe>'
            f"<div><small>{html.escape(self.summary())}</small></div></div>"
        )
        return {"text/plain": self.summary(), "text/html": frame}


def render(
    graph: nx.MultiDiGraph, max_nodes: int = DEFAULT_MAX_NODES, height: int = 640
) -> GraphView:
    """Draw ``graph`` (cut to ``max_nodes``) as a self-contained offline HTML page."""
    from pyvis.network import Network

    shown = _cut(graph, max_nodes)
    net = Network(
        height=f"{height - 20}px",
        width="100%",
        directed=True,
        notebook=True,
        cdn_resources="in_line",
    )
    for node, data in shown.nodes(data=True):
        net.add_node(node, label=data["label"], title=_node_title(data), **_style(data))
    for source, target, data in shown.edges(data=True):
        support = len(data["memory_ids"])
        net.add_edge(
            source,
            target,
            title=f"{data['relation']} ({support} memories)",
            label=data["relation"]
            if data["relation"] not in ("mentions", "in category", "remembers")
            else "",
            width=1 + math.log1p(support),
            arrows="to",
        )
    net.set_options(
        '{"physics": {"stabilization": {"iterations": 150}}, "interaction": {"hover": true}}'
    )
    net.template = _TextTooltips(net.template)
    page = _OUTSIDE.sub("", net.generate_html(notebook=True))
    return GraphView(shown, page, graph.number_of_nodes(), height)


class _TextTooltips:
    """pyvis's page template, rendered with its HTML-tooltip mode always off.

    Labels are drawn on a canvas, and the node and edge data reach the page through
    Jinja's ``tojson``, which escapes ``<``, ``>``, ``&`` and ``'`` (so a ``</script>`` in
    memory text cannot end the script). Tooltips are the gap: as soon as one node title
    contains "href", pyvis 0.3.2 shows every title with ``popup.innerHTML``
    (template.html, ``showPopup``), so HTML in memory text would run. With the mode off,
    vis-network 9.1.2 sets a string title as ``innerText``: always text.
    """

    def __init__(self, template: Any) -> None:
        self._template = template

    def render(self, **values: Any) -> str:
        return self._template.render(**{**values, "tooltip_link": False})


def _cut(graph: nx.MultiDiGraph, max_nodes: int) -> nx.MultiDiGraph:
    if graph.number_of_nodes() <= max_nodes:
        return graph
    ranked = sorted(graph.nodes, key=lambda n: (-graph.degree(n), n))
    return graph.subgraph(ranked[:max_nodes]).copy()


def _style(data: dict) -> dict[str, object]:
    style: dict[str, object] = {**_KIND_STYLE[data["kind"]]}
    if data["kind"] in ("memory", "category"):
        style["color"] = CATEGORY_COLOURS.get(data.get("category") or data["label"], "#bab0ac")
    if data["kind"] == "concept":
        style["size"] = 8 + 5 * math.sqrt(data.get("support", 1))
    return style


def _node_title(data: dict) -> str:
    if data["kind"] == "memory":
        return (
            f"{data['text']}\n— {data['npc'] or data['scope']} · {data['category']} · "
            f"proposed by {data['model'] or 'hand'} · approved by {data['reviewer']}"
        )
    if data["kind"] == "concept":
        return f"{data['label']}: in {data['support']} approved memories"
    return data["label"]
