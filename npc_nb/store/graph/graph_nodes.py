"""The knowledge graph's nodes and edges, worked out in SQL: the whole graph, or only the
part a drawing shows.

A drawing shows at most a few hundred nodes: the best connected, of the whole graph or
of one concept's neighbourhood. Degrees, the neighbourhood and the cut are computed here,
set-wise, over temporary tables of this connection (the approved versions, their
concepts, their relations); node keys and edges are made only for the drawn nodes, and
only those leave the database. Drawing 250 nodes of a store of a million memories reads
250 rows into Python, not a million, and never builds a row per edge of the whole graph.

The graph's order is defined here, the same for the whole graph and any part of it:
memories oldest first, each followed by its persona and its category the first time one
appears, then the concepts by their first memory; edges likewise. A part is therefore
the whole graph's induced subgraph, node for node and edge for edge, in the same order.
Only approved versions take part (``predicates.approved_source``), and concepts are
joined on the memory's id AND current text hash.

A node's key is its kind's prefix and its ``ref`` (``memory:<id>``, ``npc:<name>``,
``category:<name>``, ``concept:<key>``). Since no prefix begins another, ordering keys
is ordering (prefix, ref): the cut's tie-break needs no key built for every node.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..contract import Connection, Store, rows
from .graph_sql import graph_source

__all__ = ["GraphPart", "graph_part"]

#: The order of the kinds' key prefixes (category:, concept:, memory:, npc:), and a key.
_KIND_ORDER = (
    "CASE kind WHEN 'category' THEN 0 WHEN 'concept' THEN 1 WHEN 'memory' THEN 2 ELSE 3 END"
)
_NODE_KEY = (
    "CASE kind WHEN 'category' THEN 'category:' WHEN 'concept' THEN 'concept:' "
    "WHEN 'memory' THEN 'memory:' ELSE 'npc:' END || ref"
)
#: This module's temporary tables (dropped when the part has been read).
_TABLES = ("npc_graph_versions", "npc_graph_mentions", "npc_graph_concepts", "npc_graph_links",
           "npc_graph_relations", "npc_graph_shown", "npc_graph_degrees",
           "npc_graph_drawn")  # fmt: skip

#: ``place``: when a memory was recorded, its place in the graph's order (ties: by id).
_VERSIONS = (
    "CREATE OR REPLACE TEMP TABLE npc_graph_versions AS SELECT id, final_hash, npc, "
    "category, epoch_us(recorded_at) AS place"
)
#: One row per memory and concept it mentions: ``record_concepts`` stores a memory
#: version's concepts once each (``concepts.read_concepts`` keys them by name).
_MENTIONS = """
CREATE OR REPLACE TEMP TABLE npc_graph_mentions AS
SELECT c.memory_id, c.concept_key, c.concept_label, v.place
FROM memory_concepts c JOIN npc_graph_versions v
    ON v.id = c.memory_id AND v.final_hash = c.memory_hash
"""
#: Every concept: its label (as its first memory wrote it), support, place in the order.
_CONCEPTS = """
CREATE OR REPLACE TEMP TABLE npc_graph_concepts AS
SELECT concept_key AS key, first(concept_label ORDER BY place, memory_id) AS label,
    count(*) AS support, min(place) AS place
FROM npc_graph_mentions GROUP BY concept_key
"""
#: One row per memory and relation it states, between concepts it mentions (all that
#: ``concepts`` ever stores); and each relation once (an edge), with where it first appears.
_LINKS = """
CREATE OR REPLACE TEMP TABLE npc_graph_links AS
SELECT r.memory_id, r.source_key, r.relation, r.target_key, v.place
FROM concept_relations r
JOIN npc_graph_versions v ON v.id = r.memory_id AND v.final_hash = r.memory_hash
JOIN npc_graph_concepts s ON s.key = r.source_key
JOIN npc_graph_concepts t ON t.key = r.target_key
GROUP BY ALL
"""
_RELATIONS = """
CREATE OR REPLACE TEMP TABLE npc_graph_relations AS
SELECT source_key, relation, target_key FROM npc_graph_links GROUP BY ALL
"""
#: Every shown node's degree among the shown nodes ({...}: membership tests, ``_Shown``).
_DEGREES = """
CREATE OR REPLACE TEMP TABLE npc_graph_degrees AS
SELECT 'memory' AS kind, v.id AS ref,
    (v.npc IS NOT NULL AND {persona_v})::INT + ({category_v})::INT + coalesce(c.n, 0) AS degree
FROM npc_graph_versions v LEFT JOIN (
    SELECT memory_id, count(*) AS n FROM npc_graph_mentions WHERE {concept_m} GROUP BY memory_id
) c ON c.memory_id = v.id
WHERE {memory_v}
UNION ALL
SELECT 'persona', npc, count(*) FILTER (WHERE {memory_v}) FROM npc_graph_versions v
WHERE npc IS NOT NULL AND {persona_v} GROUP BY npc
UNION ALL
SELECT 'category', category, count(*) FILTER (WHERE {memory_v}) FROM npc_graph_versions v
WHERE {category_v} GROUP BY category
UNION ALL
SELECT 'concept', k.key, coalesce(m.n, 0) + coalesce(o.n, 0) + coalesce(i.n, 0)
FROM npc_graph_concepts k
LEFT JOIN (SELECT concept_key AS key, count(*) AS n FROM npc_graph_mentions
           WHERE {memory_m} GROUP BY key) m USING (key)
