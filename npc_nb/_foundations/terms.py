"""Content terms: the words that carry what a statement asserts, as stems.

Function words ("the", "of"), filler that changes nothing a memory asserts ("Note:",
"as discussed", "a lot") and negations are left out; a number word is its digits
("three" is "3"); the rest is stemmed with the English Snowball stemmer, so "attends"
and "attended" are one term. The neighbour index stores these terms with every memory,
and the offline matcher compares them.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable
from typing import Any

from .text import normalise

__all__ = [
    "DATE_WORDS",
    "FILLER",
    "FUNCTION_WORDS",
    "NEGATIONS",
    "NUMBER",
    "NUMBER_WORDS",
    "WORD",
    "as_written",
    "content_sequence",
    "content_terms",
    "joined_terms",
    "split_terms",
    "stem",
    "words",
]

WORD = re.compile(r"[^\W_](?:[\w'’.+-]*[^\W_])?")
NUMBER = re.compile(r"^(v?\d[\d.,:/-]*(k|m|bn|st|nd|rd|th|%)?)$")
FUNCTION_WORDS = frozenset(
    """a an the and or but nor of to in on at by for with from as into onto about over
    under after before during while than then so such very really just also too quite
    is are was were be been being am has have had do does did done this that these those
    it its it's he she they them her his their our we you your i me my mine us him hers
    theirs ours there here which who whom whose what when where why how all both each
    every some any many much more most other others own same can could would should will
    shall may might must s t get gets got getting make makes made one ones""".split()
)
#: Words that change nothing a memory asserts ("Note: ...", "..., as discussed.").
_FILLER = frozenset(
    """note noted notes reminder remember fyi btw discussed discussing mentioned mention
    said says told tell recall recalled recap summary update basically actually again
    still currently recently already indeed okay ok lot lots bit pretty truly
    definitely certainly generally usually typically""".split()
)
NEGATIONS = frozenset(
    """not no never none nobody nothing neither nor without cannot can't won't don't
    doesn't didn't isn't aren't wasn't weren't shouldn't mustn't hasn't haven't hadn't
    longer stopped stop quit dropped""".split()
)
NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen
    fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty
    seventy eighty ninety hundred thousand million billion half twice first second third
    fourth fifth""".split()
)
#: Words that name a date; vague spans ("week", "month") are left out, so "last week"
#: and "a weekend" are not taken for two different dates.
DATE_WORDS = frozenset(
    """january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday
    thursday friday saturday sunday today tomorrow yesterday q1 q2 q3 q4""".split()
)


FILLER = _FILLER
_NOT_CONTENT = FUNCTION_WORDS | _FILLER | NEGATIONS
#: Number words as the digits a statement may write instead ("one" is a function word).
_DIGITS = {
    word: str(value)
    for value, word in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if word != "_"
} | {
    w: str(10 * i)
    for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 3)
}
_DIGITS["dozen"] = "12"


_local = threading.local()


def _stemmer() -> Any:
    """This thread's stemmer: a Snowball stemmer keeps its work in the object, so two
    threads stemming with one (the extraction worker and the kernel) corrupt each other."""
    found = getattr(_local, "stemmer", None)
    if found is None:
        import snowballstemmer  # pure Python, on first use

        found = _local.stemmer = snowballstemmer.stemmer("english")
    return found


def stem(words_: list[str]) -> list[str]:
    return [_stem(word) for word in words_]


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    """One word's stem, remembered: the vocabulary is small, stemming is pure Python."""
    return str(_stemmer().stemWord(word))


def words(text: str) -> list[str]:
    """The words of ``text``, normalised (case, width, disguises folded)."""
    return WORD.findall(normalise(text).casefold().replace("’", "'"))


@functools.lru_cache(maxsize=4_096)
def content_terms(text: str) -> frozenset[str]:
    """The stems of the words that carry what ``text`` asserts (no function words, no
    filler, no negation); what the neighbour index stores for a memory."""
    return frozenset(content_sequence(text))


def joined_terms(terms: Iterable[str]) -> str | None:
    """Terms as a memory row stores them (``match_text``): sorted, space-separated (a
    term never holds a space: it is a ``WORD``), None for none. Text, not a list:
    DuckDB writes a list column's whole block to its log on every insert into an
    indexed table, a hundred times the row."""
    return " ".join(sorted(terms)) or None


def split_terms(text: str | None) -> list[str]:
    """The terms of a stored ``match_text`` (``joined_terms`` undone)."""
    return text.split(" ") if text else []


@functools.lru_cache(maxsize=4_096)
def content_sequence(text: str) -> tuple[str, ...]:
    """The content stems of ``text`` in the order they occur."""
    kept = [_DIGITS.get(w, w) for w in words(text) if w not in _NOT_CONTENT]
    return tuple(stem(kept))


def as_written(text: str, terms: Iterable[str]) -> list[str]:
    """Each of ``terms`` as the word of ``text`` it stands for, as written there: a
    stem ("analysi") as the word stemmed to it ("analysis"), a folded word ("duckdb")
    as written ("DuckDB"). A term no word of ``text`` gives is kept as it is."""
    as_word: dict[str, str] = {}
    as_stem: dict[str, str] = {}
    for word in WORD.findall(text):
        for folded in words(word):
            as_word.setdefault(folded, word)
        for term in content_sequence(word):
            as_stem.setdefault(term, word)
    return [as_word.get(term) or as_stem.get(term) or term for term in terms]
