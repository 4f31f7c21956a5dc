"""A small static picture of the graph: the fallback where the interactive renderer is not.

nbconvert, GitHub's and VS Code's viewers, and a JupyterLab without npc_nb installed do
not know the graph's own MIME type; they show this PNG instead. It is drawn with
matplotlib from the same styles as the interactive drawing (a seeded layout, so the same
graph gives the same picture) and labels every node: personas, categories and concepts
by name, each memory dot by the first words of its text, smaller and grey (the whole
text is in the interactive view's tooltip). Labels are drawn as plain text (no
mathtext).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import networkx as nx

from . import style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["figure", "png"]

WIDTH_INCHES, HEIGHT_INCHES, DPI = 8.0, 5.0, 80
PALETTE = 32  # colours
_MARKERS = {"star": "*", "box": "s", "dot": "o"}


def png(graph: nx.MultiDiGraph) -> bytes:
    """The graph (already cut to size) as a PNG of about 640 x 400 pixels."""
    return _palette_png(figure(graph).canvas)


def figure(graph: nx.MultiDiGraph) -> Figure:
    """The picture as a matplotlib Figure (on an Agg canvas), before it becomes a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    drawing = Figure(figsize=(WIDTH_INCHES, HEIGHT_INCHES), dpi=DPI)
    FigureCanvasAgg(drawing)
    axes = drawing.add_axes((0.01, 0.01, 0.98, 0.98))
    axes.set_axis_off()
    if graph.number_of_nodes():
        _draw(axes, graph)
    return drawing


def _palette_png(canvas: Any) -> bytes:
    """The drawing as an 8-bit palette PNG: a quarter of the RGBA size, and a picture of
    flat colours and thin lines looks the same."""
    from PIL import Image

    canvas.draw()
    rgba = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba())
    out = io.BytesIO()
    rgba.convert("RGB").quantize(colors=PALETTE).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _draw(axes: Axes, graph: nx.MultiDiGraph) -> None:
    from matplotlib.collections import LineCollection

    shape = nx.Graph()  # the layout needs who links to whom, not the edges' data
    shape.add_nodes_from(graph)
    shape.add_edges_from(graph.edges())
    # Twice networkx's default spacing: room for a label under every dot.
    positions = nx.spring_layout(shape, seed=7, k=2 / max(1, shape.number_of_nodes()) ** 0.5)
    lines = [(positions[u], positions[v]) for u, v in {(u, v) for u, v in graph.edges()}]
    axes.add_collection(LineCollection(lines, colors="#c8c8d0", linewidths=0.8, zorder=1))
    looks = {node: style.node_style(data) for node, data in graph.nodes(data=True)}
    for shape in {look["shape"] for look in looks.values()}:
        drawn = [node for node, look in looks.items() if look["shape"] == shape]
        axes.scatter(
            [positions[node][0] for node in drawn],
            [positions[node][1] for node in drawn],
            s=[looks[node]["size"] ** 2 * 0.9 for node in drawn],
            c=[looks[node]["color"] for node in drawn],
            marker=_MARKERS.get(shape, "o"),
            zorder=2,
        )
    for node, data in graph.nodes(data=True):
        memory = data["kind"] == "memory"
        x, y = positions[node]
        axes.text(
            x,
            y - 0.06,
            style.node_label(data),
            fontsize=7 if memory else 8,
            color="#666670" if memory else "black",
            ha="center",
            va="top",
            usetex=False,
            parse_math=False,
            zorder=3,
        )
    axes.margins(0.12)
