"""The graph drawn with pyvis (the one pyvis importer): a Network to change and show
inline, and the standalone offline page.

``styled_network`` builds a ``PyvisGraph``: a real ``pyvis.network.Network`` holding a
drawn graph's nodes and edges with the inline renderer's look (colours, shapes, sizes,
labels and tooltips from ``style.py``; its fonts, edges and layout), which the user may
change as any pyvis network (``set_options``, ``show_buttons``, ``add_node``, ...). It
shows itself inline and offline: ``_repr_html_`` is an iframe whose ``srcdoc`` holds the
whole page, rendered again on every display so it shows what was changed since. That
page inlines vis-network (pyvis's ``cdn_resources="in_line"``, whatever the network's
``cdn_resources`` was set to; tom-select too when pyvis's menus are on) and loses
pyvis's Bootstrap links, which its template writes in every mode and the drawing does
not need, so it fetches nothing; it weighs
~0.7 MB, which every such output carries in a saved notebook (the light renderer in
``view.py`` carries only the graph's data). The same page, saved as a file to open in
any browser, is ``GraphView.page``.

Memory text is data throughout. Labels are drawn on a canvas; the node and edge data
reach the page through Jinja's ``tojson`` (``<``, ``>``, ``&`` and ``'`` escaped, so a
``</script>`` in memory text cannot end the script); tooltips are rendered as text
(``_TextTooltips``); the page is escaped whole into the iframe's attribute, and the
iframe is sandboxed to scripts only: its page cannot reach the notebook around it.
"""

from __future__ import annotations

import html
import re
from typing import Any

import networkx as nx
from pyvis.network import Network

from . import style

__all__ = ["PyvisGraph", "standalone_page", "styled_network"]

_OUTSIDE = re.compile(
    r"<(link|script)\b[^>]*\b(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.IGNORECASE
)
# pyvis writes the heading twice; empty, each is still an h1's margins above the canvas.
_NO_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>")
_FONT = "system-ui, sans-serif"
# vis-network's tooltip font is "verdana", which falls back to a serif where it is absent.
_TOOLTIP_FONT = f"<style>div.vis-tooltip {{ font-family: {_FONT}; }}</style>"


class PyvisGraph(Network):
    """A pyvis ``Network`` of the knowledge graph that shows itself inline, offline.

    Change it as any pyvis network; displaying it again draws it as it is then. ``note``
    says what the cut left out; ``frame_height`` is the inline frame's height in pixels.
    """

    template: Any  # pyvis's Jinja template (set by Network.prep_notebook)
    cdn_resources: str  # pyvis's "local", "in_line" or "remote" (set by Network.__init__)

    def __init__(self, height: int = 640, note: str = "") -> None:
        super().__init__(
            height=f"{height - 20}px",
            width="100%",
            directed=True,
            notebook=True,
            cdn_resources="in_line",
        )
        self.frame_height = height
        self.note = note

    def offline_html(self) -> str:
        """The page as the network stands now: vis-network inline, nothing fetched."""
        return self.generate_html()

    def generate_html(
        self, name: str = "index.html", local: bool = True, notebook: bool = False
    ) -> str:
        """pyvis's page (also what ``write_html``, ``save_graph`` and ``show`` write),
        always the offline one: vis-network inline, tooltips as text, nothing fetched,
        whatever ``notebook`` and ``cdn_resources`` say."""
        template, resources = self.template, self.cdn_resources
        self.template = _TextTooltips(template or self.templateEnv.get_template(self.path))
        self.cdn_resources = "in_line"  # whatever it was set to: "remote" and "local" fetch
        try:  # notebook=True: pyvis renders self.template, the one whose tooltips are text
            page = super().generate_html(name, local, notebook=True)
        finally:
            self.template, self.cdn_resources = template, resources
        page = _NO_HEADING.sub("", _OUTSIDE.sub("", page))
        self.html = page.replace("</head>", f"{_TOOLTIP_FONT}\n</head>", 1)
        return self.html

    def summary(self) -> str:
        text = "Knowledge graph of approved memories (pyvis): "
        text += f"{self.num_nodes()} nodes, {self.num_edges()} edges."
        return f"{text} {self.note}".strip()

    def _repr_html_(self) -> str:
        note = f"<p>{html.escape(self.note)}</p>" if self.note else ""
        return (
            f'<div class="npc-nb-pyvis">{note}<iframe title="{html.escape(self.summary())}" '
            f'sandbox="allow-scripts" style="width: 100%; height: {self.frame_height}px; '
            f'border: 0" srcdoc="{html.escape(self.offline_html(), quote=True)}"></iframe></div>'
        )

    def __repr__(self) -> str:
        return self.summary()


def styled_network(graph: nx.MultiDiGraph, height: int = 640, note: str = "") -> PyvisGraph:
    """``graph`` (already cut to size) as a pyvis network styled like the renderer."""
    net = PyvisGraph(height, note)
    for node, data in graph.nodes(data=True):
        net.add_node(
            node,
            label=style.node_label(data),
            title=style.node_title(data),
            mass=4 if data["kind"] == "category" else 1,
            font={"face": _FONT, "size": 11 if data["kind"] == "memory" else 13},
            **style.node_style(data),
        )
    for source, target, data in graph.edges(data=True):
        net.add_edge(
            source,
            target,
            title=style.edge_title(data),
            label=style.edge_label(data),
            width=style.edge_width(data),
            arrows="to",
            font={"face": _FONT, "size": 11, "strokeColor": "#ffffff"},
        )
    _renderer_layout(net)
    return net


def _renderer_layout(net: Network) -> None:
    """The inline renderer's layout and interaction, set on pyvis's own option objects
    (not ``set_options``, which would turn them into a dict that ``show_buttons`` and
    pyvis's other helpers no longer accept)."""
    net.force_atlas_2based(gravity=-60, spring_length=110, overlap=0.6)
    net.options.physics.stabilization.iterations = 300
    net.options.interaction.hover = True
    net.options.interaction.tooltipDelay = 150
    net.options.edges.smooth.type = "continuous"
    net.options.edges.color.inherit = "from"


def standalone_page(graph: nx.MultiDiGraph, height: int) -> str:
    """``graph`` (already cut to size) drawn as an offline HTML page."""
    return styled_network(graph, height).offline_html()


class _TextTooltips:
    """pyvis's page template, rendered with its HTML-tooltip mode always off.

    As soon as one node title contains "href", pyvis 0.3.2 shows every title with
    ``popup.innerHTML`` (template.html, ``showPopup``), so HTML in memory text would run.
    With the mode off, vis-network 9.1.2 sets a string title as ``innerText``: always
    text, whatever nodes the user adds later.
    """

    def __init__(self, template: Any) -> None:
        self._template = template

    def render(self, **values: Any) -> str:
        return self._template.render(**{**values, "tooltip_link": False})
