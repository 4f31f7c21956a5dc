"""Same fact or not: the matcher protocol, the offline matcher, and the guards.

After exact repeats (caught by normalisation and hash), a **matcher** judges a candidate
against its nearest memories: ``matcher(candidate_text, neighbour_texts)`` returns one
verdict per neighbour, ``"same"``, ``"update"`` or ``"different"``, optionally as
``(verdict, score)`` with a score from 0 to 100.

**Guards** apply to every matcher, custom ones included: a candidate that changes,
adds or leaves out a value of the memory is never "same" as it; such a verdict becomes
"update". The guards compare typed values (``_foundations.values``), not words:
another number, sign, comparator, unit, exponent, date, time, version, name or
one-letter label ("Plan B" / "Plan A", "option I" / "option a"), a value of a known kind
added or left out ("week 3" / "week 3 of May"), or a word the memory asserts and the
candidate denies. They are symmetric: A → B is asked exactly when B → A is. A rewording
passes ("three" and "3", "Jira" and "jira", "dislikes" and "would rather not have",
"Plan Β" with a Greek Beta and "Plan B"), so a judge that knows a paraphrase is not
overridden; a tombstone never swallows a correction ("batch size 64" after "32" was
rejected, "-0.4" after "0.4", "5 MW" after "5 mW", "drive A" after "drive B").

The **offline matcher** has no model to explain a paraphrase away, so it says "same"
only when the candidate asserts nothing the memory does not: every content word of the
candidate (stemmed, filler and function words left out) occurs in the memory, in the
same order, and no guard fires. It says "update" when the two share their subject but an assertion
differs (a value only added or left out: in an otherwise identical statement), and
"different" otherwise. It is precise by construction and modest in recall:
rewordings that use other words reach the reviewer (see docs/matching.md for figures).

**Which matcher** (``resolve_matcher``): ``"auto"``, the default, is the model judge
(``models.judge``) when a provider model is configured (``match_model``, else ``model``;
the offline demo model is none) and the offline matcher otherwise. A model judge that
fails (no key, a timeout, an answer that is not one verdict per neighbour) leaves its
candidate to the offline matcher, the failure recorded (``Matching.fallback``). A
matcher may report what a judgement cost (``measured``: calls and tokens, ``Usage``);
the time it took is measured for every matcher.
"""

from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from rapidfuzz import fuzz

from .._foundations.settings import OFFLINE_MODEL
from .._foundations.terms import (
    as_written,
    content_sequence,
    content_terms,
    words,
)
from .._foundations.text import normalise
from .._foundations.values import read_values, replaces, transliterated, value_changes
from ..errors import ConfigError, InvalidValueError
from .lookup.embedding import similarities

