"""The benchmark scripts still run (tiny sizes), so they cannot rot unnoticed, and the
store generator builds a store the public API reads like one it wrote itself."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import npc_nb
from npc_nb._foundations.terms import content_terms, joined_terms
from npc_nb._foundations.text import content_hash, normalise

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments",
    [
        ["bench_store.py", "--sizes", "300", "--repeat", "5"],
        ["bench_metrics.py", "--memories", "3000", "--repeat", "1"],
        ["bench_graph.py", "--sizes", "200"],
        ["bench_chat.py", "--cells", "3"],
        ["bench_review.py", "--size", "200", "--pending", "60", "--presses", "5"],
        ["bench_insert_floor.py", "--memories", "3000", "--repeat", "5"],
        ["replay_matching.py", "--copies", "1", "--workloads", "synthetic", "near-miss"],
        ["bench_snapshot.py", "--memories", "2000", "--repeat", "3"],
        ["bench_bundle.py", "--memories", "1000"],
        ["bench_agreement.py", "--cards", "20", "--votes", "2000", "--repeat", "1"],
        ["experiment_example.py", "--exchanges", "6"],
        ["bench_audit.py", "--runs", "300", "--repeat", "2"],
    ],
)
def test_benchmark_script_runs(arguments: list[str], tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / arguments[0]), *arguments[1:]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "npc_nb" in result.stdout


@pytest.mark.slow
def test_run_all_prints_one_table_with_baselines(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / "run_all.py"), "--quick", "--sizes", "300"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    table = result.stdout.split("| operation |")[-1]  # the last table: run_all's own
    for operation in ("context after approve", "undo", "next card", "%%npc turn"):
        assert f"| {operation}" in table
    assert "| raw query |" in table and "| bare model call |" in table
    assert "peak RSS: review panel open" in table


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[npc_nb.Project]:
    sys.path.insert(0, str(BENCH))
    try:
        from generate import generate
    finally:
        sys.path.remove(str(BENCH))
    generate(tmp_path / "generated", 400, approved=240, pending=60)
    project = npc_nb.open(tmp_path / "generated")
    yield project
    project.close()


def test_generated_columns_are_computed_as_the_code_computes_them(
    generated: npc_nb.Project,
) -> None:
    rows = generated.sql(
        "SELECT initial_text, final_text, initial_hash, final_hash, norm_text, match_text "
        "FROM memories"
    )
    assert len(rows) == 400
    for row in rows.itertuples():
        assert row.initial_hash == content_hash(row.initial_text)
        assert row.final_hash == content_hash(row.final_text)
        assert row.norm_text == normalise(row.final_text)
        expected = joined_terms(content_terms(row.initial_text) | content_terms(row.final_text))
        assert row.match_text == expected
    assert rows["final_text"].nunique() == 400
    assert rows["final_text"].str.len().between(50, 170).all()


def test_generated_store_has_the_planned_mix(generated: npc_nb.Project) -> None:
    statuses = generated.sql("SELECT status, count(*) AS n FROM memories GROUP BY status")
    counts = dict(statuses.values)
    assert counts["human-approved"] + counts["human-edited"] == 240
    assert counts["pending_approval"] == 60
    assert {"human-rejected", "superseded", "deferred"} <= set(counts)
    events = generated.sql("SELECT count(*) AS n FROM memory_events")["n"][0]
    assert 2.5 * 400 <= events <= 3.5 * 400
    missing = generated.sql(
        "SELECT count(*) AS n FROM memories m LEFT JOIN messages s ON s.id = m.source_message_id "
        "WHERE s.id IS NULL OR NOT contains(s.content, m.evidence)"
    )["n"][0]
    assert missing == 0


def test_public_api_reads_a_generated_store(generated: npc_nb.Project) -> None:
    assert "<npc-memory" in generated.context("analyst", team="methods", query="survey data")
    queue = generated.review_queue()
    assert len(queue) >= 60
    assert not generated.metrics.approval_rate().empty
    graph = generated.graph.networkx()  # every concept is stored: nothing is extracted
    assert graph.number_of_edges() > 0
    assert generated.sql("SELECT count(*) AS n FROM concept_extractions")["n"][0] == 400

    # The neighbour index reads the generated terms: a reworded repeat is found.
    approved = generated.sql(
        "SELECT id, final_text, category, npc FROM memories "
        "WHERE status = 'human-approved' AND scope = 'npc' ORDER BY id LIMIT 1"
    ).iloc[0]
    reworded = "Note: " + approved.final_text.replace(".", ", as discussed.")
    outcome = generated.add_candidate(reworded, category=approved.category, npc=approved.npc)
    assert outcome.memory_id == approved.id

    pending = queue["id"].iloc[0]
    before = generated.context("analyst", team="methods")
    generated.approve(pending, by="tester")
    assert generated.memories(status="approved")["id"].eq(pending).any()
    session = generated.review_session(by="tester")
    assert session.card() is not None
    generated.undo(by="tester")
    assert generated.context("analyst", team="methods") == before
