"""Malformed model output loses nothing: one hostile item is refused with its reason,
every other item is kept, and nothing (RecursionError, a digit-limit ValueError, a lone
surrogate reaching DuckDB) escapes or breaks the store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npc_nb
from npc_nb._foundations.json_items import (
    MAX_CHARS,
    MAX_DEPTH,
    OutputError,
    split_items,
    strip_fence,
)
from npc_nb._foundations.text import clean_text
from npc_nb._foundations.utc import utc_now
from npc_nb.chat.extraction import parse_candidates
from npc_nb.graph import concepts
from npc_nb.store.graph import graph_sql
from tests import fake_models
from tests.helpers import propose

FIRST = {"statement": "The user studies bird migration.", "category": "fact",
         "evidence_quote": "I study bird migration", "confidence": 0.9}  # fmt: skip
LAST = {"statement": "The user is writing about storks.", "category": "fact"}
DEEP = "[" * 50_000 + "]" * 50_000
DIGITS = "7" * 5_000

HOSTILE_ITEMS = {
    "deep nesting": (DEEP, "nested 50,000 levels deep (limit 32)"),
    "a 5,000-digit confidence": (
        f'{{"statement": "Sure of it.", "category": "fact", "confidence": {DIGITS}}}',
        "a number with 5,000 digits",
    ),
    "a 5,000-digit number elsewhere": (
        f'{{"statement": "Counted it.", "category": "fact", "count": -{DIGITS}}}',
        "a number with 5,000 digits",
    ),
    "a lone surrogate in the statement": (
        '{"statement": "Broken \\ud800 text", "category": "fact"}',
        "text is not valid Unicode (a lone surrogate)",
    ),
    "a lone surrogate in a key": (
        '{"statement": "Odd key.", "category": "fact", "\\udc00": 1}',
        "text is not valid Unicode (a lone surrogate)",
    ),
}


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


def run_job(nb: npc_nb.Project, *outputs: object) -> dict:
    fake_models.SCRIPT.extend(outputs)
    nb.chat("analyst", "I study bird migration. Tell me about storks.")
    nb.extraction.wait()
    return nb.extraction.jobs().iloc[-1].to_dict()


def memories_around(hostile: str) -> str:
    return f'{{"memories": [{json.dumps(FIRST)}, {hostile}, {json.dumps(LAST)}]}}'


# -- extraction -----------------------------------------------------------------------


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


def test_a_fenced_answer_still_parses() -> None:
    fenced = "```json\n" + json.dumps({"memories": [FIRST, LAST]}) + "\n```"
    kept, skipped = parse_candidates(fenced, limit=5)
    assert (kept, skipped) == ([FIRST, LAST], [])
    assert strip_fence("```\n[1]\n```") == "[1]"


def test_a_long_run_of_spaces_does_not_hang_fence_stripping() -> None:
    # A backtracking regex took minutes on 150,000 spaces and would take hours on these;
    # the suite's timeout is the guard, not a stopwatch (speed is measured in bench/).
    text = "a" + " " * 1_000_000 + "b"
    assert strip_fence(text) == text
    assert strip_fence("```json" + " " * 1_000_000 + "[1]" + " " * 1_000_000 + "```") == "[1]"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("Sure! Here you go.", "output is not JSON"),
        ("[1, 2, 3]x", "output is not JSON"),
        ('"just a string"', 'output must be {"memories": [...]} or a list of memories'),
        (DIGITS, 'output must be {"memories": [...]}'),
        ("[1,,2]", "output is not JSON"),
        ('{"memories": 5}', 'output must be {"memories": [...]}'),
        ("[" + "1," * 100_000 + "1]", "characters, over 200,000"),
    ],
)
def test_an_unusable_top_level_is_still_an_output_error(document: str, message: str) -> None:
    with pytest.raises(OutputError) as raised:
        parse_candidates(document, limit=5)
    assert message in str(raised.value)


# -- the concept model ----------------------------------------------------------------


@pytest.fixture
def conceptual(project_dir: Path) -> Iterator[npc_nb.Project]:
    fake_models.install()
    nb = npc_nb.open(project_dir, concept_model="scripted/any")
    yield nb
    nb.close()


def approved(nb: npc_nb.Project, *texts: str) -> list[str]:
    ids = [propose(nb, text) for text in texts]
    for memory_id in ids:
        nb.approve(memory_id)
    return ids


def concept_item(memory_id: str, *labels: str) -> str:
    return json.dumps({"id": memory_id, "concepts": list(labels)})


def extraction_errors(nb: npc_nb.Project) -> dict[str, Any]:
    frame = nb.sql("SELECT memory_id, error FROM concept_extractions")
    return {row.memory_id: row.error for row in frame.itertuples()}


CONCEPT_HOSTILES = {
    "deep nesting": ('{"id": "MEMORY_ID", "concepts": ' + DEEP + "}", "levels deep (limit 32)"),
    "a 5,000-digit number": ('{"id": "MEMORY_ID", "concepts": ["Vienna"], "n": ' + DIGITS + "}",
                             "a number with 5,000 digits"),
    "a lone surrogate in a label": ('{"id": "MEMORY_ID", "concepts": ["Vienna \\ud800"]}',
                                    "a lone surrogate"),
    "a lone surrogate in a key": ('{"id": "MEMORY_ID", "concepts": ["Vienna"], "\\ud800": 0}',
                                  "a lone surrogate"),
}  # fmt: skip


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


def test_a_raw_surrogate_in_the_answer_is_refused_not_stored() -> None:
    raw = '[{"id": "m1", "concepts": ["a\ud800b"]}, {"id": "m2", "concepts": ["DuckDB"]}]'
    found, refused = concepts.read_concepts(raw, {"m1", "m2"})
    assert list(found) == ["m2"]
    assert refused == ["item 0: text is not valid Unicode (a lone surrogate)"]
    assert concepts.parse_concepts(raw, {"m1", "m2"})["m2"]["concepts"] == [("duckdb", "DuckDB")]


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


# -- the item splitter, property-based ------------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)
OBJECTS = st.lists(st.dictionaries(st.text(max_size=8), VALUES, max_size=5), max_size=6)
JSONISH = st.text(alphabet='[]{}",:\\ \n0123456789-+.eEtruefalsnNI ud8memories`', max_size=200)
ANY_TEXT = st.text(st.characters() | st.characters(categories=["Cs"]), max_size=300)


def depth(value: Any) -> int:
    """How deep brackets nest in the JSON of a value (computed without recursion)."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        node, level = pending.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level + 1)
            pending += [(child, level + 1) for child in node]
    return deepest