__all__ = [
    "VERDICTS",
    "JudgeFailed",
    "Judgement",
    "Matcher",
    "Usage",
    "Verdict",
    "ask",
    "ask_measured",
    "assertion_differences",
    "content_terms",
    "guard",
    "offline_for",
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


@dataclass(frozen=True)
class Usage:
    """What a judgement cost beyond time: model calls made and tokens spent."""

    calls: int = 0
    tokens: int = 0


class JudgeFailed(Exception):
    """A model judge's failure, with what it had spent before failing."""

    def __init__(self, message: str, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


def ask_measured(
    matcher: Matcher, candidate: str, neighbours: Sequence[str]
) -> tuple[list[tuple[Verdict, float | None]], Usage, float]:
    """``ask``, with what the judgement cost: a matcher with a ``measured`` method (the
    model judge) reports its calls and tokens; the milliseconds are measured here."""
    started = time.perf_counter()
    measured = getattr(matcher, "measured", None)
    if callable(measured):
        raw, usage = measured(candidate, list(neighbours))
    else:
        raw, usage = matcher(candidate, list(neighbours)), Usage()
    verdicts = read_verdicts(raw, len(neighbours))
    return verdicts, usage, (time.perf_counter() - started) * 1000


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


def assertion_differences(candidate: str, memory: str) -> list[str]:
    """What the candidate asserts differently from ``memory``: a value put in place of
    another of its kind (``"number: 32 → 64"``, ``"sign: 0.4 → -0.4"``), another name
    or label (``"label: B → A"``), or a word asserted by one and denied by the other
    (``_foundations.values``).

    Leaving a value out is a difference exactly as adding one ("Budget approved" after
    "Budget of 10k approved": ``"number: 10k → none"``), and the pair read the other
    way round differs too.
    """
    return value_changes(candidate, memory)


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
    rewording explains): only then is the meaning worth computing. A lone Greek or
    Cyrillic letter reads as the Latin letter it looks like, or as the one it stands for
    ("Ρ": P or R): "same" if either reading is."""
    judged = _lexical(candidate, memory)
    if judged[0].verdict == "same" or (candidate.isascii() and memory.isascii()):
        return judged
    other = _lexical(transliterated(candidate), transliterated(memory))
    return other if other[0].verdict == "same" else judged


def _lexical(candidate: str, memory: str) -> tuple[Judgement, bool]:
    ours, theirs = content_terms(candidate), content_terms(memory)
    score = float(fuzz.token_set_ratio(normalise(candidate), normalise(memory)))
    differs = assertion_differences(candidate, memory)
    unexplained = ours - theirs
    rewording = False
    if differs:
        verdict: Verdict = "update" if _same_statement(candidate, memory, differs) else "different"
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


def _same_statement(candidate: str, memory: str, differs: list[str]) -> bool:
    """Whether a change of value is an update of the same statement. Apart from the
    values, names and labels, the two say the same words: two at most differ when a
    value is put in place of another ("batch size 64" / "32"), none when one is only
    added or left out ("week 3" / "week 3 of May"; but "meets in room 4" is no update
    of "meets on Mondays"). Approving an update supersedes the memory, so a statement
    that merely shares a topic is "different"."""
    ours = content_terms(candidate) - _assertion_terms(candidate)
    theirs = content_terms(memory) - _assertion_terms(memory)
    allowed = 2 if any(replaces(change) for change in differs) else 0
    return bool(ours & theirs) and len(ours ^ theirs) <= allowed


def _explained(
    judgement: Judgement, rewording: bool, meaning: float | None, meaning_same: float
) -> Judgement:
    """A lexical judgement, made "same" when a rewording's meaning is close enough."""
    if rewording and meaning is not None and meaning >= meaning_same:
        return Judgement("same", max(judgement.score, round(100 * meaning, 1)))
    return judgement


def _assertion_terms(text: str) -> frozenset[str]:
    """The content terms inside the values and names ``text`` states."""
    return read_values(text).value_stems


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

    ``"auto"`` (the default: the model judge when a provider model is configured, else
    the offline matcher), ``"offline"``, ``"model"`` (a judge through litellm:
    ``match_model``, else ``model``, else the offline model's deterministic stand-in),
    ``"module:attr"`` (a callable loaded from an importable module), a callable itself,
    or None / "none" (exact repeats only).
    """
    chosen = settings.matcher
    if chosen is None or chosen in ("none", "exact"):
        return None, "exact"
    if callable(chosen):
        return chosen, getattr(chosen, "__name__", type(chosen).__name__)
    if chosen == "auto":
        provider_model = settings.match_model or settings.model
        if provider_model in (None, OFFLINE_MODEL) or model_judge is None:
            chosen = "offline"
        else:
            return model_judge(provider_model), f"model:{provider_model}"
    if chosen == "offline":
        return offline_for(settings), "offline"
    if chosen == "model":
        if model_judge is None:
            raise ConfigError("matcher='model' needs the model gateway; open a project.")
        model = settings.match_model or settings.model or "npc_nb/offline"
        return model_judge(model), f"model:{model}"
    if isinstance(chosen, str) and ":" in chosen:
        return _load_matcher(chosen), chosen
    raise InvalidValueError(
        "matcher",
        chosen,
        "'auto', 'offline', 'model', 'package.module:attr', a callable, or None for exact "
        "repeats only",
        lead=f"Unknown matcher {chosen!r}",
    )


def offline_for(settings: Any) -> Matcher:
    """The offline matcher with the settings' threshold: the default without a provider
    model, and what judges a candidate whose model judge failed."""
    threshold = settings.near_duplicate_threshold / 100
    return functools.partial(offline_matcher, meaning_same=threshold)


def _load_matcher(path: str) -> Matcher:
    module_name, _, attribute = path.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"Cannot load the matcher {path!r}: {exc}.") from exc
    if not callable(found):
        raise ConfigError(f"The matcher {path!r} is not callable.")
    return cast(Matcher, found)
