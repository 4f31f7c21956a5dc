"""Malformed model output loses nothing: one hostile item is refused with its reason,
every other item is kept, and nothing (RecursionError, a digit-limit ValueError, a lone
surrogate reaching DuckDB) escapes or breaks the store."""

from __future__ import annotations

import json
from typing import Any

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
from npc_nb.chat.extraction import parse_candidates
from npc_nb.graph import concepts
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


def run_job(nb: npc_nb.Project, *outputs: object) -> dict:
    fake_models.SCRIPT.extend(outputs)
    nb.chat("analyst", "I study bird migration. Tell me about storks.")
    nb.extraction.wait()
    return nb.extraction.jobs().iloc[-1].to_dict()


def memories_around(hostile: str) -> str:
    return f'{{"memories": [{json.dumps(FIRST)}, {hostile}, {json.dumps(LAST)}]}}'


# -- extraction -----------------------------------------------------------------------


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


def test_a_raw_surrogate_in_the_answer_is_refused_not_stored() -> None:
    raw = '[{"id": "m1", "concepts": ["a\ud800b"]}, {"id": "m2", "concepts": ["DuckDB"]}]'
    found, refused = concepts.read_concepts(raw, {"m1", "m2"})
    assert list(found) == ["m2"]
    assert refused == ["item 0: text is not valid Unicode (a lone surrogate)"]
    assert concepts.parse_concepts(raw, {"m1", "m2"})["m2"]["concepts"] == [("duckdb", "DuckDB")]


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
