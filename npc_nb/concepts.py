"""Concepts (entities, topics) and their relations, extracted from approved memories.

A model reads a batch of memories and answers JSON (the prompt asks for
``{"memories": [{"id", "concepts", "relations"}]}``); the offline model answers with a
deterministic heuristic (proper names, product names, numbers, and the noun phrases
after determiners and prepositions). Concept names are normalised into keys, so
"DuckDB", "duckdb" and "the DuckDB" are one node.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from .text import normalise

__all__ = [
    "CONCEPT_MARKER",
    "concept_key",
    "concept_messages",
    "offline_concepts",
    "parse_concepts",
]

CONCEPT_MARKER = "[npc_nb concept extraction]"
_RULES = f"""{CONCEPT_MARKER}
For each memory below, list the concepts it names (people, places, datasets, tools,
projects, topics; short noun phrases as written) and the relations between those
concepts (a short verb phrase, from source to target). Use only what the memory says.
Answer with JSON only:
{{"memories": [{{"id": "<id>", "concepts": ["..."],
  "relations": [{{"source": "...", "relation": "...", "target": "..."}}]}}]}}
"""
_LEADS = {
    "the",
    "a",
    "an",
    "our",
    "my",
    "their",
    "your",
    "for",
    "of",
    "to",
    "use",
    "using",
    "with",
    "about",
    "on",
    "in",
    "from",
    "into",
    "via",
    "by",
}
_STOP = frozenset(
    """the a an and or but we i you they it is are was were be been will would should must
    never always not no to of for in on at by with from as that this these those our my
    their your all any some use using used decided agreed prefer prefers like likes
    send check ask drop publish submit open todo about into via has have had do does
    did can could may might due exact also very friday monday tuesday wednesday
    thursday saturday sunday user every each week weekly daily day today tomorrow soon
    now too then there here again only more most less""".split()
)
_WORD = re.compile(r"[A-Za-z0-9][\w'+.-]*[A-Za-z0-9]|[A-Za-z0-9]")


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


def offline_concepts(messages: list[dict[str, Any]]) -> str:
    """The offline model's answer to a concept prompt: deterministic, heuristic."""
    listing = str(messages[-1]["content"])
    answers = []
    for match in re.finditer(r"^- id (\S+): (.*)$", listing, re.MULTILINE):
        concepts = _heuristic_concepts(match.group(2))
        relations = [
            {"source": concepts[0], "relation": "related to", "target": other}
            for other in concepts[1:]
        ]
        answers.append({"id": match.group(1), "concepts": concepts, "relations": relations})
    return json.dumps({"memories": answers})


def _heuristic_concepts(text: str) -> list[str]:
    words = _WORD.findall(unicodedata.normalize("NFKC", text))
    found: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        phrase = []
        if _is_name(word, index):
            while index < len(words) and _is_name(words[index], index):
                phrase.append(words[index])
                index += 1
        elif word.casefold() in _LEADS:
            index += 1
            while index < len(words) and words[index].casefold() in _LEADS:
                index += 1
            while (
                index < len(words)
                and len(phrase) < 2
                and len(words[index]) > 2
                and words[index].casefold() not in _STOP
            ):
                phrase.append(words[index])
                index += 1
        else:
            index += 1
        label = " ".join(phrase)
        if label and concept_key(label) not in {concept_key(f) for f in found}:
            found.append(label)
    return found[:6]


def _is_name(word: str, position: int) -> bool:
    if word.casefold() in _STOP:
        return False
    mixed = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    acronym = word.isupper() and len(word) > 1
    year = word[0].isdigit() and len(word) == 4
    return mixed or acronym or year or (position > 0 and word[0].isupper())


def parse_concepts(raw: str, ids: set[str]) -> dict[str, dict[str, list]]:
    """{memory id: {"concepts": [(key, label)], "relations": [(src, rel, tgt)]}} from a
    model's answer; items for unknown ids or of the wrong shape are left out."""
    data = json.loads(re.sub(r"^```(?:json)?\s*|\s*```$", "", raw.strip(), flags=re.M))
    items = data.get("memories") if isinstance(data, dict) else data
    result: dict[str, dict[str, list]] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or str(item.get("id")) not in ids:
            continue
        labels = [c for c in item.get("concepts") or [] if isinstance(c, str) and c.strip()]
        concepts = {concept_key(c): c.strip() for c in labels if concept_key(c)}
        relations = []
        for rel in item.get("relations") or []:
            if not isinstance(rel, dict):
                continue
            source, target = (
                concept_key(str(rel.get("source", ""))),
                concept_key(str(rel.get("target", ""))),
            )
            verb = " ".join(str(rel.get("relation", "related to")).split())[:60] or "related to"
            if source in concepts and target in concepts and source != target:
                relations.append((source, verb, target))
        result[str(item["id"])] = {"concepts": list(concepts.items()), "relations": relations}
    return result
