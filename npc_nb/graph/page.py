"""The graph as one self-contained offline HTML page, with pyvis (the one pyvis importer).

vis-network is inlined into the page and pyvis's Bootstrap links (the only outside
resources it adds) are removed, so the page fetches nothing. It weighs ~0.7 MB, which is
why the inline view (``view.py``) does not put it in notebooks: it is for saving a graph
as a file to open in any browser (``GraphView.page``).
"""

from __future__ import annotations

import re
from typing import Any

import networkx as nx

from . import style

__all__ = ["standalone_page"]

_OUTSIDE = re.compile(
    r"<(link|script)\b[^>]*\b(href|src)=[\"']https?://[^>]*>(\s*</script>)?", re.IGNORECASE
)
# vis-network's tooltip font is "verdana", which falls back to a serif where it is absent.
_TOOLTIP_FONT = "<style>div.vis-tooltip { font-family: system-ui, sans-serif; }</style>"


def standalone_page(graph: nx.MultiDiGraph, height: int) -> str:
    """``graph`` (already cut to size) drawn as an offline HTML page."""
    from pyvis.network import Network

    net = Network(
        height=f"{height - 20}px",
        width="100%",
        directed=True,
        notebook=True,
        cdn_resources="in_line",
    )
    for node, data in graph.nodes(data=True):
        net.add_node(
            node, label=data["label"], title=style.node_title(data), **style.node_style(data)
        )
    for source, target, data in graph.edges(data=True):
        net.add_edge(
            source,
            target,
            title=style.edge_title(data),
            label=style.edge_label(data),
            width=style.edge_width(data),
            arrows="to",
        )
    net.set_options(
        '{"physics": {"stabilization": {"iterations": 150}}, "interaction": {"hover": true}}'
    )
    net.template = _TextTooltips(net.template)
    page = _OUTSIDE.sub("", net.generate_html(notebook=True))
    return page.replace("</head>", f"{_TOOLTIP_FONT}\n</head>", 1)


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
