"""The knowledge graph's nodes and edges, worked out in SQL: the whole graph, or only the
part a drawing shows.

A drawing shows at most a few hundred nodes: the best connected, of the whole graph or
of one concept's neighbourhood. Their degrees, the neighbourhood and the cut are computed
here, set-wise, over temporary tables of this connection (the approved versions, their
concepts and relations, every node and edge); only the drawn nodes and the edges between
them leave the database. So drawing 250 nodes of a store of a million memories reads 250
rows into Python, not a million.

The graph's order is defined here too, the same for the whole graph and for any part of
it: memories oldest first, each followed by its persona and category the first time one
appears, then the concepts by their first memory; edges likewise. A part is therefore
the whole graph's induced subgraph, node for node and edge for edge, in the same order.
Only approved versions take part (``predicates.approved_source``), and concepts are
joined on the memory's id AND current text hash.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ._database import Connection, Store, rows
from .predicates import approved_source

__all__ = ["GraphPart", "graph_part"]

#: The temporary tables (this connection's own; dropped when the part has been read).
_TABLES = ("npc_graph_versions", "npc_graph_mentions", "npc_graph_links", "npc_graph_nodes",
           "npc_graph_edges", "npc_graph_shown", "npc_graph_drawn")  # fmt: skip

_MENTIONS = """
CREATE OR REPLACE TEMP TABLE npc_graph_mentions AS
SELECT v.rank, c.memory_id, c.concept_key, c.concept_label
FROM memory_concepts c JOIN npc_graph_versions v
    ON v.id = c.memory_id AND v.final_hash = c.memory_hash
"""
# Relations join concepts their memory mentions (what ``concepts`` ever stores).
_LINKS = """
CREATE OR REPLACE TEMP TABLE npc_graph_links AS
SELECT DISTINCT v.rank, r.memory_id, r.source_key, r.relation, r.target_key
FROM concept_relations r JOIN npc_graph_versions v
    ON v.id = r.memory_id AND v.final_hash = r.memory_hash
WHERE r.source_key IN (SELECT concept_key FROM npc_graph_mentions)
  AND r.target_key IN (SELECT concept_key FROM npc_graph_mentions)
"""
#: Every node with its place in the graph's order (phase, place, sub, node).
_NODES = """
CREATE OR REPLACE TEMP TABLE npc_graph_nodes AS
SELECT 'memory:' || id AS node, 'memory' AS kind, id AS ref, NULL::VARCHAR AS label,
    1 AS support, 0 AS phase, rank AS place, 0 AS sub
FROM npc_graph_versions
UNION ALL
SELECT 'npc:' || npc, 'persona', npc, npc, NULL, 0, min(rank), 1
FROM npc_graph_versions WHERE npc IS NOT NULL GROUP BY npc
UNION ALL
SELECT 'category:' || category, 'category', category, category, NULL, 0, min(rank), 2
FROM npc_graph_versions GROUP BY category
UNION ALL
SELECT 'concept:' || concept_key, 'concept', concept_key,
    first(concept_label ORDER BY rank, concept_label), count(*), 1, min(rank), 0
FROM npc_graph_mentions GROUP BY concept_key
"""
#: Every edge (one per source, target and relation) with the memory behind it, or for a
#: relation several memories may support, all of them (``memory_ids``; else NULL).
_EDGES = """
CREATE OR REPLACE TEMP TABLE npc_graph_edges AS
SELECT 'npc:' || npc AS source, 'memory:' || id AS target, 'remembers' AS relation,
    id AS memory_id, NULL::VARCHAR[] AS memory_ids, 0 AS phase, rank AS place, 0 AS sub
FROM npc_graph_versions WHERE npc IS NOT NULL
UNION ALL
SELECT 'memory:' || id, 'category:' || category, 'in category', id, NULL, 0, rank, 1
FROM npc_graph_versions
UNION ALL
SELECT DISTINCT 'memory:' || memory_id, 'concept:' || concept_key, 'mentions', memory_id, NULL,
    1, rank, 0
FROM npc_graph_mentions
UNION ALL
SELECT 'concept:' || source_key, 'concept:' || target_key, relation, NULL,
    list(memory_id ORDER BY rank, memory_id), 2, min(rank), 0
