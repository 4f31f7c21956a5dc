"""Same fact or not: the matcher protocol, the offline matcher, and the guards.

After exact repeats (caught by normalisation and hash), a **matcher** judges a candidate
against its nearest memories: ``matcher(candidate_text, neighbour_texts)`` returns one
verdict per neighbour, ``"same"``, ``"update"`` or ``"different"``, optionally as
``(verdict, score)`` with a score from 0 to 100.

**Guards** apply to every matcher, custom ones included: a candidate that differs from
a memory in what it asserts (a number, date, version or name put in place of another,
or a negation on one side only) is never "same" as it; such a verdict becomes
"update". A tombstone must never swallow a correction ("batch size 64" after "32" was
rejected).

The **offline matcher** has no model to explain a paraphrase away, so it says "same"
only when the candidate asserts nothing the memory does not: every content word of the
candidate (stemmed, filler and function words left out) occurs in the memory, in the
same order, and no guard fires. It says "update" when the two share their subject but an assertion
differs, and "different" otherwise. It is precise by construction and modest in recall:
rewordings that use other words reach the reviewer (see docs/matching.md for figures).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from rapidfuzz import fuzz

from .._foundations.terms import (
    DATE_WORDS,
    FUNCTION_WORDS,
    NEGATIONS,
    NUMBER,
    NUMBER_WORDS,
    WORD,
    as_written,
    content_sequence,
    content_terms,
    stem,
    words,
)
from .._foundations.text import normalise
from ..errors import ConfigError
from .embedding import similarities

__all__ = [
    "VERDICTS",
    "Judgement",
    "Matcher",
    "Verdict",
    "ask",
    "assertion_differences",
    "content_terms",
    "guard",
    "offline_matcher",
    "read_verdicts",
    "resolve_matcher",
]

Verdict = Literal["same", "update", "different"]
#: Words that make the order of what they join carry meaning.
_ORDERING_WORDS = frozenset("over than instead rather before after from versus vs against".split())
#: Embedding cosine at which the offline matcher lets one differing word be a rewording.
MEANING_SAME = 0.8
VERDICTS: tuple[Verdict, ...] = ("same", "update", "different")
#: The protocol: candidate text and neighbour texts in, one verdict (or verdict and
#: score) per neighbour out.
Matcher = Callable[[str, list[str]], Sequence[Any]]


@dataclass(frozen=True)
class Judgement:
    """One neighbour's verdict, its score (0-100) and, when guarded, what differs."""

    verdict: Verdict
    score: float
    differs: str | None = None


def ask(
    matcher: Matcher, candidate: str, neighbours: Sequence[str]
) -> list[tuple[Verdict, float | None]]:
    """Ask ``matcher`` about ``neighbours`` and check its answer against what was asked.

    The matcher gets a list of its own: what it does to it (pop, append, clear) changes
    neither what it was asked nor anyone else's view of the neighbours. Its answer must
    be one valid verdict per neighbour asked; anything else is a ValueError, which the
    caller records as the matcher's fault.
    """
    asked = len(neighbours)
    return read_verdicts(matcher(candidate, list(neighbours)), asked)


def read_verdicts(raw: Sequence[Any], expected: int) -> list[tuple[Verdict, float | None]]:
    """A matcher's answer as (verdict, score) pairs; ValueError if it is malformed.

    The answer is read once, into a list of its own, and that list is counted: a
    sequence whose length says one thing and whose items another is malformed too."""
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        raise ValueError(f"a matcher must return a list, not {type(raw).__name__}")
    items = list(raw)
    if len(items) != expected:
        raise ValueError(f"a matcher returned {len(items)} verdicts for {expected} neighbours")
    return [_one_verdict(item) for item in items]


def _one_verdict(item: Any) -> tuple[Verdict, float | None]:
    verdict, score = item, None
    if isinstance(item, tuple | list):
        if len(item) != 2:
            raise ValueError(f"a verdict with a score is (verdict, score), not {item!r}")
        verdict, score = item
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; use one of {', '.join(VERDICTS)}")
    if score is not None:
        number = isinstance(score, int | float) and not isinstance(score, bool)
        if not number or not 0 <= score <= 100:
            raise ValueError(f"a score is a number from 0 to 100, not {score!r}")
        score = float(score)
    return cast(Verdict, verdict), score


