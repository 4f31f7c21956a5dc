"""The knowledge graph of approved memories, as a networkx MultiDiGraph.

Nodes are keyed by id: ``memory:<id>``, ``concept:<normalised name>``, ``npc:<name>``,
``category:<name>``; labels are attributes. Edges: a persona ``remembers`` a memory, a
memory is ``in category`` and ``mentions`` its concepts, and concepts are joined by the
relations the model read in the memories. Every edge carries ``memory_ids``: the
memories that support it. The graph is derived on each call from the approved memories
(the one approval predicate) and the concepts stored for their current text, so
approving adds a memory's part and rejecting, superseding or undoing removes whatever
only it supported. Concepts are extracted once per memory version and stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import networkx as nx
import pandas as pd

from .._text import content_hash
from .._time import utc_now
from ..errors import ModelCallError, NpcError
from ..models import gateway
from ..store import graph_sql
from . import concepts

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["build_graph", "ensure_concepts", "graph_frames", "neighbourhood", "to_graphml"]

BATCH = 20


def ensure_concepts(store: Store, versions: pd.DataFrame, model: str) -> int:
    """Extract and store concepts for memory versions that have none yet; return how many
    versions were processed. A failed batch is recorded with its error, not retried."""
    missing = graph_sql.missing_versions(store, versions)
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
    store: Store, npc: str | None, category: str | None, as_of: datetime | None
) -> pd.DataFrame:
    rows = graph_sql.approved_rows(store, npc, category, as_of)
    if as_of is not None and not rows.empty:  # that moment's text, so that moment's hash
        rows["final_hash"] = rows["final_text"].map(content_hash)
    return rows


def build_graph(
    memories: pd.DataFrame, found: pd.DataFrame, links: pd.DataFrame
) -> nx.MultiDiGraph:
    """The graph of these memories, their concepts and relations."""
    graph = nx.MultiDiGraph()
    # Column lists, not itertuples: a row tuple converts every timestamp column to
    # Timestamp objects, which was most of the time at 100k memories.
    columns = ("id", "final_text", "category", "npc", "scope", "extractor_model", "decided_by")
    listed = [memories[column].tolist() for column in columns]
    recorded = _timestamp_text(memories["recorded_at"])
    for (memory_id, text, category, npc, scope, model, reviewer), recorded_at in zip(
        zip(*listed, strict=True), recorded, strict=True
    ):
        node = f"memory:{memory_id}"
        graph.add_node(
            node,
            kind="memory",
            label=_short(text),
            text=text,
            category=category,
            npc=npc,
            scope=scope,
            model=model,
            support=1,
            recorded_at=recorded_at,
            reviewer=reviewer,
        )
        # A memory's own edges are new: no supporting memory to add to an existing one.
        if isinstance(npc, str):
            graph.add_node(f"npc:{npc}", kind="persona", label=npc)
            graph.add_edge(
                f"npc:{npc}", node, key="remembers", relation="remembers", memory_ids=[memory_id]
            )
        graph.add_node(f"category:{category}", kind="category", label=category)
        graph.add_edge(
            node,
            f"category:{category}",
            key="in category",
            relation="in category",
            memory_ids=[memory_id],
        )
    for row in found.itertuples():
        concept = f"concept:{row.concept_key}"
        if concept not in graph:
            graph.add_node(concept, kind="concept", label=row.concept_label, support=0)
        graph.nodes[concept]["support"] += 1
        _link(graph, f"memory:{row.memory_id}", concept, "mentions", row.memory_id)
    for row in links.itertuples():
        _link(
            graph,
            f"concept:{row.source_key}",
            f"concept:{row.target_key}",
            row.relation,
            row.memory_id,
        )
    return graph


def _link(graph: nx.MultiDiGraph, source: str, target: str, relation: str, memory_id: str) -> None:
    """Add an edge, or record one more supporting memory on the existing one."""
    if graph.has_edge(source, target, key=relation):
        support = graph.edges[source, target, relation]["memory_ids"]
        if memory_id not in support:
            support.append(memory_id)
    else:
        graph.add_edge(source, target, key=relation, relation=relation, memory_ids=[memory_id])


def _timestamp_text(times: pd.Series) -> list[str]:
    """``str()`` of every timestamp, formatted column-wise where that gives the same text
    (naive times: whole seconds print without a fraction, as ``str(Timestamp)`` does)."""
    if not pd.api.types.is_datetime64_dtype(times) or getattr(times.dt, "tz", None) is not None:
        return [str(t) for t in times]
    text = times.astype(str)
    whole = times.dt.microsecond.eq(0) & times.dt.nanosecond.eq(0)
    return text.where(~whole, text.str.slice(0, 19)).tolist()


def _short(text: str, limit: int = 48) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def neighbourhood(graph: nx.MultiDiGraph, focus: str, depth: int) -> nx.MultiDiGraph:
    """The part of the graph within ``depth`` steps of the concept named ``focus``."""
    node = f"concept:{concepts.concept_key(focus)}"
    if node not in graph:
        known = sorted(d["label"] for _, d in graph.nodes(data=True) if d["kind"] == "concept")
        hint = ", ".join(known[:10]) or "none yet"
        raise NpcError(f"No concept {focus!r} in the graph. Some concepts: {hint}.")
    near = nx.single_source_shortest_path_length(graph.to_undirected(as_view=True), node, depth)
    return graph.subgraph(near).copy()


def graph_frames(graph: nx.MultiDiGraph) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(nodes, edges) DataFrames: one row per node with its attributes, one per edge
    with source, target, relation and the supporting memory ids."""
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
    return nodes, edges


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