LEFT JOIN (SELECT source_key AS key, count(*) AS n FROM npc_graph_relations
           WHERE {target_l} GROUP BY key) o USING (key)
LEFT JOIN (SELECT target_key AS key, count(*) AS n FROM npc_graph_relations
           WHERE {source_l} GROUP BY key) i USING (key)
WHERE {concept_k}
"""


#: (node, kind, ref, label, support) and (source, target, relation, memory, memories).
Node = tuple[str, str, str, str | None, int | None]
Edge = tuple[str, str, str, str | None, list[str] | None]


@dataclass(frozen=True)
class GraphPart:
    """The nodes and edges of the graph (or of the drawn part of it), in graph order.

    ``nodes``: (node, kind, ref, label, support), where ``ref`` is the memory id, persona,
    category or concept key. ``memories``: what the memory nodes show (text, persona,
    scope, ...), by id. ``edges``: (source, target, relation, the one memory behind it or
    None for a relation, the memories behind a relation or None). ``total``: the nodes
    there were before the cut (the whole graph's, or the neighbourhood's).
    ``missing_focus``: when the focus concept is not in the graph, some concept labels
    to suggest instead (else None).
    """

    nodes: list[Node]
    memories: dict[str, dict[str, Any]]
    edges: list[Edge]
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
        for statement in (_MENTIONS, _CONCEPTS, _LINKS, _RELATIONS):
            con.execute(statement)
        shown = _Shown(None)
        if focus is not None:
            if not _neighbourhood(con, focus, depth):
                return GraphPart([], {}, [], 0, _concept_labels(con))
            shown = _Shown("npc_graph_shown")
        con.execute(_DEGREES.format(**shown.tests()))
        total = _count(con, "npc_graph_degrees")
        drawn = shown
        if limit is not None and total > limit:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE npc_graph_drawn AS SELECT kind, ref "
                f"FROM npc_graph_degrees ORDER BY degree DESC, {_KIND_ORDER}, ref LIMIT $limit",
                {"limit": limit},
            )
            drawn = _Shown("npc_graph_drawn")
        return GraphPart(_nodes(con, drawn), _memories(con, drawn), _edges(con, drawn), total)


@dataclass(frozen=True)
class _Shown:
    """Which nodes take part: all (``table`` None) or those listed in ``table`` (kind,
    ref). ``tests`` gives the SQL membership tests the queries are written with."""

    table: str | None

    def has(self, kind: str, column: str) -> str:
        if self.table is None:
            return "TRUE"
        return f"{column} IN (SELECT ref FROM {self.table} WHERE kind = '{kind}')"

    def tests(self) -> dict[str, str]:
        return {
            "memory_v": self.has("memory", "v.id"),
            "persona_v": self.has("persona", "v.npc"),
            "category_v": self.has("category", "v.category"),
            "memory_m": self.has("memory", "memory_id"),
            "concept_m": self.has("concept", "concept_key"),
            "concept_k": self.has("concept", "k.key"),
            "source_l": self.has("concept", "source_key"),
            "target_l": self.has("concept", "target_key"),
        }


def _versions(
    con: Connection, versions: pd.DataFrame | None, npc: str | None, category: str | None
) -> None:
    """``npc_graph_versions``: the memory versions in the graph."""
    if versions is not None:
        given = versions[["id", "final_hash", "npc", "category", "recorded_at"]]
        con.register("npc_graph_given", given)
        try:
            con.execute(f"{_VERSIONS} FROM npc_graph_given")
        finally:
            con.unregister("npc_graph_given")
        return
    source, params = graph_source(npc, category)
    con.execute(f"{_VERSIONS} FROM {source}", params)


#: The nodes one step from the nodes found at step ``$step - 1`` (edges taken both ways).
_NEXT = """
WITH f AS (SELECT kind, ref FROM npc_graph_shown WHERE dist = $step - 1)
SELECT 'memory' AS kind, memory_id AS ref FROM npc_graph_mentions
    WHERE concept_key IN (SELECT ref FROM f WHERE kind = 'concept')
UNION SELECT 'concept', target_key FROM npc_graph_relations
    WHERE source_key IN (SELECT ref FROM f WHERE kind = 'concept')
UNION SELECT 'concept', source_key FROM npc_graph_relations
    WHERE target_key IN (SELECT ref FROM f WHERE kind = 'concept')
UNION SELECT 'concept', concept_key FROM npc_graph_mentions
    WHERE memory_id IN (SELECT ref FROM f WHERE kind = 'memory')
