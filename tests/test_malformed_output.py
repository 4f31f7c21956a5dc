"""Malformed model output loses nothing: one hostile item is refused with its reason, every
other item is kept, and nothing (RecursionError, a digit-limit ValueError, a lone
surrogate reaching DuckDB) escapes or breaks the store.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_malformed_output.py (the fast tier).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from npc_nb._foundations.text import clean_text
from npc_nb._foundations.utc import utc_now
from npc_nb.store.graph import graph_sql
from tests import fake_models
from tests.helpers import propose
from tests.unit.test_malformed_output import (
    CONCEPT_HOSTILES,
    DEEP,
    FIRST,
    HOSTILE_ITEMS,
    LAST,
    approved,
    concept_item,
    extraction_errors,
    memories_around,
    run_job,
)


@pytest.fixture
def scripted(project_dir: Path) -> Iterator[npc_nb.Project]:
    fake_models.install()
    nb = npc_nb.open(
        project_dir,
        extraction_model="scripted/any",
        extract_in_background=False,
        extraction_retry_delay=0,
    )
    yield nb
    nb.close()


@pytest.fixture
def conceptual(project_dir: Path) -> Iterator[npc_nb.Project]:
    fake_models.install()
    nb = npc_nb.open(project_dir, concept_model="scripted/any")
    yield nb
    nb.close()


@pytest.mark.parametrize("kind", list(HOSTILE_ITEMS))
def test_one_hostile_extraction_item_is_refused_and_the_others_kept(
    scripted: npc_nb.Project, kind: str
) -> None:
    hostile, reason = HOSTILE_ITEMS[kind]
    raw = memories_around(hostile)
    job = run_job(scripted, raw)
    assert (job["status"], job["candidates"], job["attempts"]) == ("done", 2, 1)
    assert job["error"].startswith("skipped 1: item 1: ")
    assert reason in job["error"]
    assert job["raw_output"] == raw
    queue = set(scripted.review_queue()["final_text"])
    assert queue == {FIRST["statement"], LAST["statement"]}


def test_skipped_items_keep_their_index_in_the_output(scripted: npc_nb.Project) -> None:
    long = {"statement": "x" * 100_000, "category": "fact"}
    raw = json.dumps([{"statement": "?", "category": "opinion"}, long, FIRST])
    job = run_job(scripted, raw)
    assert (job["status"], job["candidates"]) == ("done", 1)
    assert "item 0: unknown category 'opinion'" in job["error"]
    assert "item 1: Memory text is 100,000 characters" in job["error"]


@pytest.mark.parametrize(
    "document",
    [
        '{"notes": ' + DEEP + "}",
        '{"memories": {"nested": ' + DEEP + "}}",
        "{" * 50_000 + "}" * 50_000,
        "[" * 50_000,
        '{"memories": [' * 10_000,
    ],
    ids=["deep object", "deep memories object", "deep braces", "unclosed", "unclosed memories"],
)
def test_an_unusable_deep_document_fails_the_job_and_the_next_job_runs(
    scripted: npc_nb.Project, document: str
) -> None:
    job = run_job(scripted, document, document, document)
    assert (job["status"], job["attempts"]) == ("failed", 3)
    assert job["error"].startswith("OutputError: output ")
    assert job["raw_output"] == document
    nxt = run_job(scripted, json.dumps([FIRST]))
    assert (nxt["status"], nxt["candidates"]) == ("done", 1)
    assert list(scripted.review_queue()["final_text"]) == [FIRST["statement"]]


def test_a_list_that_is_itself_deep_is_one_refused_item(scripted: npc_nb.Project) -> None:
    job = run_job(scripted, DEEP)
    assert (job["status"], job["candidates"]) == ("done", 0)
    assert job["error"] == "skipped 1: item 0: nested 49,999 levels deep (limit 32)"


@pytest.mark.parametrize("kind", list(CONCEPT_HOSTILES))
def test_one_hostile_concept_item_is_recorded_and_the_store_keeps_working(
    conceptual: npc_nb.Project, kind: str
) -> None:
    nb = conceptual
    good, bad, other = approved(
        nb, "We use DuckDB", "The Vienna team writes papers", "Zenodo hosts the data"
    )
    template, reason = CONCEPT_HOSTILES[kind]
    items = [
        concept_item(good, "DuckDB"),
        template.replace("MEMORY_ID", bad),
        concept_item(other, "Zenodo", "data"),
    ]
    raw = '{"memories": [' + ", ".join(items) + "]}"
    fake_models.SCRIPT.append(raw)
    graph = nb.graph.networkx()
    assert {"concept:duckdb", "concept:zenodo", "concept:data"} <= set(graph)
    assert "concept:vienna" not in graph
    errors = extraction_errors(nb)
    assert pd.isna(errors[good]) and pd.isna(errors[other])
    assert errors[bad].startswith("refused 1: item 1: ") and reason in errors[bad]
    # the store still works: reads, a new decision, and a graph with no new extraction
    assert len(nb.memories()) == 3
    nb.reject(propose(nb, "Another statement to decide on"))
    nb.graph.networkx()
    assert len(fake_models.RECEIVED) == 1


def test_labels_lose_control_characters_and_absurd_ones_are_refused(
    conceptual: npc_nb.Project,
) -> None:
    nb = conceptual
    (memory,) = approved(nb, "We use DuckDB in Vienna")
    raw = json.dumps(
        {
            "memories": [
                {
                    "id": memory,
                    "concepts": ["Duck\u0007DB", "\u202eVienna\u200b", "x" * 5_000, "\x00"],
                    "relations": [
                        {"source": "Duck\x07DB", "relation": "runs\nin\x1b", "target": "Vienna"}
                    ],
                }
            ]
        }
    )
    fake_models.SCRIPT.append(raw)
    graph = nb.graph.networkx()
    labels = nb.sql("SELECT concept_key, concept_label FROM memory_concepts ORDER BY 1")
    assert labels.values.tolist() == [["duck db", "Duck DB"], ["vienna", "Vienna"]]
    relation = nb.sql("SELECT relation FROM concept_relations")["relation"].item()
    assert relation == "runs in"
    assert graph.has_edge("concept:duck db", "concept:vienna", key="runs in")
    error = extraction_errors(nb)[memory]
    assert error == "refused 1: item 0: a concept label of 5,000 characters (limit 120)"


def test_a_concept_answer_that_is_not_json_is_recorded(conceptual: npc_nb.Project) -> None:
    (memory,) = approved(conceptual, "We use DuckDB")
    fake_models.SCRIPT.append("[" * 50_000)
    conceptual.graph.networkx()
    error = extraction_errors(conceptual)[memory]
    assert error.startswith("OutputError: output is not JSON")


def test_the_store_replaces_a_lone_surrogate_instead_of_breaking_duckdb(
    nb: npc_nb.Project,
) -> None:
    store = nb._stores.project
    now = utc_now()
    graph_sql.record_concepts(
        store,
        pd.DataFrame(
            {
                "memory_id": ["m1"],
                "memory_hash": ["h1"],
                "model": ["x"],
                "extracted_at": [now],
                "error": ["bad \udc80"],
            }
        ),
        pd.DataFrame(
            [("m1", "h1", "bad \ud800 key", "bad \ud800 label")],
            columns=["memory_id", "memory_hash", "concept_key", "concept_label"],
        ),
        pd.DataFrame(
            [("m1", "h1", "a", "rel \ud800", "b")],
            columns=["memory_id", "memory_hash", "source_key", "relation", "target_key"],
        ),
    )
    stored = [
        *nb.sql("SELECT concept_key, concept_label FROM memory_concepts").iloc[0],
        nb.sql("SELECT error FROM concept_extractions")["error"].item(),
        nb.sql("SELECT relation FROM concept_relations")["relation"].item(),
    ]
    sent = ["bad \ud800 key", "bad \ud800 label", "bad \udc80", "rel \ud800"]
    assert stored == [clean_text(text) for text in sent]  # replaced, all encodable
    nb.approve(propose(nb, "The store still takes decisions"))
    assert len(nb.memories()) == 1
