"""The knowledge graph drawn inline: a light output that draws itself when reopened.

A drawn graph's output holds data, not a drawing program: its own MIME type
(``application/vnd.npc-nb.graph+json``: nodes and edges with their labels, tooltips,
colours and shapes, all plain text) for the JupyterLab renderer npc_nb installs (which
bundles the drawing library, so a notebook does not carry it once per graph and nothing
is fetched from the network), a small PNG for every viewer without that renderer
(nbconvert, VS Code, GitHub), and a text summary. A saved notebook's graph draws again
from its output alone, with no kernel. Large graphs are cut to the best-connected
nodes, with a note saying what was left out. The standalone HTML page (pyvis) is still
there, built only when asked for (``GraphView.page``); the same drawing as a pyvis
network to change and show inline is ``page.PyvisGraph`` (``nb.graph.pyvis()``).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx

from . import style

__all__ = ["MIME_TYPE", "GraphView"]

MIME_TYPE = "application/vnd.npc-nb.graph+json"
DATA_VERSION = 1


@dataclass(frozen=True)
class GraphView:
    """A drawn graph: what is drawn, how tall, and what was left out to keep it usable."""

    graph: nx.MultiDiGraph
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

    def data(self) -> dict[str, Any]:
        """The renderer's data: JSON of plain strings and numbers, no markup, no code.
        An edge's "source" and "target" are places in "nodes"."""
        position = {key: index for index, key in enumerate(self.graph.nodes)}
        return {
            "version": DATA_VERSION,
            "height": self.height,
            "summary": self.summary(),
            "nodes": [_node(key, data) for key, data in self.graph.nodes(data=True)],
            "edges": [
                _edge(position[u], position[v], data) for u, v, data in self.graph.edges(data=True)
            ],
        }

    @cached_property
    def picture(self) -> bytes:
        """A small static PNG of the graph, the fallback outside JupyterLab."""
        from . import picture

        return picture.png(self.graph)

    @cached_property
    def page(self) -> str:
        """The graph as one self-contained offline HTML page (~0.7 MB; vis-network inline),
        to save as a file; never put in the notebook."""
        from . import page

        return page.standalone_page(self.graph, self.height)

    def _repr_mimebundle_(self, **_: object) -> dict[str, Any]:
        return {
            MIME_TYPE: self.data(),
            "image/png": base64.b64encode(self.picture).decode("ascii"),
            "text/plain": self.summary(),
        }


def _node(key: str, data: dict) -> dict[str, Any]:
    return {
        "id": key,
        "kind": data["kind"],
        "label": style.node_label(data),
        "title": style.node_title(data),
        **style.node_style(data),
    }


def _edge(source: int, target: int, data: dict) -> dict[str, Any]:
    """An edge between two nodes given by their place in "nodes" (ids are long, and a
    graph has several edges per node); "label" only where one is written."""
    edge = {"source": source, "target": target, "title": style.edge_title(data)}
    edge["width"] = style.edge_width(data)
    return {**edge, "label": style.edge_label(data)} if style.edge_label(data) else edge
