"""Typed values: what a statement asserts that a rewording keeps and a correction changes.

The guards of every matcher (``memory.matching``) compare two statements' values, not
their words: a value put in place of another of the same kind is a change of fact; a
word added, a digit written as a word, a name written in another case is not.

What is read (``read_values``), from the unmasked text (``_foundations.text.unmask``: superscript
digits are ``^`` exponents, the Unicode minus is ``-``):

- **numbers**: digits (``1,000``, ``0.05``, ``1.5e6``, ``10^5``, ``2 × 10^3``) and number
  words ("three", "twenty-one", "a hundred", "a dozen"), with their **sign** (``-0.4``,
  ``+0.3``; not the hyphen of ``COVID-19``), a **magnitude** (``10k``, "2 million"), a
  **unit** after them (``values.units``: ``120 ms``, ``5 mW``, ``-20 °C``, "120 milliseconds"
  is ``120 ms``, "5 percent" is ``5%``; a currency sign before them), a **comparator**
  before or after them (``<``, ``≤``, "at least", "more than", "no more than", "up to",
  "under", "or more", ``5+``), and **ranges** (``3-5``, ``3–5``, "3 to 5", "between 3
  and 5").
- **versions**: ``v2``, ``1.2.3``, and a number after "version", "release" or a
  capitalised word (``Python 3.11``), compared part by part (3.10 is not 3.1).
- **ordinals**: ``2nd``, "second" (but "2 seconds" is a unit).
- **dates**: ISO and numeric dates, a month (capitalised, or with a day or a year) with
  its day and year, weekdays ("Mondays"), "today", "tomorrow", "yesterday", quarters
  (``Q3 2024``); **times**: ``3 pm``, ``15:00``, "noon".
- **names**: capitalised words that are not function words, filler, numbers, dates or
  units, compared without case ("Jira" and "jira" are one name). A text without a
  lowercase letter has no names: its case says nothing.
- **labels** (``values.labels``): one-letter words and Roman numerals that say which
  of several things ("Plan B", "option I", "writer a", "phase II"), compared pairwise
  with lookalike letters folded, whatever a function-word list says of "a" or "I".
- **polarity** (``values.polarity``): which words are asserted and which denied.

Two values **agree** when they are of the same family (numbers and versions are one;
ordinals, dates and times are each their own) and the same: equal amounts (``3`` and
"three", ``10^5`` and ``100000``) with the same comparator (``<`` is not ``≤``; none,
``=`` and "about" are one) and the same unit, or none on both sides (``ms`` is not
``s``, ``mW`` is not ``MW``, ``30`` is not ``30 s``; against a text without lowercase
letters a unit's case is unknown). Dates agree when they state the same parts ("March
15" and "15 March"; not "March 15" and "March 15, 2026": a year added). A date said
relative to the day it was said ("tomorrow", "last Friday", "next Monday") is no value
of the fact: it changes only in place of another ("tomorrow" / "yesterday"), never by
being added or left out.

**A value changes** when either statement has a value that no value of the other
agrees with: one put in place of another, and equally one added or left out (a
qualifier of a known kind: "week 3" / "week 3 of May", "Budget approved" / "Budget of
10k approved"). A name changes when each names someone the other does not mention, or
when one names, inside a sentence, a person or place the other does not mention
("in the main hall" / "in the main hall in Berlin"; a capitalised word that opens a
sentence may be any word, so it counts only in place of another). Polarity changes
when a word one asserts the other denies. **Symmetric by construction**: whatever
changes from A to B changes from B to A (``changes`` also reads the pair the other way
round before it answers that nothing changed).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..terms import content_terms, stem
from ..text import unmask
from .labels import label_changes
from .polarity import flips
from .reader import DATES, NAME_WORD, Value, ValueReader

__all__ = ["Value", "Values", "read_values", "replaces", "value_changes"]


@dataclass(frozen=True)
class Values:
    """What one text asserts: its values, its names (casefolded), the stems of its words
    (where a name may be mentioned), and the words inside its values and names."""

    values: tuple[Value, ...]
    names: tuple[str, ...]
    value_words: tuple[str, ...]
    placed: tuple[str, ...] = ()  # names inside a sentence (not opening one)

    @property
    def value_stems(self) -> frozenset[str]:
        """The content terms (``terms``) of the words inside its values and names."""
        return content_terms(" ".join(self.value_words))


_DIGIT = re.compile(r"\d")


@functools.lru_cache(maxsize=16_384)
def read_values(text: str) -> Values:
    """The values and names of ``text`` (see the module docstring); remembered, since a
    memory is the neighbour of many candidates."""
    plain = unmask(text)
    reader = ValueReader(plain, caseless=plain == plain.upper())
    if _DIGIT.search(plain):
        reader.dates()
        reader.times()
        reader.versions()
        reader.numbers()
        reader.ordinals()
    elif DATES.search(plain):
        reader.dates()
    reader.words()
    return Values(
        tuple(v for _, v in sorted(reader.found, key=lambda found: found[0])),
        tuple(reader.names),
        tuple(reader.value_words),
        tuple(reader.placed),
    )


# -- comparing -------------------------------------------------------------------------


def value_changes(candidate: str, memory: str) -> list[str]:
    """What the candidate asserts differently from ``memory`` (``changes``, as a list)."""
    return list(changes(candidate, memory))


@functools.lru_cache(maxsize=16_384)
def changes(candidate: str, memory: str) -> tuple[str, ...]:
    """What the candidate asserts differently from ``memory``: a value of a family put in
    place of another, added or left out (``"number: 32 → 64"``, ``"sign: 0.4 → -0.4"``,
    ``"unit: 120 ms → 120 s"``, ``"date: none → May"``), a name put in place of another,
    added or left out, a label (``values.labels``: ``"label: B → A"``), or a word
    asserted by one and denied by the other. Symmetric: whatever changes from the
    memory to the candidate changes back."""
    found = _one_way(candidate, memory)
    if found:
        return found
    return tuple(_reversed(change) for change in _one_way(memory, candidate))


def _one_way(candidate: str, memory: str) -> tuple[str, ...]:
    ours, theirs = read_values(candidate), read_values(memory)
    changes = []
    for family in ("number", "ordinal", "date", "time"):
        added = _unmatched(ours.values, theirs.values, family)
        dropped = _unmatched(theirs.values, ours.values, family)
        if not (added and dropped):  # a date said relative to its day is only replaced
            added, dropped = (
                [v for v in side if v.kind != "relative"] for side in (added, dropped)
            )
        if added or dropped:
            label = _label(dropped[0], added[0]) if added and dropped else family
            before, after = (", ".join(v.text for v in side) or "none" for side in (dropped, added))
            changes.append(f"{label}: {before} → {after}")
    if names := _name_changes(candidate, memory, ours, theirs):
        changes.append(names)
    changes += label_changes(candidate, memory)
    if flipped := flips(candidate, memory):
        said = ", ".join(repr(w) for w in flipped)
        changes.append(f"negation: {said} asserted on one side, denied on the other")
    return tuple(changes)


def replaces(change: str) -> bool:
    """Whether a change (as ``changes`` words it) puts a value in place of another,
    rather than adding one or leaving one out ("number: 32 → 64", not "date: none →
    May"); a negation is a replacement too."""
    what = change.partition(": ")[2]
    before, arrow, after = what.partition(" → ")
    return not arrow or "none" not in (before, after)


def _reversed(change: str) -> str:
    """A change read the other way ("number: 32 → 64" is "number: 64 → 32")."""
    kind, _, what = change.partition(": ")
    if " → " not in what:
        return change
    before, _, after = what.partition(" → ")
    return f"{kind}: {after} → {before}"


def _name_changes(candidate: str, memory: str, ours: Values, theirs: Values) -> str | None:
    """A name put in place of another, or one named inside a sentence that the other
    statement does not mention (a person or a place added or left out). A capitalised
    word that opens a sentence counts only in place of another: it may be any word."""
    new_names = [n for n in ours.names if not _mentions(memory, n)]
    gone_names = [n for n in theirs.names if not _mentions(candidate, n)]
    swapped = bool(new_names and gone_names)
    placed = any(n in ours.placed for n in new_names) or any(n in theirs.placed for n in gone_names)
    if not (swapped or placed):
        return None
    return f"name: {', '.join(gone_names) or 'none'} → {', '.join(new_names) or 'none'}"


def _mentions(text: str, name: str) -> bool:
    """Whether ``text`` mentions ``name``, in any case."""
    words = _words(text)
    return name in words or stem([name])[0] in words


@functools.lru_cache(maxsize=4_096)
def _words(text: str) -> frozenset[str]:
    """The words of ``text`` as ``NAME_WORD`` finds them, casefolded, and their stems."""
    found = [
        w.casefold().replace("’", "'").removesuffix("'s") for w in NAME_WORD.findall(unmask(text))
    ]
    return frozenset(found) | frozenset(stem(found))


def _unmatched(ours: tuple[Value, ...], theirs: tuple[Value, ...], family: str) -> list[Value]:
    """Our values of ``family`` that no value of theirs agrees with: put in place of
    one of theirs, or added."""
    found = []
    for value in (v for v in ours if v.family == family):
        if not any(_agree(value, w) for w in theirs if w.family == family):
            found.append(value)
    return found


def _agree(a: Value, b: Value) -> bool:
    if a.family == "date":
        return bool(a.amount == b.amount)
    if "version" in (a.kind, b.kind):
        return _as_version(a) == _as_version(b) and _same_comparator(a, b)
    if a.kind != b.kind or a.amount != b.amount:
        return False
    return _same_comparator(a, b) and _same_unit(a, b)


def _as_version(value: Value) -> tuple[str, ...] | None:
    if value.kind == "version":
        return tuple(value.amount)
    if value.kind != "number" or not isinstance(value.amount, Fraction) or value.amount < 0:
        return None
    digits = re.search(r"\d+(?:\.\d+)*", value.text)
    return tuple(str(int(p)) for p in digits.group(0).split(".")) if digits else None


def _same_comparator(a: Value, b: Value) -> bool:
    loose = (None, "=", "≈")
    return a.comparator == b.comparator or (a.comparator in loose and b.comparator in loose)


def _same_unit(a: Value, b: Value) -> bool:
    """The same unit, or none on both sides: a unit added is a qualifier added."""
    if a.unit == b.unit:
        return True
    if a.unit is None or b.unit is None:
        return False
    return (a.caseless or b.caseless) and a.unit.casefold() == b.unit.casefold()


def _label(before: Value, after: Value) -> str:
    """What kind of change: a comparator, a unit or a sign of the same number, or the
    value itself (named by its kind)."""
    if before.kind == after.kind == "number" and before.amount == after.amount:
        return "comparator" if not _same_comparator(before, after) else "unit"
    if before.kind == after.kind == "number" and _opposite(before.amount, after.amount):
        return "sign"
    if "version" in (before.kind, after.kind):
        return "version"
    return before.family if before.family == "date" else before.kind


def _opposite(a: Any, b: Any) -> bool:
    return isinstance(a, Fraction) and isinstance(b, Fraction) and a == -b and a != 0
