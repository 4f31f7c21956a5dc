"""Labels: one-letter words and Roman numerals that say which of several things a
statement means ("Plan B", "freezer A", "option I", "writer a", "phase II", "p < 0.05"),
compared between two statements.

A one-letter word is a function word in one place ("a plan", "I think") and a label in
another ("option a", "option I"), and a function-word list cannot tell which. So labels
are compared **pairwise**: the two statements' words are aligned (``difflib``, on a
fixed order of the pair, so that A → B and B → A are judged alike), and

- a one-letter word or a Roman numeral put in place of another ("Plan B" / "Plan A",
  "option I" / "option a", "writer a" / "writer b") is a change, whatever either
  letter is elsewhere;
- a label that one statement has and the other lacks is a change (added or removed
  alike). A word reads as a label when it is a Roman numeral of two letters or more
  ("II", "iv"), or a single letter, except an "a" before a word (an article: "a plan",
  "A plan"; an upper-case "A" inside a sentence is a label: "Plan A is approved") and
  an "I" that is not after a content word or is before one (a pronoun: "I think",
  "Then I went"; "option I is chosen" is a label).

A letter glued to a digit ("H2O", "5x") or right after a number (a unit: "120 s") is
no label, and a dotted abbreviation ("e.g.", "a.m.") is one word. Letters are compared
without case and after lookalikes are folded: the text's own (``text.unmask``: Greek
and Cyrillic lookalikes in Latin text), and any lone letter whose confusable prototype
(Unicode's confusables data) is one ASCII letter, so "Plan Β" (a Greek Beta) and "Plan
Ᏼ" (a Cherokee letter) are "plan b". A lone Greek or Cyrillic letter is also the
letter it is transliterated as: the Greek capital Rho "Ρ" looks like "P" and stands for
"R", and is the same label as either.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from dataclasses import dataclass

from ..terms import FILLER, FUNCTION_WORDS
from ..text import unmask

__all__ = ["is_numeral", "label_changes", "transliterated"]

_TOKENS = re.compile(
    r"(?P<abbr>(?:[^\W\d_]\.){2,})|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)*)"
    r"|(?P<number>\d[\d.,]*)|(?P<stop>[.,;:!?()\[\]])"
)
_ROMAN = re.compile(r"M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})")
_LOWER_ROMAN = re.compile(r"x{0,3}(?:ix|iv|v?i{0,3})")
_NOT_CONTENT = FUNCTION_WORDS | FILLER
_SENTENCE_ENDS = frozenset(".!?:;")


def is_numeral(spelled: str) -> bool:
    """Whether an upper-case word is a Roman numeral ("II", "IV"): a label, not a name."""
    return bool(_ROMAN.fullmatch(spelled))


@dataclass(frozen=True)
class _Word:
    """One word of a statement as compared: folded, and whether it is a label or a
    single letter (or numeral) that may be one."""

    text: str
    spelled: str
    letter: bool  # a single letter or a Roman numeral
    label: bool


def label_changes(candidate: str, memory: str) -> list[str]:
    """The labels the candidate puts in place of the memory's, adds or leaves out, read
    from the memory to the candidate like every other value: ``"label: B → A"`` (the
    memory says B, the candidate A), ``"label: none → B"`` (the candidate adds B) (see
    the module docstring)."""
    found = _ordered(memory, candidate)
    foreign = not (candidate.isascii() and memory.isascii())
    # A lone Greek or Cyrillic letter is also the Latin letter it stands for ("Ρ", Rho,
    # is R; it looks like P): read as either, it is that label.
    if found and foreign and not _ordered(transliterated(candidate), transliterated(memory)):
        return []
    return found


def _ordered(before: str, after: str) -> list[str]:
    """The label changes from ``before`` to ``after``, computed in one fixed order of the
    pair (so that both directions are judged alike)."""
    if before <= after:
        return list(_changes(before, after))
    return [_reversed(change) for change in _changes(after, before)]


#: The Latin letter a Greek or Cyrillic letter is transliterated as, by its Unicode name.
_TRANSLITERATION = {
    "ALPHA": "a", "BETA": "b", "GAMMA": "g", "DELTA": "d", "EPSILON": "e", "ZETA": "z",
    "ETA": "h", "IOTA": "i", "KAPPA": "k", "LAMDA": "l", "MU": "m", "NU": "n", "XI": "x",
    "OMICRON": "o", "PI": "p", "RHO": "r", "SIGMA": "s", "TAU": "t", "UPSILON": "y",
    "PHI": "f", "CHI": "x", "OMEGA": "o",
    "A": "a", "BE": "b", "VE": "v", "GHE": "g", "DE": "d", "IE": "e", "ZE": "z", "I": "i",
    "KA": "k", "EL": "l", "EM": "m", "EN": "n", "O": "o", "PE": "p", "ER": "r", "ES": "s",
    "TE": "t", "U": "u", "EF": "f", "HA": "h",
}  # fmt: skip
_LONE_LETTER = re.compile(r"(?<!\w)[^\W\d_](?!\w)")


@functools.lru_cache(maxsize=4_096)
def transliterated(text: str) -> str:
    """``text`` with each lone Greek or Cyrillic letter written as its Latin letter."""
    return _LONE_LETTER.sub(_latin, text)


def _latin(match: re.Match[str]) -> str:
    letter = match.group(0)
    if letter.isascii():
        return letter
    script, _, name = unicodedata.name(letter, "").partition(" LETTER ")
    latin = _TRANSLITERATION.get(name) if script.startswith(("GREEK", "CYRILLIC")) else None
    if latin is None:
        return letter
    return latin.upper() if letter.isupper() else latin


def _reversed(change: str) -> str:
    kind, _, what = change.partition(": ")
    before, _, after = what.partition(" → ")
    return f"{kind}: {after} → {before}"


@functools.lru_cache(maxsize=16_384)
def _changes(one: str, other: str) -> tuple[str, ...]:
    ours, theirs = _words(one), _words(other)
    if _letters(ours) == _letters(theirs):
        return ()  # the same letters in the same order, read alike: nothing to align
    keys = ([w.text for w in ours], [w.text for w in theirs])
    found: list[str] = []
    swapped: set[int] = set()
    opcodes = difflib.SequenceMatcher(None, *keys, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "replace":
            continue
        before = [w for w in ours[i1:i2] if w.letter]
        after = [w for w in theirs[j1:j2] if w.letter]
        if before and after and {w.text for w in before} != {w.text for w in after}:
            found.append(f"label: {_spelled(before)} → {_spelled(after)}")
            swapped |= {id(w) for w in before + after}
    dropped = _lacking(ours, theirs, swapped)
    added = _lacking(theirs, ours, swapped)
    if dropped or added:
        found.append(f"label: {_spelled(dropped) or 'none'} → {_spelled(added) or 'none'}")
    return tuple(found)


def _letters(words: tuple[_Word, ...]) -> list[tuple[str, bool]]:
    return [(w.text, w.label) for w in words if w.letter]


def _lacking(ours: tuple[_Word, ...], theirs: tuple[_Word, ...], swapped: set[int]) -> list[_Word]:
    """Our labels that the other statement does not have as a label anywhere (labels
    already reported as swapped aside)."""
    present = {w.text for w in theirs if w.label}
    return [w for w in ours if w.label and id(w) not in swapped and w.text not in present]


def _spelled(words: list[_Word]) -> str:
    return ", ".join(dict.fromkeys(w.spelled for w in words))


@functools.lru_cache(maxsize=16_384)
def _words(text: str) -> tuple[_Word, ...]:
    """The words and numbers of ``text``, each marked a label or not."""
    plain = unmask(text)
    caseless = plain == plain.upper()
    tokens = list(_TOKENS.finditer(plain))
    words = []
    for index, token in enumerate(tokens):
        if token.lastgroup == "stop":
            continue
        spelled = token.group(0)
        shape = _fold(spelled)  # a lone lookalike as its letter, in its case
        letter = token.lastgroup == "word" and _letterlike(shape, caseless, plain, token)
        label = letter and _label(shape, shape.casefold(), caseless, tokens, index)
        words.append(_Word(shape.casefold(), spelled, letter, label))
    return tuple(words)


def _letterlike(spelled: str, caseless: bool, plain: str, token: re.Match[str]) -> bool:
    """A single letter or a Roman numeral, not glued to a digit or after a number."""
    before = plain[max(0, token.start() - 4) : token.start()].rstrip(" ")
    if before[-1:].isdigit() or plain[token.end() : token.end() + 1].isdigit():
        return False  # "H2O", "5x", a unit: "120 s"
    if len(spelled) == 1:
        return True
    if spelled.isupper() and not caseless:
        return bool(_ROMAN.fullmatch(spelled))
    return spelled.islower() and bool(_LOWER_ROMAN.fullmatch(spelled))


def _label(
    spelled: str, folded: str, caseless: bool, tokens: list[re.Match[str]], index: int
) -> bool:
    """Whether a letter reads as a label where it stands (see the module docstring)."""
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    before = tokens[index - 1] if index > 0 else None
    word_after = after is not None and after.lastgroup in ("word", "abbr")
    if folded == "a":
        inside = before is not None and before.group(0) not in _SENTENCE_ENDS
        capital_label = spelled == "A" and not caseless and inside
        return capital_label or not word_after
    if folded == "i":
        after_content = _content(before)
        return after_content and not (word_after and _content(after))
    return True


def _content(token: re.Match[str] | None) -> bool:
    return (
        token is not None
        and token.lastgroup == "word"
        and token.group(0).casefold() not in _NOT_CONTENT
    )


@functools.lru_cache(maxsize=1_024)
def _fold(spelled: str) -> str:
    """A lone letter of any script as the ASCII letter it looks like (Unicode's
    confusables data), if it has exactly one; other words as they are."""
    if len(spelled) != 1 or spelled.isascii():
        return spelled
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(spelled, preferred_aliases=["latin"])
    glyphs = found[0]["homoglyphs"] if isinstance(found, list) else []
    prototypes = {h["c"] for h in glyphs if len(h["c"]) == 1 and h["c"].isascii()}
    prototypes = {c for c in prototypes if c.isalpha()}
    return prototypes.pop() if len(prototypes) == 1 else spelled
