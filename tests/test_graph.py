"""The knowledge graph: approved memories only, traceable edges, offline drawing."""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC
from pathlib import Path

import nbformat
import networkx as nx
import pytest
from nbconvert import HTMLExporter

import npc_nb
from npc_nb.graph.view import MIME_TYPE
from tests import fake_models
from tests.helpers import propose


def concept_nodes(graph: nx.MultiDiGraph) -> set[str]:
    return {n for n, d in graph.nodes(data=True) if d["kind"] == "concept"}


def memory_nodes(graph: nx.MultiDiGraph) -> set[str]:
    return {n.removeprefix("memory:") for n, d in graph.nodes(data=True) if d["kind"] == "memory"}


def test_only_approved_memories_contribute_even_when_they_share_concepts(
    nb: npc_nb.Project,
) -> None:
    approved = propose(nb, "We store the survey in DuckDB")
    pending = propose(nb, "The Vienna team also uses DuckDB")
    rejected = propose(nb, "DuckDB replaced Postgres at Oxford")
    superseded = propose(nb, "DuckDB runs on the Graz server")
    nb.approve(approved)
    nb.reject(rejected)
    nb.approve(superseded)
    nb.supersede(superseded, "We store the backups in Zurich")
    graph = nb.graph.networkx()
    assert pending not in memory_nodes(graph) and rejected not in memory_nodes(graph)
    assert superseded not in memory_nodes(graph)
    assert concept_nodes(graph) == {
        "concept:duckdb",
        "concept:survey",
        "concept:backups",
        "concept:zurich",
    }
    assert not {"concept:vienna", "concept:oxford", "concept:postgres", "concept:graz"} & set(graph)
    duckdb_support = {
        m for _, _, d in graph.in_edges("concept:duckdb", data=True) for m in d["memory_ids"]
    }
    assert duckdb_support == {approved}


def test_concept_names_are_one_node_whatever_their_case(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "We decided to use DuckDB for storage"))
    nb.approve(propose(nb, "The paper compares results with duckdb", npc="writer"))
    graph = nb.graph.networkx()
    assert "concept:duckdb" in graph
    assert graph.nodes["concept:duckdb"]["support"] == 2


def test_every_edge_carries_the_memories_that_support_it(nb: npc_nb.Project) -> None:
    first = propose(nb, "We use DuckDB for the ringing database")
    second = propose(nb, "The ringing database is kept in DuckDB", npc="writer")
    nb.approve(first)
    nb.approve(second)
    graph = nb.graph.networkx()
    for _, _, data in graph.edges(data=True):
        assert data["memory_ids"] and set(data["memory_ids"]) <= {first, second}
    pair = ("concept:duckdb", "concept:ringing database")
    between = [d for u, v, d in graph.edges(data=True) if {u, v} == set(pair)]
    assert {m for d in between for m in d["memory_ids"]} == {first, second}
    _, edges = nb.graph.frames()
    assert set(edges.columns) >= {"source", "target", "relation", "memory_ids", "support"}
    assert edges["support"].min() >= 1


def test_undoing_an_approval_removes_exactly_what_only_it_supported(nb: npc_nb.Project) -> None:
    shared = propose(nb, "We use DuckDB for the ringing database")
    nb.approve(shared)
    before = nb.graph.networkx()
    only = propose(nb, "DuckDB exports go to Zenodo", npc="writer")
    nb.approve(only)
    assert "concept:zenodo" in nb.graph.networkx()
    nb.undo()
    after = nb.graph.networkx()
    assert set(after.nodes) == set(before.nodes)
    assert {(u, v, k) for u, v, k in after.edges(keys=True)} == {
        (u, v, k) for u, v, k in before.edges(keys=True)
    }
    assert after.nodes["concept:duckdb"]["support"] == 1


def test_an_edit_gets_concepts_for_its_new_text(nb: npc_nb.Project) -> None:
    memory = propose(nb, "We use Postgres for the archive")
    nb.edit(memory, "We use DuckDB for the archive")
    graph = nb.graph.networkx()
    assert "concept:duckdb" in graph and "concept:postgres" not in graph