def has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def refused_index(refusal: str) -> int:
    assert refusal.startswith("item ")
    return int(refusal.removeprefix("item ").split(":")[0])


def check_against_json_loads(text: str, expected: list[Any]) -> None:
    """Every item is kept as json.loads parsed it, or refused for a documented reason."""
    items, refusals = split_items(text)
    indices = [index for index, _ in items] + [refused_index(r) for r in refusals]
    assert sorted(indices) == list(range(len(expected)))
    for index, value in items:  # compared as JSON, so that NaN equals NaN
        assert json.dumps(value) == json.dumps(expected[index])
    for refusal in refusals:
        value = expected[refused_index(refusal)]
        assert ("levels deep" in refusal and depth(value) > MAX_DEPTH) or (
            "lone surrogate" in refusal and has_lone_surrogate(value)
        ), refusal


@given(ANY_TEXT | JSONISH | JSONISH.map(lambda text: '{"memories": [' + text))
def test_arbitrary_text_raises_only_output_error(text: str) -> None:
    try:
        _, refusals = split_items(text)
    except OutputError:
        return
    assert all(refusal.startswith("item ") for refusal in refusals)
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError):
        return
    if isinstance(expected, list):
        check_against_json_loads(text, expected)
    elif isinstance(expected, dict) and isinstance(expected.get("memories"), list):
        check_against_json_loads(text, expected["memories"])


@given(OBJECTS, st.booleans(), st.sampled_from([None, 0, 2]), st.booleans())
def test_valid_lists_of_objects_split_exactly_as_json_loads_parses_them(
    objects: list[dict], ascii_only: bool, indent: int | None, wrapped: bool
) -> None:
    document = {"memories": objects, "note": [1, {"x": 2}]} if wrapped else objects
    text = json.dumps(document, ensure_ascii=ascii_only, indent=indent)
    expected = json.loads(text)["memories"] if wrapped else json.loads(text)
    check_against_json_loads(text, expected)
    if all(depth(item) <= MAX_DEPTH for item in expected):
        assert split_items(text) == (list(enumerate(expected)), [])


HOSTILE = st.one_of(
    st.integers(33, 20_000).map(lambda n: ("deep", "[" * n + "]" * n)),
    st.integers(33, 20_000).map(lambda n: ("deep", '{"a": ' + "[" * n + "]" * n + "}")),
    st.integers(4_301, 6_000).map(lambda n: ("number", '{"n": -' + "9" * n + "}")),
    st.sampled_from(["\\ud800", "\\udfff", "a\\udc00b"]).map(
        lambda s: ("surrogate", '{"s": "' + s + '"}')
    ),
    st.sampled_from(["\\ud800", "\\udbff"]).map(lambda s: ("surrogate", '{"' + s + '": 1}')),
)
GOOD = VALUES.map(lambda value: ("good", json.dumps(value)))
REASONS = {"deep": "levels deep", "number": "digits", "surrogate": "lone surrogate"}


@given(st.lists(HOSTILE | GOOD, max_size=6), st.booleans())
def test_hostile_items_are_refused_one_by_one(parts: list[tuple[str, str]], wrapped: bool) -> None:
    body = "[" + ", ".join(text for _, text in parts) + "]"
    text = '{"memories": ' + body + "}" if wrapped else body
    if len(text) > MAX_CHARS:
        with pytest.raises(OutputError, match="characters, over"):
            split_items(text)
        return
    items, refusals = split_items(text)
    kept = dict(items)
    refused = {refused_index(refusal): refusal for refusal in refusals}
    assert sorted([*kept, *refused]) == list(range(len(parts)))
    for index, (kind, part) in enumerate(parts):
        if kind == "good":
            assert kept[index] == json.loads(part)
        else:
            assert REASONS[kind] in refused[index]