def _names(text: str) -> frozenset[str]:
    """Capitalised words and acronyms: the names a text mentions. A capitalised first
    word counts too (a name often starts the sentence); a common word taken for a name
    only makes a "same" verdict less likely, never more."""
    found = set()
    for word in WORD.findall(text):
        lower = word.casefold().removesuffix("'s").removesuffix("’s")  # Melanie's: Melanie
        if lower in FUNCTION_WORDS or lower in DATE_WORDS or lower in NUMBER_WORDS:
            continue
        if word[:1].isupper():
            found.add(lower)
    return frozenset(found)


@functools.lru_cache(maxsize=4_096)
def _assertions(text: str) -> dict[str, frozenset[str]]:
    """The numbers, dates, names and negations ``text`` asserts, remembered: a candidate
    is compared with each of its neighbours, and the same memories are neighbours of
    many candidates. (A dict of frozensets, read only.)"""
    found_words = words(text)
    return {
        "number": frozenset(w for w in found_words if NUMBER.match(w) or w in NUMBER_WORDS),
        "date": frozenset(w for w in found_words if w in DATE_WORDS),
        "name": _names(text),
        "negation": frozenset(w for w in found_words if w in NEGATIONS),
    }


def assertion_differences(candidate: str, memory: str) -> list[str]:
    """What the candidate asserts differently from ``memory``: a number, date or name
    put in place of another (``"number: 32 → 64"``), or a negation on one side only.

    Leaving a detail out is not a difference ("Budget approved" after "Budget of 10k
    approved"); replacing it is.
    """
    ours, theirs = _assertions(candidate), _assertions(memory)
    found = []
    for kind in ("number", "date", "name"):
        added, dropped = ours[kind] - theirs[kind], theirs[kind] - ours[kind]
        if added and dropped:
            found.append(f"{kind}: {', '.join(sorted(dropped))} → {', '.join(sorted(added))}")
    if ours["negation"] != theirs["negation"]:
        said = ", ".join(sorted(ours["negation"] ^ theirs["negation"]))
        found.append(f"negation: {said!r} on one side only")
    return found


def guard(candidate: str, memory: str, verdict: Verdict) -> tuple[Verdict, str | None]:
    """Any matcher's verdict after the guards: "same" on a changed assertion is "update"."""
    differs = assertion_differences(candidate, memory)
    if verdict == "same" and differs:
        return "update", "; ".join(differs)
    return verdict, "; ".join(differs) or None


# -- the offline matcher ---------------------------------------------------------------


def _in_order(candidate: str, memory: str) -> bool:
    """Whether the words the two share keep their order where order carries meaning:
    "tea over coffee" is not "coffee over tea", and "from Paris to Lyon" is not "from
    Lyon to Paris"; but "an adoption council meeting" is "a council meeting for
    adoption"."""
    ordering = set(words(candidate) + words(memory)) & _ORDERING_WORDS
    if not ordering:
        return True
    theirs = content_sequence(memory)
    shared = [term for term in dict.fromkeys(content_sequence(candidate)) if term in theirs]
    remaining = iter(theirs)
    return all(term in remaining for term in shared)


def offline_judgement(
    candidate: str,
    memory: str,
    meaning: float | None = None,
    meaning_same: float = MEANING_SAME,
) -> Judgement:
    """The offline matcher's verdict on one neighbour (guards applied).

    ``meaning`` is the two sentences' embedding cosine, if an embedding is installed:
    it may explain one differing content word away (at ``meaning_same`` or above).
    """
    judgement, rewording = _lexical_judgement(candidate, memory)
    return _explained(judgement, rewording, meaning, meaning_same)


