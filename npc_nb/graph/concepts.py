"""Concepts (entities, topics) and their relations, extracted from approved memories.

A model reads a batch of memories and answers JSON (the prompt asks for
``{"memories": [{"id", "concepts", "relations"}]}``); the offline model answers with a
deterministic heuristic (``npc_nb.models.offline_concepts``). Concept names are
normalised into keys, so "DuckDB", "duckdb" and "the DuckDB" are one node.

The answer is split into items by ``_foundations.json_items``: one hostile item (nested too deep, a
number too long, a lone surrogate) is refused with its reason and the others are kept.
Labels and relation verbs lose control and format characters; a label longer than
``MAX_LABEL_CHARS`` is refused.
"""

from __future__ import annotations

import unicodedata

from .._foundations.json_items import split_items
from .._foundations.text import normalise
from ..models.offline import CONCEPT_MARKER

__all__ = [
    "CONCEPT_MARKER",
    "concept_key",
    "concept_messages",
    "parse_concepts",
    "read_concepts",
]

MAX_LABEL_CHARS = 120
MAX_RELATION_CHARS = 60
_RULES = f"""{CONCEPT_MARKER}
For each memory below, list the concepts it names (people, places, datasets, tools,
projects, topics; short noun phrases as written) and the relations between those
concepts (a short verb phrase, from source to target). Use only what the memory says.
Answer with JSON only:
{{"memories": [{{"id": "<id>", "concepts": ["..."],
  "relations": [{{"source": "...", "relation": "...", "target": "..."}}]}}]}}
"""


def concept_key(label: str) -> str:
    """The node key of a concept name: normalised, without a leading article."""
    key = normalise(label)
    for article in ("the ", "a ", "an "):
        key = key.removeprefix(article)
    return key


def concept_messages(memories: list[dict[str, str]]) -> list[dict[str, str]]:
    """The concept-extraction prompt for a batch of ``{"id", "text"}`` memories."""
    listing = "\n".join(f"- id {m['id']}: {m['text']}" for m in memories)
    return [{"role": "system", "content": _RULES}, {"role": "user", "content": listing}]


def parse_concepts(raw: str, ids: set[str]) -> dict[str, dict[str, list]]:
    """{memory id: {"concepts": [(key, label)], "relations": [(src, rel, tgt)],
    "refused": [why]}} from a model's answer; items for unknown ids or of the wrong shape
    are left out. Raises ValueError (an OutputError) if the answer as a whole is unusable."""
    return read_concepts(raw, ids)[0]


def read_concepts(raw: str, ids: set[str]) -> tuple[dict[str, dict[str, list]], list[str]]:
    """What ``parse_concepts`` returns, and why whole items were refused (``"item N:
    reason"``; their memory cannot be known). A label refused inside a usable item is
    listed under that memory's "refused"."""
    items, refused = split_items(raw, "memories")
    result: dict[str, dict[str, list]] = {}
    for index, item in items:
        if not isinstance(item, dict) or str(item.get("id")) not in ids:
            continue
        concepts, problems = _item_concepts(item.get("concepts"))
        result[str(item["id"])] = {
            "concepts": list(concepts.items()),
            "relations": _item_relations(item.get("relations"), concepts),
            "refused": [f"item {index}: {problem}" for problem in problems],
        }
    return result, refused


def _item_concepts(labels: object) -> tuple[dict[str, str], list[str]]:
    """{key: label} of an item's usable concept labels, and why others were refused."""
    concepts: dict[str, str] = {}
    problems: list[str] = []
    for label in labels if isinstance(labels, list) else []:
        if not isinstance(label, str):
            continue
        clean = _clean_label(label)
        if len(clean) > MAX_LABEL_CHARS:
            problems.append(
                f"a concept label of {len(clean):,} characters (limit {MAX_LABEL_CHARS})"
            )
        elif concept_key(clean):
            concepts[concept_key(clean)] = clean
    return concepts, problems


def _item_relations(relations: object, concepts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(source key, verb, target key) of an item's relations between its own concepts."""
    found = []
    for rel in relations if isinstance(relations, list) else []:
        if not isinstance(rel, dict):
            continue
        source = concept_key(_clean_label(str(rel.get("source", ""))))
        target = concept_key(_clean_label(str(rel.get("target", ""))))
        verb = _clean_label(str(rel.get("relation", "related to")))[:MAX_RELATION_CHARS]
        if source in concepts and target in concepts and source != target:
            found.append((source, verb.strip() or "related to", target))
    return found


def _clean_label(text: str) -> str:
    """The text without control, format or surrogate characters, its spaces collapsed."""
    kept = []
    for char in text:
        kind = unicodedata.category(char)
        if kind == "Cc":
            kept.append(" ")
        elif kind not in ("Cf", "Cs"):
            kept.append(char)
    return " ".join("".join(kept).split())