FROM npc_graph_links GROUP BY source_key, relation, target_key
"""
#: Degrees within the shown nodes (all of them, or a neighbourhood), best connected first.
_RANKED = """
WITH inside AS (
    SELECT source, target FROM npc_graph_edges
    WHERE source IN (SELECT node FROM {shown}) AND target IN (SELECT node FROM {shown})
), degree AS (
    SELECT node, count(*) AS degree
    FROM (SELECT source AS node FROM inside UNION ALL SELECT target FROM inside)
    GROUP BY node
)
SELECT s.node FROM {shown} s LEFT JOIN degree d USING (node)
ORDER BY coalesce(d.degree, 0) DESC, s.node LIMIT $limit
"""
_ORDER = "ORDER BY phase, place, sub"


@dataclass(frozen=True)
class GraphPart:
    """The nodes and edges of the graph (or of the drawn part of it), in graph order.

    ``nodes``: (node, kind, ref, label, support), where ``ref`` is the memory id, persona,
    category or concept key. ``memories``: what the memory nodes show (text, persona,
    scope, ...), by id. ``edges``: (source, target, relation, the one memory behind it or
    None for a relation, the memories behind a relation or None). ``total``: the
    nodes there were before the cut (the whole graph's, or the neighbourhood's).
    ``missing_focus``: when the focus concept is not in the graph, some concept labels to
    suggest instead (else None).
    """

    nodes: list[tuple[str, str, str, str | None, int]]
    memories: dict[str, dict[str, Any]]
    edges: list[tuple[str, str, str, str | None, list[str] | None]]
    total: int
    missing_focus: tuple[str, ...] | None = None


def graph_part(
    store: Store,
    versions: pd.DataFrame | None,
    *,
    npc: str | None = None,
    category: str | None = None,
    focus: str | None = None,
    depth: int = 2,
    limit: int | None = None,
) -> GraphPart:
    """The graph of the approved memories now (``versions`` None, optionally one
    persona's or category's) or of these memory versions (id, final_hash, npc, category,
    recorded_at), then only ``focus``'s neighbourhood (a concept key) within ``depth``
    steps, then only the ``limit`` best-connected nodes of that (ties by node key)."""
    with store.analysis() as con, _temporary(con):
        _versions(con, versions, npc, category)
        for statement in (_MENTIONS, _LINKS, _NODES, _EDGES):
            con.execute(statement)
        shown = "npc_graph_nodes"  # everything, unless a focus or a cut says less
        if focus is not None:
            if not _neighbourhood(con, f"concept:{focus}", depth):
                return GraphPart([], {}, [], 0, _concept_labels(con))
            shown = "npc_graph_shown"
        total = _count(con, shown)
        if limit is not None and total > limit:
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE npc_graph_drawn AS {_RANKED.format(shown=shown)}",
                {"limit": limit},
            )
            shown = "npc_graph_drawn"
        return GraphPart(*_drawn(con, shown), total=total)


def _versions(
    con: Connection, versions: pd.DataFrame | None, npc: str | None, category: str | None
) -> None:
    """``npc_graph_versions``: the memory versions in the graph, ranked oldest first."""
    select = (
        "CREATE OR REPLACE TEMP TABLE npc_graph_versions AS SELECT id, final_hash, npc, "
        "category, row_number() OVER (ORDER BY recorded_at, id) AS rank"
    )
    if versions is not None:
        given = versions[["id", "final_hash", "npc", "category", "recorded_at"]]
        con.register("npc_graph_given", given)
        try:
            con.execute(f"{select} FROM npc_graph_given")
        finally:
            con.unregister("npc_graph_given")
        return
    source, params = approved_source()
    clauses = ["TRUE"]
    for column, value in (("npc", npc), ("category", category)):
        if value is not None:
            clauses.append(f"{column} = ${column}")
            params[column] = value
    con.execute(f"{select} FROM {source} WHERE {' AND '.join(clauses)}", params)


def _neighbourhood(con: Connection, start: str, depth: int) -> bool:
    """``npc_graph_shown``: the nodes within ``depth`` steps of ``start`` (edges taken
    both ways); False if ``start`` is not in the graph."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE npc_graph_shown AS "
        "SELECT node, 0 AS dist FROM npc_graph_nodes WHERE node = $start",
        {"start": start},
    )
    if not _count(con, "npc_graph_shown"):
        return False
    for step in range(1, depth + 1):
        added = con.execute(
            "INSERT INTO npc_graph_shown SELECT DISTINCT near, $step FROM ("
            "  SELECT e.target AS near FROM npc_graph_edges e"
            "  JOIN npc_graph_shown s ON e.source = s.node AND s.dist = $step - 1"
            "  UNION ALL SELECT e.source FROM npc_graph_edges e"
            "  JOIN npc_graph_shown s ON e.target = s.node AND s.dist = $step - 1"
            ") WHERE near NOT IN (SELECT node FROM npc_graph_shown)",
            {"step": step},
        ).fetchone()
        if not added or not added[0]:
            break
    return True


def _drawn(con: Connection, shown: str) -> tuple[list, dict[str, dict[str, Any]], list]:
    """The nodes in ``shown`` (a table of node keys; ``npc_graph_nodes``: all of them),
    what their memories show, and the edges between them, in graph order."""
    whole = shown == "npc_graph_nodes"
    inside = "" if whole else f"WHERE node IN (SELECT node FROM {shown})"
    nodes = con.execute(
        f"SELECT node, kind, ref, label, support FROM npc_graph_nodes {inside} {_ORDER}, node"
    ).fetchall()
    memories = rows(
        con,
        "SELECT id, final_text, category, npc, scope, extractor_model, recorded_at, decided_by "
        "FROM memories WHERE id IN (SELECT ref FROM npc_graph_nodes WHERE kind = 'memory' "
        + ("" if whole else f"AND node IN (SELECT node FROM {shown})")
        + ")",
    )
    between = (
        ""
        if whole
        else f"WHERE source IN (SELECT node FROM {shown}) AND target IN (SELECT node FROM {shown})"
    )
    edges = con.execute(
        "SELECT source, target, relation, memory_id, memory_ids FROM npc_graph_edges "
        f"{between} {_ORDER}, source, relation, target"
    ).fetchall()
    return nodes, {row["id"]: row for row in memories}, edges


def _count(con: Connection, table: str) -> int:
    found = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(found[0]) if found else 0


def _concept_labels(con: Connection, count: int = 10) -> tuple[str, ...]:
    found = con.execute(
        "SELECT label FROM npc_graph_nodes WHERE kind = 'concept' ORDER BY label LIMIT $n",
        {"n": count},
    ).fetchall()
    return tuple(label for (label,) in found)


@contextmanager
def _temporary(con: Connection) -> Iterator[None]:
    """Drop this module's temporary tables when done (they live as long as the
    connection otherwise)."""
    try:
        yield
    finally:
        for table in _TABLES:
            con.execute(f"DROP TABLE IF EXISTS {table}")