def test_the_graph_as_it_stood(nb: npc_nb.Project) -> None:
    memory = propose(nb, "We use Postgres for the archive")
    nb.approve(memory)
    nb.supersede(memory, "We use DuckDB for the archive")
    events = nb.decisions(memory)
    (approved_at,) = events.loc[events["action"] == "approve", "occurred_at"].tolist()
    then = approved_at.to_pydatetime().replace(tzinfo=UTC)  # as the audit log recorded it
    assert "concept:postgres" in nb.graph.networkx(as_of=then)
    assert "concept:duckdb" not in nb.graph.networkx(as_of=then)
    assert "concept:postgres" not in nb.graph.networkx()


def test_filters_by_persona_and_category(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "We use DuckDB", category="decision"))
    nb.approve(propose(nb, "Deadline for Ibis is Friday", npc="writer", category="commitment"))
    assert "concept:ibis" not in nb.graph.networkx(npc="analyst")
    assert "concept:duckdb" not in nb.graph.networkx(category="commitment")


def test_drawing_is_offline_and_says_what_it_left_out(nb: npc_nb.Project) -> None:
    nb.configure(matcher=None)  # not about matching: each numbered station is its own
    for n in range(12):
        nb.approve(propose(nb, f"Station {n} uses the Garmin logger model GX{n}"))
    view = nb.graph.show(max_nodes=10)
    assert view.graph.number_of_nodes() == 10 and "Showing 10 of" in view.note
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {MIME_TYPE, "image/png", "text/plain"}
    assert len(bundle[MIME_TYPE]["nodes"]) == 10 and "Showing 10 of" in bundle[MIME_TYPE]["summary"]
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert "memories" in bundle["text/plain"]
    # The standalone page, for saving to a file, carries its drawing library inline.
    page = view.page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?https?://""", page, re.IGNORECASE)
    assert "url(http" not in page and "bootstrap" not in page.lower()
    assert "vis-network" in page or "vis.Network" in page


def test_hostile_memory_text_cannot_script_the_page(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "Notes from </script><script>alert(1)</script> Vienna"))
    assert "<script>alert(1)" not in nb.graph.show().page


def test_focus_and_depth(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "We use DuckDB for the ringing database"))
    nb.approve(propose(nb, "Ibis wants the methods section", npc="writer"))
    near = nb.graph.show(focus="duckdb", depth=1).graph
    assert "concept:duckdb" in near and "concept:ibis" not in near
    with pytest.raises(npc_nb.InvalidValueError, match="No concept 'Zenodo'"):
        nb.graph.show(focus="Zenodo")


def test_a_drawing_of_no_nodes_or_negative_steps_is_refused_clearly(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "We use DuckDB for the ringing database"))
    with pytest.raises(npc_nb.InvalidValueError, match="max_nodes takes .* at least 1"):
        nb.graph.show(max_nodes=-3)
    with pytest.raises(npc_nb.InvalidValueError, match="depth takes 0 or more"):
        nb.graph.show(focus="DuckDB", depth=-1)
    assert nb.graph.show(focus="DuckDB", depth=0).graph.number_of_nodes() == 1


def test_graphml_export(nb: npc_nb.Project, tmp_path: Path) -> None:
    memory = propose(nb, "We use DuckDB for the ringing database")
    nb.approve(memory)
    path = nb.graph.export_graphml(tmp_path / "graph.graphml")
    loaded = nx.read_graphml(path)
    assert "concept:duckdb" in loaded
    assert any(memory in data["memory_ids"] for _, _, data in loaded.edges(data=True))


def test_bad_concept_output_is_recorded_and_the_graph_still_draws(project_dir: Path) -> None:
    fake_models.install()
    nb = npc_nb.open(project_dir, concept_model="scripted/any")
    fake_models.SCRIPT.append("this is not json")
    memory = propose(nb, "We use DuckDB")
    nb.approve(memory)
    graph = nb.graph.networkx()
    assert memory in memory_nodes(graph) and not concept_nodes(graph)
    error = nb.sql("SELECT error FROM concept_extractions")["error"].item()
    assert "JSONDecodeError" in error or "ValueError" in error
    assert len(fake_models.RECEIVED) == 1
    nb.graph.networkx()
    assert len(fake_models.RECEIVED) == 1  # extracted once per memory version


def test_npc_graph_magic(nb: npc_nb.Project) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    nb.approve(propose(nb, "We use DuckDB for the ringing database"))
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "npc_nb")
    view = shell.run_line_magic("npc_graph", "--focus duckdb --depth 1")
    assert "concept:duckdb" in view.graph


