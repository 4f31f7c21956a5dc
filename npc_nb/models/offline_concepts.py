"""The offline model's concepts: a deterministic heuristic, no model, no network.

It answers the knowledge graph's concept prompt (marked with ``CONCEPT_MARKER``) with
the JSON a real model would give: proper names, product names, numbers, and the noun
phrases after determiners and prepositions, each memory's first concept related to the
others. A demo and test stand-in, labelled as such wherever the offline model appears.

A concept is a thing a memory is about, so three kinds of phrase are not concepts:
after a bare "to" comes a verb ("to store", "to name": the infinitive marker, not the
preposition, which takes a determiner or a name); a lone noun followed by "of" is a
relational head whose thing is its complement ("the name of each site" is about the
site); and a phrase identified with a name ("my name is Ada", "our store is DuckDB")
is a role of that name, which is the concept.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from .._foundations.text import normalise

__all__ = ["offline_concepts"]

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
_DETERMINERS = {"each", "every", "its", "his", "her", "this", "these", "those"}
_LEADS |= _DETERMINERS
_COPULAS = {"is", "are", "was", "were"}
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
        elif _infinitive(words, index):
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
            if _relational_head(phrase, words, index) or _role_of_a_name(words, index):
                phrase = []
        else:
            index += 1
        label = " ".join(phrase)
        if label and _key(label) not in {_key(f) for f in found}:
            found.append(label)
    return found[:6]


def _infinitive(words: list[str], index: int) -> bool:
    """A bare "to" before a word that is not a name or another lead: "to store"."""
    if words[index].casefold() != "to" or index + 1 >= len(words):
        return False
    following = words[index + 1]
    return following.casefold() not in _LEADS and not _is_name(following, index + 1)


def _relational_head(phrase: list[str], words: list[str], end: int) -> bool:
    """A lone noun before "of" ("the name of", "the end of"): its complement is the thing."""
    return len(phrase) == 1 and end < len(words) and words[end].casefold() == "of"


def _role_of_a_name(words: list[str], end: int) -> bool:
    """A phrase identified with a name ("my name is Ada"): the name is the concept."""
    return (
        end + 1 < len(words)
        and words[end].casefold() in _COPULAS
        and _is_name(words[end + 1], end + 1)
    )


def _is_name(word: str, position: int) -> bool:
    if word.casefold() in _STOP:
        return False
    mixed = any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)
    acronym = word.isupper() and len(word) > 1
    year = word[0].isdigit() and len(word) == 4
    return mixed or acronym or year or (position > 0 and word[0].isupper())


def _key(label: str) -> str:
    return normalise(label).removeprefix("the ").removeprefix("a ").removeprefix("an ")
