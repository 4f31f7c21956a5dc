"""One vocabulary for the reads of analysis: ``group_by=`` groups every metric, ``by=``
never does, and every metric, graph read, drawing and export takes a keyword-only
``as_of=`` that shows the project as it stood then."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest

import npc_nb
from tests.helpers import propose

#: Every metric that groups, with a dimension each can group by.
GROUPED = [
    "approval_rate",
    "rejection_rate",
    "edit_rate",
    "repeats_per_candidate",
    "matching",
    "time_to_decision",
    "reviewer_throughput",
    "agreement",
]
#: Every metric; each shows the past with ``as_of=``.
METRICS = [*GROUPED, "backlog", "injections_per_memory"]


@pytest.fixture
def changed(nb: npc_nb.Project) -> tuple[npc_nb.Project, dict[str, pd.DataFrame]]:
    """A project with snapshot ``v1`` taken after some decisions and replies, and more
    of each after it; and each metric as it stood at the snapshot."""
    kept = propose(nb, "We use PostgreSQL for the archive", category="decision")
    nb.approve(kept)
    nb.reject(propose(nb, "Plots use pie charts", category="preference"))
    waiting = propose(nb, "Use DuckDB for analysis", category="decision")
    nb.chat("analyst", "What do we use for the archive?")
    then = {name: getattr(nb.metrics, name)() for name in METRICS}
    nb.snapshot("v1")
    nb.approve(waiting)
    nb.edit(propose(nb, "The deadline is Friday"), "The deadline is Friday noon")
    outcome = nb.add_candidate("Plots use pie charts", category="preference", npc="analyst")
    assert outcome.action == "suppressed"  # a repeat of rejected content, after v1
    nb.chat("analyst", "And what do we use for analysis?")
    return nb, then


@pytest.mark.parametrize("metric", GROUPED)
def test_metrics_group_with_group_by_and_by_is_not_a_grouping(
    nb: npc_nb.Project, metric: str
) -> None:
    nb.approve(propose(nb, "We use DuckDB for the store", category="decision"))
    nb.reject(propose(nb, "Plots use pie charts", category="preference"))
    grouped = getattr(nb.metrics, metric)(group_by="category")
    assert "category" in grouped.columns
    with pytest.raises(TypeError):
        getattr(nb.metrics, metric)(by="category")
    with pytest.raises(TypeError):
        getattr(nb.metrics, metric)("category")  # keyword-only: no positional grouping


@pytest.mark.parametrize("metric", METRICS)
def test_every_metric_as_of_a_snapshot_is_the_metric_then(
    changed: tuple[npc_nb.Project, dict[str, pd.DataFrame]], metric: str
) -> None:
    nb, metrics_then = changed
    then = metrics_then[metric]
    read = getattr(nb.metrics, metric)
    if metric != "agreement":  # no votes in this project: nothing to change
        assert not read().equals(then)
    pd.testing.assert_frame_equal(read(as_of="v1"), then)


def test_plots_draw_the_metric_as_of_a_snapshot(
    changed: tuple[npc_nb.Project, dict[str, pd.DataFrame]],
) -> None:
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    nb, _ = changed
    then = nb.metrics.approval_rate(group_by="week", as_of="v1")
    ax = nb.metrics.plot_approval_rate(group_by=None, as_of="v1")
    (bars,) = ax.containers  # one series (all), its points and 95% intervals
    drawn = [float(y) for y in bars.lines[0].get_ydata() if y == y]
    assert drawn == then["approval_rate"].tolist()
    stacked = nb.metrics.plot_reproposals(as_of="v1")
    assert sum(patch.get_height() for patch in stacked.patches) == 0  # the repeat came later
    assert sum(patch.get_height() for patch in nb.metrics.plot_reproposals().patches) == 1
    (level,) = nb.metrics.plot_backlog(as_of="v1").get_lines()
    assert list(level.get_ydata()) == nb.metrics.backlog(as_of="v1")["backlog"].tolist() == [1]
    with pytest.raises(TypeError):
        nb.metrics.plot_rate("approval_rate", "model")  # the grouping by keyword only
    plt.close("all")


def test_the_graph_and_its_frames_and_drawings_take_as_of_by_keyword(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    memory = propose(nb, "We use Postgres for the archive")
    nb.approve(memory)
    nb.snapshot("v1")
    nb.supersede(memory, "We use DuckDB for the archive")
    assert "concept:postgres" in nb.graph.networkx(as_of="v1")
    assert "concept:postgres" not in nb.graph.networkx()
    nodes, _ = nb.graph.frames(as_of="v1")
    assert "concept:postgres" in set(nodes["node"])
    assert "concept:postgres" in nb.graph.show(as_of="v1").graph
    path = nb.graph.export_graphml(tmp_path / "then.graphml", as_of="v1")
    assert "concept:postgres" in nx.read_graphml(path)
    assert "concept:postgres" not in nx.read_graphml(
        nb.graph.export_graphml(tmp_path / "now.graphml")
    )
    for positional in (
        lambda: nb.graph.networkx("analyst"),
        lambda: nb.graph.frames(None, None, "v1"),
        lambda: nb.graph.show("analyst"),
        lambda: nb.graph.export_graphml(tmp_path / "x.graphml", "analyst"),
    ):
        with pytest.raises(TypeError):
            positional()


def test_the_graph_magic_draws_as_of_a_snapshot(nb: npc_nb.Project) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    memory = propose(nb, "We use Postgres for the archive")
    nb.approve(memory)
    nb.snapshot("v1")
    nb.supersede(memory, "We use DuckDB for the archive")
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "npc_nb")
    view = shell.run_line_magic("npc_graph", "--as-of v1")
    assert "concept:postgres" in view.graph and "concept:duckdb" not in view.graph


def test_exports_write_the_project_as_of_a_snapshot(nb: npc_nb.Project, tmp_path: Path) -> None:
    nb.approve(propose(nb, "We use Postgres for the archive"))
    pending = propose(nb, "Use DuckDB for analysis")
    nb.snapshot("v1")
    nb.reject(pending)
    paths = nb.exports.tables(tmp_path / "then", format="jsonl", as_of="v1")
    memories = pd.read_json(paths["memories"], lines=True)
    assert set(memories["status"]) == {"human-approved", "pending_approval"}
    decisions = pd.read_json(paths["decisions"], lines=True)
    assert "reject" not in set(decisions["action"])
    log = nb.exports.review_log(tmp_path / "then.jsonl", as_of="v1")
    answers = [json.loads(line)["answer"] for line in log.read_text().splitlines()]
    assert answers == ["accept"]
    now = nb.exports.review_log(tmp_path / "now.jsonl")
    assert [json.loads(line)["answer"] for line in now.read_text().splitlines()] == [
        "accept", "reject"
    ]  # fmt: skip
    with pytest.raises(TypeError):
        nb.exports.tables(tmp_path / "x", "jsonl")  # format only by keyword


def test_export_to_another_tool_writes_the_memories_approved_then(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    kept = propose(nb, "We use Postgres for the archive")
    nb.approve(kept)
    nb.snapshot("v1")
    nb.supersede(kept, "We use DuckDB for the archive")
    nb.approve(propose(nb, "The deadline is Friday"))

    def texts(path: Path) -> list[str]:
        return [json.loads(line)["messages"] for line in path.read_text().splitlines()]

    then = nb.exports.to("mem0", tmp_path / "then.jsonl", as_of="v1")
    assert texts(then) == ["We use Postgres for the archive"]
    now = nb.exports.to("mem0", tmp_path / "now.jsonl")
    assert sorted(texts(now)) == ["The deadline is Friday", "We use DuckDB for the archive"]
    with pytest.raises(TypeError):
        nb.exports.to("mem0", tmp_path / "x.jsonl", "v1")  # as_of only by keyword
