"""Polarity: which words a statement asserts and which it denies, so that a guard can
tell "no longer uses DuckDB" from "uses DuckDB" without firing on a rewording.

Rules, clause by clause (a clause ends at ``, ; : . ! ? ( )`` and at "but", "although",
"while", "whereas", "however", "because", "unless", "yet"):

- the polarity starts positive and **flips** at a negator ("not", "n't", "no", "never",
  "none", "nobody", "nothing", "neither", "nor", "without", "cannot"), at a verb that
  negates what follows ("stop(ped)", "quit", "cease", "avoid", "refuse", "fail",
  "drop(ped)"), and at "rather than", "instead of";
- a **lexical negative** flips it too and stands for its positive word: "dislikes"
  and "hates" deny "like", "leave" denies "stay", "lacks" denies "have", "forbids"
  and "prohibits" deny "allow", "rejects" and "declines" deny "accept", and so on
  (``_LEXICAL``), so "would rather not have footnotes" and "dislikes footnotes" both
  deny footnotes, and "never leave the EU servers" asserts staying on them;
- every content word (stemmed; function words, filler and auxiliaries left out) takes
  the polarity in force where it stands. "no" or "not" before "more/less/fewer than" is
  a comparator, not a negation (``values.compare``).

Two statements **flip** on a word when both hold it and never with the same polarity
("uses" / "no longer uses"), or when one holds a word and the other the same word with
a negative prefix ("safe" / "unsafe"). A word only one of them holds is not a flip:
"would rather not have footnotes" and "dislikes footnotes" deny different verbs of the
same footnotes, and agree.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..terms import FILLER, FUNCTION_WORDS, stem
from ..text import unmask

__all__ = ["Polarity", "flips", "polarity"]

_TOKENS = re.compile(r"[^\W\d_][\w'’-]*|\d[\d.,]*|[,;:.!?()\[\]]")
_BREAKS = frozenset(",;:.!?()[]") | frozenset(
    "but although though while whereas however because unless yet".split()
)
_NEGATORS = frozenset(
    """not no never none nobody nothing nowhere neither nor without cannot cant dont
    doesnt didnt isnt arent wasnt werent wont wouldnt shouldnt couldnt mustnt hasnt
    havent hadnt neednt""".split()
)
_NEGATING_VERBS = frozenset(
    """stop stops stopped stopping quit quits quitting cease ceases ceased avoid avoids
    avoided avoiding refuse refuses refused refusing fail fails failed failing drop drops
    dropped dropping""".split()
)
#: Lexical negatives (by stem) and the positive word (stem) each denies.
_LEXICAL = {
    **dict.fromkeys(["dislik", "hate", "detest", "loath", "despis"], "like"),
    "leav": "stay",
    **dict.fromkeys(["forbid", "prohibit", "ban", "disallow"], "allow"),
    "lack": "have",
    **dict.fromkeys(["reject", "declin"], "accept"),
    "disagre": "agre",
    "oppos": "support",
    **dict.fromkeys(["distrust", "mistrust"], "trust"),
    "unabl": "abl",
    "absent": "present",
    "exclud": "includ",
}
_COMPARATIVES = frozenset("more less fewer greater later earlier higher lower".split())
_SKIPPED = FUNCTION_WORDS | FILLER | frozenset("to rather longer ever always even".split())
_PREFIXES = ("non-", "non", "dis", "un", "in", "im", "il", "ir")


@dataclass(frozen=True, eq=False)
class Polarity:
    """Each content word's stem and the polarities it is asserted with (True: denied),
    and its spelling (for messages and negative prefixes)."""

    of: dict[str, frozenset[bool]]
    spelled: dict[str, str]

    @functools.cached_property
    def plain(self) -> bool:
        """Whether it denies nothing and spells no word with a negative prefix: two
        such statements cannot flip."""
        denies = any(True in said for said in self.of.values())
        return not denies and not any(_unprefixed(w) for w in self.spelled.values())


@functools.lru_cache(maxsize=16_384)
def polarity(text: str) -> Polarity:
    """The polarity of every content word of ``text`` (see the module docstring)."""
    found: dict[str, set[bool]] = {}
    spelled: dict[str, str] = {}
    tokens = [t.casefold().replace("’", "'") for t in _TOKENS.findall(unmask(text))]
    denied = False
    for index, token in enumerate(tokens):
        if token in _BREAKS:
            denied = False
            continue
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if _flips_here(token, following, tokens[index + 2 : index + 3]):
            denied = not denied
            continue
        if token[0].isdigit() or token in _SKIPPED:
            continue
        word = stem([token])[0]
        if word in _LEXICAL:
            denied = not denied
            word = _LEXICAL[word]
        found.setdefault(word, set()).add(denied)
        spelled.setdefault(word, token)
    return Polarity({w: frozenset(p) for w, p in found.items()}, spelled)


def _flips_here(token: str, following: str, after: list[str]) -> bool:
    """Whether ``token`` flips the polarity of what follows it in its clause."""
    if token in ("no", "not") and following in _COMPARATIVES and after == ["than"]:
        return False  # "no more than 8": a comparator
    if token in _NEGATORS or token.endswith("n't") or token in _NEGATING_VERBS:
        return True
    return (token, following) in (("rather", "than"), ("instead", "of"))


def flips(candidate: str, memory: str) -> list[str]:
    """The words one statement asserts and the other denies (spelled as the candidate
    has them), in the candidate's order."""
    ours, theirs = polarity(candidate), polarity(memory)
    if ours.plain and theirs.plain:
        return []
    found = []
    for word, said in ours.of.items():
        other = theirs.of.get(word)
        if other is None:
            other = _prefixed(word, ours, theirs)
        if other is not None and not (said & other):
            found.append(ours.spelled[word])
    return found


def _prefixed(word: str, ours: Polarity, theirs: Polarity) -> frozenset[bool] | None:
    """The other statement's polarity of ``word`` when one of the two spells it with a
    negative prefix ("unsafe" / "safe"), flipped; None if neither does."""
    spelling = ours.spelled[word]
    for prefix in _PREFIXES:
        if spelling.startswith(prefix) and len(spelling) - len(prefix) >= 3:
            base = stem([spelling[len(prefix) :]])[0]
            if base in theirs.of and base not in ours.of:
                return frozenset(not p for p in theirs.of[base])
    for other, spelled in theirs.spelled.items():
        if other not in ours.of and _unprefixed(spelled) == word:
            return frozenset(not p for p in theirs.of[other])
    return None


@functools.lru_cache(maxsize=16_384)
def _unprefixed(spelled: str) -> str | None:
    """The stem of ``spelled`` without its negative prefix, if it has one."""
    for prefix in _PREFIXES:
        if spelled.startswith(prefix) and len(spelled) - len(prefix) >= 3:
            return str(stem([spelled[len(prefix) :]])[0])
    return None
