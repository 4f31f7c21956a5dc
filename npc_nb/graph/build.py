"""The knowledge graph of approved memories, as a networkx MultiDiGraph.

Nodes are keyed by id: ``memory:<id>``, ``concept:<normalised name>``, ``npc:<name>``,
``category:<name>``; labels are attributes. Edges: a persona ``remembers`` a memory, a
memory is ``in category`` and ``mentions`` its concepts, and concepts are joined by the
relations the model read in the memories. Every edge carries ``memory_ids``: the
memories that support it. The graph is derived on each call from the approved memories
(the one approval predicate) and the concepts stored for their current text, so
approving adds a memory's part and rejecting, superseding or undoing removes whatever
only it supported. Concepts are extracted once per memory version and stored.

The nodes, edges, degrees and any cut are worked out in the store
(``store.graph_nodes``); this module turns the rows it returns into networkx, so a
drawing of 250 nodes builds 250 nodes whatever the size of the store.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import networkx as nx
import pandas as pd

from .._foundations.tables import kinds_of, with_missing_as_na
from .._foundations.text import content_hash
from .._foundations.utc import utc_now
from ..errors import InvalidValueError, ModelCallError
from ..models import gateway
from ..store.graph import graph_nodes, graph_sql
from ..store.memories.predicates import Moment
from . import concepts

if TYPE_CHECKING:
    from ..store import Store

__all__ = [
    "drawn_graph",
    "ensure_concepts",
    "graph_frames",
    "graph_of",
    "to_graphml",
]

BATCH = 20


def ensure_concepts(store: Store, missing: pd.DataFrame, model: str) -> int:
    """Extract and store concepts for memory versions that have none yet (id, final_hash,
    final_text); return how many were processed. A failed batch is recorded with its
    error, not retried."""
    for start in range(0, len(missing), BATCH):
        batch = missing.iloc[start : start + BATCH]
        _extract_batch(store, batch, model)
    return len(missing)


def _extract_batch(store: Store, batch: pd.DataFrame, model: str) -> None:
    items = [{"id": r.id, "text": " ".join(r.final_text.split())} for r in batch.itertuples()]
    error, refused = None, list[str]()
    try:
        raw = gateway.complete(model, concepts.concept_messages(items)).text
        parsed, refused = concepts.read_concepts(raw, {item["id"] for item in items})
    except (ModelCallError, ValueError, TypeError) as exc:
        parsed, error = {}, f"{type(exc).__name__}: {exc}"[:500]
    now, rows, links, errors = utc_now(), [], [], []
    for version in batch.itertuples():
        found = parsed.get(version.id)
        errors.append(error or _refusals(found["refused"] if found else refused))
        if found:
            rows += [(version.id, version.final_hash, *concept) for concept in found["concepts"]]
            links += [(version.id, version.final_hash, *rel) for rel in found["relations"]]
    graph_sql.record_concepts(
        store,
        pd.DataFrame(
            {
                "memory_id": batch["id"],
                "memory_hash": batch["final_hash"],
                "model": model,
                "extracted_at": now,
                "error": errors,
            }
        ),
        pd.DataFrame(rows, columns=["memory_id", "memory_hash", "concept_key", "concept_label"]),
        pd.DataFrame(
            links, columns=["memory_id", "memory_hash", "source_key", "relation", "target_key"]
        ),
    )


def _refusals(problems: list[str]) -> str | None:
    """A memory's error: why its item (or, when it has none, the batch's unreadable
    items) or some of its labels were refused."""
    return f"refused {len(problems)}: " + "; ".join(problems)[:480] if problems else None


def approved_versions(
    store: Store, npc: str | None, category: str | None, as_of: datetime | Moment | None
) -> pd.DataFrame:
    rows = graph_sql.approved_rows(store, npc, category, as_of)
    if as_of is not None and not rows.empty:  # that moment's text, so that moment's hash
        rows["final_hash"] = rows["final_text"].map(content_hash)
    return rows


def drawn_graph(
    store: Store,
    model: str,
    *,
    npc: str | None = None,
    category: str | None = None,
    as_of: datetime | Moment | None = None,
    focus: str | None = None,
    depth: int = 2,
    limit: int | None = None,
) -> tuple[nx.MultiDiGraph, int]:
    """The graph of the approved memories (now, or as they stood at ``as_of``), or only
    ``focus``'s neighbourhood within ``depth`` steps, cut to its ``limit`` best-connected
    nodes; and how many nodes there were before the cut. Concepts missing for a memory's
    text are extracted first, by ``model``. The cut is made in the store, so only the
    drawn nodes are read."""
    versions, texts = None, None
    if as_of is None:
        missing = graph_sql.missing_now(store, npc, category)
    else:
        versions = approved_versions(store, npc, category, as_of)
        missing = graph_sql.missing_versions(store, versions)
        texts = dict(zip(versions["id"], versions["final_text"], strict=True))
    ensure_concepts(store, missing, model)
    key = None if focus is None else concepts.concept_key(focus)
    part = graph_nodes.graph_part(
        store, versions, npc=npc, category=category, focus=key, depth=depth, limit=limit
    )
    if part.missing_focus is not None:
        raise InvalidValueError(
            "focus",
            focus,
            tuple(part.missing_focus) or "a concept of the graph (it has none yet)",
            lead=f"No concept {focus!r} in the graph",
        )
    return graph_of(part, texts), part.total


def graph_of(part: graph_nodes.GraphPart, texts: dict[str, str] | None = None) -> nx.MultiDiGraph:
    """The networkx graph of ``part``, in its order; ``texts`` (by memory id) are the
    memories' texts when they are not the current ones (``as_of``)."""
    graph = nx.MultiDiGraph()
    for node, kind, ref, label, support in part.nodes:
        if kind == "memory":
            graph.add_node(node, **_memory_node(part.memories[ref], texts))
        elif kind == "concept":
            graph.add_node(node, kind=kind, label=label, support=support)
        else:
            graph.add_node(node, kind=kind, label=label)
    add_edge = graph.add_edge  # one call an edge: add_edges_from costs twice as much
    for source, target, relation, one, many in part.edges:
        ids = many if one is None else [one]
        add_edge(source, target, key=relation, relation=relation, memory_ids=ids)
    return graph