UNION SELECT 'persona', npc FROM npc_graph_versions
    WHERE npc IS NOT NULL AND id IN (SELECT ref FROM f WHERE kind = 'memory')
UNION SELECT 'category', category FROM npc_graph_versions
    WHERE id IN (SELECT ref FROM f WHERE kind = 'memory')
UNION SELECT 'memory', id FROM npc_graph_versions
    WHERE npc IN (SELECT ref FROM f WHERE kind = 'persona')
UNION SELECT 'memory', id FROM npc_graph_versions
    WHERE category IN (SELECT ref FROM f WHERE kind = 'category')
"""


def _neighbourhood(con: Connection, focus: str, depth: int) -> bool:
    """``npc_graph_shown``: the nodes within ``depth`` steps of the concept ``focus``;
    False if it is not in the graph."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE npc_graph_shown AS SELECT 'concept' AS kind, "
        "key AS ref, 0 AS dist FROM npc_graph_concepts WHERE key = $focus",
        {"focus": focus},
    )
    if not _count(con, "npc_graph_shown"):
        return False
    for step in range(1, depth + 1):
        added = con.execute(
            f"INSERT INTO npc_graph_shown SELECT kind, ref, $step FROM ({_NEXT}) n "
            "WHERE NOT EXISTS (SELECT 1 FROM npc_graph_shown s "
            "WHERE s.kind = n.kind AND s.ref = n.ref)",
            {"step": step},
        ).fetchone()
        if not added or not added[0]:
            break
    return True


def _nodes(con: Connection, drawn: _Shown) -> list[Node]:
    """The drawn nodes in graph order, with their labels and (concepts) support."""
    t = drawn.tests()
    return con.execute(
        f"""
        SELECT {_NODE_KEY} AS node, kind, ref, label, support FROM (
            SELECT 'memory' AS kind, id AS ref, NULL AS label, NULL AS support,
                0 AS phase, place, 0 AS sub
            FROM npc_graph_versions v WHERE {t["memory_v"]}
            UNION ALL SELECT 'persona', npc, npc, NULL, 0, min(place), 1
            FROM npc_graph_versions v WHERE npc IS NOT NULL AND {t["persona_v"]} GROUP BY npc
            UNION ALL SELECT 'category', category, category, NULL, 0, min(place), 2
            FROM npc_graph_versions v WHERE {t["category_v"]} GROUP BY category
            UNION ALL SELECT 'concept', key, label, support, 1, place, 0
            FROM npc_graph_concepts k WHERE {t["concept_k"]}
        ) ORDER BY phase, place, sub, {_KIND_ORDER}, ref
        """
    ).fetchall()


def _edges(con: Connection, drawn: _Shown) -> list[Edge]:
    """The edges between drawn nodes in graph order, with the memories behind them."""
    t = drawn.tests()
    return con.execute(
        f"""
        SELECT source, target, relation, memory_id, memory_ids FROM (
            SELECT 'npc:' || npc AS source, 'memory:' || id AS target, 'remembers' AS relation,
                id AS memory_id, NULL::VARCHAR[] AS memory_ids, 0 AS phase, place, 0 AS sub
            FROM npc_graph_versions v
            WHERE npc IS NOT NULL AND {t["memory_v"]} AND {t["persona_v"]}
            UNION ALL SELECT 'memory:' || id, 'category:' || category, 'in category', id, NULL,
                0, place, 1
            FROM npc_graph_versions v WHERE {t["memory_v"]} AND {t["category_v"]}
            UNION ALL SELECT 'memory:' || memory_id, 'concept:' || concept_key, 'mentions',
                memory_id, NULL, 1, place, 0
            FROM npc_graph_mentions WHERE {t["memory_m"]} AND {t["concept_m"]}
            UNION ALL SELECT 'concept:' || source_key, 'concept:' || target_key, relation, NULL,
                list(memory_id ORDER BY memory_id), 2, min(place), 0
            FROM npc_graph_links WHERE {t["source_l"]} AND {t["target_l"]}
            GROUP BY source_key, relation, target_key
        ) ORDER BY phase, place, sub, source, target, relation
        """
    ).fetchall()


def _memories(con: Connection, drawn: _Shown) -> dict[str, dict[str, Any]]:
    """What the drawn memory nodes show, read in the same hold of the store as the rest."""
    found = rows(
        con,
        "SELECT id, final_text, category, npc, scope, extractor_model, recorded_at, decided_by "
        "FROM memories WHERE id IN (SELECT id FROM npc_graph_versions v "
        f"WHERE {drawn.has('memory', 'v.id')})",
    )
    return {row["id"]: row for row in found}


def _count(con: Connection, table: str) -> int:
    found = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(found[0]) if found else 0


def _concept_labels(con: Connection, count: int = 10) -> tuple[str, ...]:
    """The first ``count`` concept labels of the graph, sorted."""
    found = con.execute(
        "SELECT label FROM npc_graph_concepts ORDER BY label LIMIT $n", {"n": count}
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
