"""What each node and edge of a drawn graph looks like, for every drawing of it.

The interactive renderer, the static picture and the standalone page all take their
colours, shapes, sizes, labels and tooltip texts from here, so the three agree. Every
string returned is plain text (memory and model text included); each drawing keeps it
text: a canvas label, a DOM text node, an escaped attribute.
"""

from __future__ import annotations

import math
from typing import TypedDict

__all__ = [
    "CATEGORY_COLOURS",
    "MEMORY_LABEL_CHARS",
    "NodeLook",
    "edge_label",
    "edge_title",
    "edge_width",
    "node_label",
    "node_style",
    "node_title",
]

CATEGORY_COLOURS = {
    "decision": "#4e79a7",
    "preference": "#f28e2b",
    "commitment": "#e15759",
    "constraint": "#76b7b2",
    "open_loop": "#edc948",
    "fact": "#59a14f",
}
OTHER_COLOUR = "#bab0ac"
_KIND_COLOURS = {"persona": "#3b3b58", "concept": "#9c9ede"}  # others: their category's
_KIND_SHAPES = {"persona": ("star", 22.0), "category": ("box", 14.0), "memory": ("dot", 9.0)}
_UNLABELLED_RELATIONS = ("mentions", "in category", "remembers")
#: A memory's label: its first words, at most this many characters (the tooltip holds
#: the whole text). A longer label covered the concepts around it in a small graph.
MEMORY_LABEL_CHARS = 28


class NodeLook(TypedDict):
    color: str
    shape: str
    size: float


def node_style(data: dict) -> NodeLook:
    """Colour is the category (a persona and a concept have their own); a concept is a
    dot that grows with its support."""
    kind = data["kind"]
    shape, size = _KIND_SHAPES.get(kind, ("dot", 0.0))
    if kind == "concept":
        size = round(8 + 5 * math.sqrt(data.get("support", 1)), 1)
    colour = _KIND_COLOURS.get(kind) or CATEGORY_COLOURS.get(
        data.get("category") or data["label"], OTHER_COLOUR
    )
    return {"color": colour, "shape": shape, "size": size}


def node_label(data: dict) -> str:
    """The text written by a node: a persona's, category's or concept's name (at most
    40 characters), a memory's first words."""
    label = str(data["label"])
    return _first_words(label) if data["kind"] == "memory" else label[:40]


def _first_words(text: str, limit: int = MEMORY_LABEL_CHARS) -> str:
    """The words of ``text`` that fit in ``limit`` characters, "…" when cut."""
    text = text.removesuffix("…")
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return cut.rstrip(" ,;:.") + "…"


def node_title(data: dict) -> str:
    """A node's tooltip: a memory's text and provenance, a concept's support."""
    if data["kind"] == "memory":
        return (
            f"{data['text']}\n— {data['npc'] or data['scope']} · {data['category']} · "
            f"proposed by {data['model'] or 'hand'} · approved by {data['reviewer']}"
        )
    if data["kind"] == "concept":
        return f"{data['label']}: in {_memories(data['support'], 'approved ')}"
    return str(data["label"])


def _memories(count: int, kind: str = "") -> str:
    """How many memories, in words: 1 approved memory, 3 approved memories."""
    return f"{count} {kind}{'memory' if count == 1 else 'memories'}"


def edge_label(data: dict) -> str:
    """The relation, written on the edge only between concepts (the rest are implied)."""
    relation = str(data["relation"])
    return "" if relation in _UNLABELLED_RELATIONS else relation


def edge_title(data: dict) -> str:
    return f"{data['relation']} ({_memories(len(data['memory_ids']))})"


def edge_width(data: dict) -> float:
    return round(1 + math.log1p(len(data["memory_ids"])), 2)