def _memory_node(memory: dict[str, Any], texts: dict[str, str] | None) -> dict[str, Any]:
    text = texts[memory["id"]] if texts is not None else memory["final_text"]
    return {
        "kind": "memory",
        "label": _short(text),
        "text": text,
        "category": memory["category"],
        "npc": memory["npc"],
        "scope": memory["scope"],
        "model": memory["extractor_model"],
        "support": 1,
        "recorded_at": str(memory["recorded_at"]),
        "reviewer": memory["decided_by"],
    }


def _short(text: str, limit: int = 48) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def graph_frames(graph: nx.MultiDiGraph) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(nodes, edges) DataFrames: one row per node with its attributes, one per edge
    with source, target, relation and the supporting memory ids; an attribute a node
    does not have (a persona's text) is ``<NA>``."""
    nodes = pd.DataFrame([{"node": n, **data} for n, data in graph.nodes(data=True)])
    edges = pd.DataFrame(
        [
            {
                "source": u,
                "target": v,
                "relation": data["relation"],
                "memory_ids": list(data["memory_ids"]),
                "support": len(data["memory_ids"]),
            }
            for u, v, data in graph.edges(data=True)
        ],
        columns=["source", "target", "relation", "memory_ids", "support"],
    )
    node_kinds = kinds_of(nodes, model="text", support="int", reviewer="text", text="text")
    return with_missing_as_na(nodes, node_kinds), with_missing_as_na(edges, kinds_of(edges))


def to_graphml(graph: nx.MultiDiGraph, path: Any) -> None:
    """Write GraphML; list attributes (memory ids) become comma-separated text."""
    flat = nx.MultiDiGraph()
    for node, data in graph.nodes(data=True):
        flat.add_node(node, **{k: _scalar(v) for k, v in data.items()})
    for u, v, key, data in graph.edges(keys=True, data=True):
        flat.add_edge(u, v, key=key, **{k: _scalar(val) for k, val in data.items()})
    nx.write_graphml(flat, path)


def _scalar(value: Any) -> Any:
    if isinstance(value, list):
        return ",".join(map(str, value))
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return value
