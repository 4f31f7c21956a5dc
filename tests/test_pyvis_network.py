"""pyvis where a user reaches for it: ``nb.graph.pyvis(...)`` is the drawing
``show_graph`` makes, as a real pyvis Network styled like it, that shows itself inline
and offline, and ``%npc_graph --pyvis`` draws exactly that."""

from __future__ import annotations

import json
import re
from datetime import UTC
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from pyvis.network import Network

import npc_nb
from npc_nb.notebook.magics import NpcMagics
from tests.helpers import cell, magics_project, propose
from tests.test_hostile_display import HOSTILE_MEMORY, Inspected, assert_inert_page, data_script


def approve_some(nb: npc_nb.Project) -> dict[str, str]:
    """Two personas' approved memories, and a pending and a rejected one beside them."""
    ids = {
        "duckdb": propose(nb, "We store the survey data in DuckDB", category="decision"),
        "ibis": propose(nb, "Ibis wants the methods section by Friday", npc="writer",
                        category="commitment"),
        "pending": propose(nb, "The Vienna team also uses Zenodo"),
        "rejected": propose(nb, "DuckDB replaced Postgres at Oxford"),
    }  # fmt: skip
    nb.approve(ids["duckdb"])
    nb.approve(ids["ibis"])
    nb.reject(ids["rejected"])
    return ids


def page_of(net: Any) -> str:
    """The page inside the inline output's iframe, as the browser reads it."""
    outer = Inspected(net._repr_html_())
    assert outer.tags.count("iframe") == 1 and "script" not in outer.tags
    attributes = dict(outer.attributes)
    assert attributes["sandbox"] == "allow-scripts"  # scripts, but not the notebook's origin
    return attributes["srcdoc"]


def options_of(page: str) -> dict[str, Any]:
    found = re.search(r"var options = (\{.*?\});\n", page, flags=re.S)
    assert found, "no options in the page"
    return json.loads(found.group(1))


def test_it_is_a_pyvis_network_of_the_approved_graph_styled_like_the_renderer(
    nb: npc_nb.Project,
) -> None:
    approve_some(nb)
    net = nb.graph.pyvis()
    assert isinstance(net, Network)
    drawn = nb.graph.show()
    assert {n["id"] for n in net.nodes} == set(drawn.graph.nodes)
    assert net.num_edges() == drawn.graph.number_of_edges()
    assert not {"concept:zenodo", "concept:vienna", "concept:oxford", "concept:postgres"} & set(
        net.get_nodes()
    )
    looks = {n["id"]: n for n in drawn.data()["nodes"]}
    for node in net.nodes:
        look = looks[node["id"]]
        assert [node[k] for k in ("label", "title", "color", "shape", "size")] == [
            look[k] for k in ("label", "title", "color", "shape", "size")
        ]
    assert repr(net).endswith(f"{net.num_nodes()} nodes, {net.num_edges()} edges.")


@pytest.mark.parametrize(
    "cut",
    [
        {"npc": "writer"},
        {"category": "decision"},
        {"focus": "DuckDB", "depth": 1},
        {"max_nodes": 3},
    ],
    ids=lambda cut: ",".join(cut),
)
def test_it_honours_the_filters_and_the_cut_of_show_graph(
    nb: npc_nb.Project, cut: dict[str, Any]
) -> None:
    approve_some(nb)
    net = nb.graph.pyvis(**cut)
    drawn = nb.graph.show(**cut)
    assert set(net.get_nodes()) == set(drawn.graph.nodes) != set(nb.graph.networkx().nodes)
    assert net.num_edges() == drawn.graph.number_of_edges()
    assert net.note == drawn.note
    if "max_nodes" in cut:
        assert net.num_nodes() == 3 and "Showing 3 of" in net._repr_html_()


def test_it_draws_the_graph_as_it_stood(nb: npc_nb.Project) -> None:
    memory = propose(nb, "We use Postgres for the archive")
    nb.approve(memory)
    nb.supersede(memory, "We use DuckDB for the archive")
    events = nb.decisions(memory)
    (approved_at,) = events.loc[events["action"] == "approve", "occurred_at"].tolist()
    then = approved_at.to_pydatetime().replace(tzinfo=UTC)
    assert "concept:postgres" in nb.graph.pyvis(as_of=then).get_nodes()
    assert "concept:postgres" not in nb.graph.pyvis().get_nodes()


