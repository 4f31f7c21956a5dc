"""A drawn graph is cut in the store: it equals the whole graph cut in Python (by the
plain reference below), node for node and edge for edge, yet only the drawn memories are
read."""

from __future__ import annotations

import uuid
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npc_nb
from npc_nb.graph import concepts
from npc_nb.store.graph import graph_nodes
from tests.helpers import propose

NAMES = ["DuckDB", "Zenodo", "Vienna", "Graz", "Ibis", "Postgres", "Garmin", "Neusiedl"]
NOUNS = ["ringing data", "survey", "archive", "backups", "methods section", "loggers"]
PERSONAS = ["analyst", "writer", None]  # None: a project-wide memory

memory_plans = st.lists(
    st.tuples(
        st.sampled_from(NAMES),
        st.sampled_from(NAMES),
        st.sampled_from(NOUNS),
        st.sampled_from(PERSONAS),
        st.sampled_from(["fact", "decision", "constraint"]),
        st.sampled_from(["approve", "approve", "edit", "reject", "pending"]),
    ),
    min_size=1,
    max_size=14,
)


def cut(graph: nx.MultiDiGraph, max_nodes: int) -> nx.MultiDiGraph:
    """The reference cut: ``graph``'s ``max_nodes`` best-connected nodes (ties by key)."""
    if graph.number_of_nodes() <= max_nodes:
        return graph
    ranked = sorted(graph.nodes, key=lambda n: (-graph.degree(n), n))
    return graph.subgraph(ranked[:max_nodes]).copy()


def neighbourhood(graph: nx.MultiDiGraph, focus: str, depth: int) -> nx.MultiDiGraph:
    """The reference neighbourhood: the part of ``graph`` within ``depth`` steps of the
    concept ``focus``, edges taken both ways."""
    node = f"concept:{concepts.concept_key(focus)}"
    near = nx.single_source_shortest_path_length(graph.to_undirected(as_view=True), node, depth)
    return graph.subgraph(near).copy()


def as_rows(graph: nx.MultiDiGraph) -> tuple[dict, list]:
    """Nodes and edges with their data (networkx's cut leaves them in no fixed order)."""
    nodes = {node: dict(data) for node, data in graph.nodes(data=True)}
    edges = sorted(
        (u, v, k, data["memory_ids"]) for u, v, k, data in graph.edges(keys=True, data=True)
    )
    return nodes, edges


def in_whole_graph_order(part: nx.MultiDiGraph, whole: nx.MultiDiGraph) -> bool:
    """A drawn part keeps the whole graph's order (so the same graph draws the same)."""
    return list(part.nodes) == [node for node in whole.nodes if node in part]


def build_store(folder: Path, plan: list[tuple]) -> npc_nb.Project:
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    nb = npc_nb.open(folder, matcher=None)
    for n, (first, second, noun, npc, category, decision) in enumerate(plan):
        text = f"{first} keeps the {noun} {n} for {second}"
        scope = {"npc": npc} if npc else {"scope": "project"}
        memory = propose(nb, text, category=category, **scope)
        if decision == "approve":
            nb.approve(memory)
        elif decision == "edit":
            nb.edit(memory, f"{second} keeps the {noun} {n} in {first}")
        elif decision == "reject":
            nb.reject(memory)
    return nb


@settings(max_examples=50)
@given(
    plan=memory_plans,
    limit=st.integers(min_value=1, max_value=30),
    focus=st.none() | st.sampled_from([*NAMES, "survey"]),
    depth=st.integers(min_value=0, max_value=3),
)
def test_the_drawn_part_is_the_whole_graph_cut(
    tmp_path: Path, plan: list[tuple], limit: int, focus: str | None, depth: int
) -> None:
    nb = build_store(tmp_path / uuid.uuid4().hex, plan)
    try:
        whole = nb.graph.networkx()
        concepts = {d["label"].lower() for _, d in whole.nodes(data=True) if d["kind"] == "concept"}
        if focus is not None and focus.lower() not in concepts:
            with pytest.raises(npc_nb.InvalidValueError, match="No concept"):
                nb.graph.show(focus=focus, depth=depth, max_nodes=limit)
            return
        expected = whole if focus is None else neighbourhood(whole, focus, depth)
        view = nb.graph.show(focus=focus, depth=depth, max_nodes=limit)
        assert as_rows(view.graph) == as_rows(cut(expected, limit))
        assert view.total_nodes == expected.number_of_nodes()
        assert in_whole_graph_order(view.graph, whole)
    finally:
        nb.close()


def test_the_graph_as_it_stood_is_cut_the_same_way(nb: npc_nb.Project) -> None:
    for n in range(6):
        nb.approve(propose(nb, f"DuckDB keeps the survey {n} for Zenodo"))
    moment = nb.decisions()["occurred_at"].max().to_pydatetime()
    nb.approve(propose(nb, "Graz keeps the archive for Ibis"))
    whole = nb.graph.networkx(as_of=moment)
    assert "concept:graz" not in whole
    view = nb.graph.show(as_of=moment, max_nodes=5)
    assert as_rows(view.graph) == as_rows(cut(whole, 5))
    assert in_whole_graph_order(view.graph, whole)


def test_drawing_reads_only_the_drawn_memories(
    nb: npc_nb.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What leaves the store is the drawn part: a store of 120 approved memories drawn
    with 12 nodes reads at most 12 memories (it used to read all of them, then cut)."""
    nb.configure(matcher=None)
    for n in range(120):
        nb.approve(propose(nb, f"Station {n} at Neusiedl logs data with the Garmin GX{n}"))
    read: list[graph_nodes.GraphPart] = []
    real = graph_nodes.graph_part

    def counted(*args: object, **kwargs: object) -> graph_nodes.GraphPart:
        part = real(*args, **kwargs)  # type: ignore[arg-type]
        read.append(part)
        return part

    monkeypatch.setattr(graph_nodes, "graph_part", counted)
    view = nb.graph.show(max_nodes=12)
    (part,) = read
    assert len(part.nodes) == 12 and len(part.memories) <= 12
    assert part.total == view.total_nodes > 120
    assert view.graph.number_of_nodes() == 12