def graph_notebook(nb: npc_nb.Project, views: int) -> nbformat.NotebookNode:
    """A notebook as saved after drawing the graph ``views`` times (different cuts)."""
    cells = []
    for n in range(views):
        cell = nbformat.v4.new_code_cell(f"%npc_graph --max-nodes {40 - n}")
        bundle = nb.graph.show(max_nodes=40 - n)._repr_mimebundle_()
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
        cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells)


def approve_station_memories(nb: npc_nb.Project, count: int) -> None:
    nb.configure(matcher=None)  # each numbered station is its own memory
    for n in range(count):
        text = f"Station {n} at Neusiedl logs the ringing data with the Garmin GX{n}"
        nb.approve(propose(nb, text, npc=("analyst", "writer")[n % 2]))


def test_a_notebook_with_three_graphs_stays_small(nb: npc_nb.Project, tmp_path: Path) -> None:
    approve_station_memories(nb, 20)
    path = tmp_path / "graphs.ipynb"
    nbformat.write(graph_notebook(nb, 3), path)
    saved = nbformat.read(path, as_version=4)
    sizes = [len(json.dumps(cell.outputs)) for cell in saved.cells]
    assert all(size < 100_000 for size in sizes), sizes  # was ~770 KB each
    assert path.stat().st_size < 300_000
    assert "vis-network" not in path.read_text() and "<script" not in path.read_text()
    (output,) = saved.cells[0].outputs
    assert len(output.data[MIME_TYPE]["nodes"]) == 40  # the graph itself, as data


def test_viewers_without_the_renderer_show_a_picture(nb: npc_nb.Project) -> None:
    approve_station_memories(nb, 4)
    body, _ = HTMLExporter().from_notebook_node(graph_notebook(nb, 1))
    (image,) = re.findall(r'<img\b[^>]*src="data:image/png;base64,([^"]+)"', body)
    assert base64.b64decode(image).startswith(b"\x89PNG")
    assert "vis-network" not in body


def test_offline_concepts_are_things_not_verbs_or_roles(nb: npc_nb.Project) -> None:
    """After a bare "to" comes a verb; "the name of X" is about X; "my name is Ada" is
    about Ada. None of "store", "name", "dataset" is a concept of these memories."""
    nb.approve(propose(nb, "My name is Ada and I lead the ringing project"))
    nb.approve(propose(nb, "We need to store the survey data in Parquet"))
    nb.approve(propose(nb, "Please keep the name of each site"))
    nb.approve(propose(nb, "Our main dataset is Birds2024", npc="writer"))
    nb.approve(propose(nb, "Remember to name files by date", npc="writer"))
    nb.approve(propose(nb, "Send the results to the Zenodo archive", npc="writer"))
    assert concept_nodes(nb.graph.networkx()) == {
        f"concept:{key}"
        for key in (
            "ada",
            "ringing project",
            "survey data",
            "parquet",
            "site",
            "birds2024",
            "date",
            "results",
            "zenodo archive",
        )
    }


def test_tooltips_say_memory_for_one_and_memories_for_more(nb: npc_nb.Project) -> None:
    for text in (
        "We decided to use DuckDB for the ringing database",
        "The ringing database is backed up to Zenodo",
    ):
        nb.approve(propose(nb, text, category="decision"))
    data = nb.graph.show().data()
    titles = {node["label"]: node["title"] for node in data["nodes"]}
    assert titles["DuckDB"] == "DuckDB: in 1 approved memory"
    assert titles["ringing database"] == "ringing database: in 2 approved memories"
    edges = {edge["title"] for edge in data["edges"]}
    assert "mentions (1 memory)" in edges and not any("1 memories" in t for t in edges)


def test_the_fallback_picture_labels_every_dot_memories_included(nb: npc_nb.Project) -> None:
    from npc_nb.graph import picture, style

    for text in (
        "We decided to use DuckDB for the ringing database",
        "The ringing database is backed up to Zenodo",
    ):
        nb.approve(propose(nb, text, category="decision"))
    graph = nb.graph.show().graph
    drawn = picture.figure(graph).axes[0].texts
    labels = [text.get_text() for text in drawn]
    assert len(labels) == graph.number_of_nodes()  # one label a node, memories included
    assert {"We decided to use DuckDB…", "The ringing database is…"} <= set(labels)
    assert all(len(label) <= style.MEMORY_LABEL_CHARS for label in labels)