def test_a_bad_cut_is_refused_as_show_graph_refuses_it(nb: npc_nb.Project) -> None:
    approve_some(nb)
    with pytest.raises(npc_nb.InvalidValueError, match="max_nodes takes .* at least 1"):
        nb.graph.pyvis(max_nodes=0)
    with pytest.raises(npc_nb.InvalidValueError, match="No concept 'Zenodo'"):
        nb.graph.pyvis(focus="Zenodo")
    with pytest.raises(npc_nb.InvalidValueError):
        nb.graph.pyvis(npc="nobody")


def test_its_page_fetches_nothing_even_with_the_buttons_shown(nb: npc_nb.Project) -> None:
    approve_some(nb)
    net = nb.graph.pyvis()
    for page in (page_of(net), (net.show_buttons(), page_of(net))[1]):
        assert not re.search(r"""<(?:script|link)\b[^>]*(?:src|href)\s*=\s*["']?https?:""", page)
        assert "url(http" not in page and "bootstrap" not in page.lower()
        assert "vis.Network" in page  # the drawing library is inline


def test_its_html_as_pyvis_writes_it_fetches_nothing_and_keeps_tooltips_text(
    nb: npc_nb.Project, tmp_path: Any
) -> None:
    """pyvis's own ways to get the page (``generate_html``, ``write_html``) give the
    page the inline output holds: no Bootstrap or other remote link, tooltips as text."""
    nb.approve(propose(nb, HOSTILE_MEMORY))
    net = nb.graph.pyvis()
    net.write_html(str(tmp_path / "graph.html"))
    for page in (net.generate_html(), (tmp_path / "graph.html").read_text()):
        assert not re.search(r"""<(?:script|link)\b[^>]*(?:src|href)\s*=\s*["']?https?:""", page)
        assert "bootstrap" not in page.lower() and "vis.Network" in page
        assert "popup.innerHTML" not in page
        assert_inert_page(page)


def test_set_options_and_show_buttons_change_what_is_shown_again(nb: npc_nb.Project) -> None:
    approve_some(nb)
    net = nb.graph.pyvis()
    first = page_of(net)
    assert options_of(first)["interaction"]["hover"] is True and 'id="config"' not in first
    net.show_buttons(filter_=["physics"])
    shown = page_of(net)
    assert 'id="config"' in shown and options_of(shown)["configure"]["enabled"] is True
    net.set_options('{"physics": {"enabled": false}, "interaction": {"hover": false}}')
    assert options_of(page_of(net)) == {
        "physics": {"enabled": False},
        "interaction": {"hover": False},
    }


def test_hostile_memory_text_stays_text_in_the_pyvis_output(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, HOSTILE_MEMORY))
    net = nb.graph.pyvis()
    net.add_node("mine", label="a node of my own", title='<a href="x">a link</a>')
    html_output = net._repr_html_()
    assert "<script>alert" not in html_output and "<img" not in html_output
    page = page_of(net)
    assert_inert_page(page)
    assert "popup.innerHTML" not in page  # tooltips stay text, whatever nodes are added
    data = data_script(page)
    nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", data).group(1))
    (memory,) = [node for node in nodes if node["id"].startswith("memory:")]
    assert memory["title"].startswith(HOSTILE_MEMORY)


def test_npc_graph_pyvis_draws_exactly_that_inline(shell: InteractiveShell) -> None:
    nb = magics_project(shell)
    approve_some(nb)
    shown = cell(shell, "%npc_graph --pyvis --focus DuckDB --depth 1")
    assert isinstance(shown, Network)
    expected = nb.graph.pyvis(focus="DuckDB", depth=1)
    assert shown.nodes == expected.nodes and shown.edges == expected.edges
    bundle, _ = shell.display_formatter.format(shown)
    assert bundle["text/html"].startswith('<div class="npc-nb-pyvis"><iframe ')
    assert ' srcdoc="&lt;html&gt;' in bundle["text/html"]
    assert bundle["text/plain"] == repr(expected)
    light = cell(shell, "%npc_graph --focus DuckDB --depth 1")  # the default is unchanged
    assert not isinstance(light, Network) and set(light.graph) == set(shown.get_nodes())
    assert "--pyvis" in NpcMagics.npc_graph.__doc__  # %npc_graph? says it