def _lexical_judgement(candidate: str, memory: str) -> tuple[Judgement, bool]:
    """The offline verdict without the embedding, and whether the embedding may still
    turn it into "same" (the candidate is the memory but for one word, which a
    rewording explains): only then is the meaning worth computing."""
    ours, theirs = content_terms(candidate), content_terms(memory)
    score = float(fuzz.token_set_ratio(normalise(candidate), normalise(memory)))
    differs = assertion_differences(candidate, memory)
    unexplained = ours - theirs
    rewording = False
    if differs:
        # An update changes a value of the same statement: apart from the numbers, dates
        # and names, the two say the same words (two at most differ). Approving an update
        # supersedes the memory, so a statement that merely shares a topic is "different".
        ours_core = ours - _assertion_terms(candidate)
        theirs_core = theirs - _assertion_terms(memory)
        same_statement = bool(ours_core & theirs_core) and len(ours_core ^ theirs_core) <= 2
        verdict: Verdict = "update" if same_statement else "different"
        return Judgement(verdict, score, "; ".join(differs)), False
    if ours and _in_order(candidate, memory):
        if not unexplained:
            return Judgement("same", score), False
        # One word of the candidate may be a rewording of a longer memory ("speaks at
        # her school" for "gave a talk at a school event"). One word swapped in an
        # otherwise identical statement is a changed value ("goes to review" / "goes to
        # copy-editing"): that is never the same fact.
        swapped = len(theirs - ours) <= 1
        rewording = len(unexplained) <= 1 and not swapped
    if theirs < ours and len(ours & theirs) >= 2:
        added = ", ".join(as_written(candidate, sorted(unexplained)))
        return Judgement("update", score, f"adds: {added}"), rewording
    return Judgement("different", score), rewording


def _explained(
    judgement: Judgement, rewording: bool, meaning: float | None, meaning_same: float
) -> Judgement:
    """A lexical judgement, made "same" when a rewording's meaning is close enough."""
    if rewording and meaning is not None and meaning >= meaning_same:
        return Judgement("same", max(judgement.score, round(100 * meaning, 1)))
    return judgement


def _assertion_terms(text: str) -> frozenset[str]:
    found = _assertions(text)
    return frozenset(stem(sorted(found["number"] | found["date"] | found["name"])))


def offline_matcher(
    candidate: str, neighbours: list[str], *, meaning_same: float = MEANING_SAME
) -> list[tuple[Verdict, float]]:
    """The default matcher: lexical and precise, with an offline embedding to explain
    one differing word away (see the module docstring). Only the neighbours the
    embedding may judge "same" are embedded (usually none): a candidate's embedding
    costs about as much as the rest of its judging."""
    lexical = [_lexical_judgement(candidate, text) for text in neighbours]
    open_to_meaning = [i for i, (_, rewording) in enumerate(lexical) if rewording]
    meanings: dict[int, float] = {}
    if open_to_meaning:
        found = similarities(candidate, [neighbours[i] for i in open_to_meaning])
        meanings = dict(zip(open_to_meaning, found or (), strict=False))
    judged = [
        _explained(judgement, rewording, meanings.get(i), meaning_same)
        for i, (judgement, rewording) in enumerate(lexical)
    ]
    return [(j.verdict, j.score) for j in judged]


def resolve_matcher(
    settings: Any, model_judge: Callable[[str], Matcher] | None
) -> tuple[Matcher | None, str]:
    """The matcher the ``matcher`` setting names, and its name for the record.

    ``"offline"`` (the default), ``"model"`` (a judge through litellm: ``match_model``,
    else ``model``, else the offline model's deterministic stand-in), ``"module:attr"``
    (a callable loaded from an importable module), a callable itself, or None / "none"
    (exact repeats only).
    """
    chosen = settings.matcher
    if chosen is None or chosen in ("none", "exact"):
        return None, "exact"
    if callable(chosen):
        return chosen, getattr(chosen, "__name__", type(chosen).__name__)
    if chosen == "offline":
        threshold = settings.near_duplicate_threshold / 100
        return functools.partial(offline_matcher, meaning_same=threshold), "offline"
    if chosen == "model":
        if model_judge is None:
            raise ConfigError("matcher='model' needs the model gateway; open a project.")
        model = settings.match_model or settings.model or "npc_nb/offline"
        return model_judge(model), f"model:{model}"
    if isinstance(chosen, str) and ":" in chosen:
        return _load_matcher(chosen), chosen
    raise ConfigError(
        f"Unknown matcher {chosen!r}: use 'offline', 'model', 'package.module:attr', a "
        "callable, or None for exact repeats only."
    )


def _load_matcher(path: str) -> Matcher:
    module_name, _, attribute = path.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"Cannot load the matcher {path!r}: {exc}.") from exc
    if not callable(found):
        raise ConfigError(f"The matcher {path!r} is not callable.")
    return cast(Matcher, found)
