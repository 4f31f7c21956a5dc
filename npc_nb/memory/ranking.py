"""Choosing what goes into the memory block when not everything fits, fast enough to run
on every message.

Relevance to the message decides: terms are matched as word prefixes through an
inverted index built on first need, rarer terms weigh more, and a term found in more
than half of the memories is ignored as noise. What is left over goes in priority
order (most specific scope, then newest).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from .block import line_length

__all__ = ["ApprovedSet"]

_WORD = re.compile(r"\w+")


@dataclass
class ApprovedSet:
    """The approved memories one persona may see, in priority order (specific, newest)."""

    rows: list[dict]
    lengths: list[int] = field(init=False)
    _vocabulary: list[str] | None = field(default=None, init=False, repr=False)
    _postings: dict[str, list[int]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.lengths = [line_length(row) for row in self.rows]

    @functools.cached_property
    def versions(self) -> dict[str, str]:
        """{memory id: text hash} of every memory in the set: what may still be resent."""
        return {row["id"]: row["final_hash"] for row in self.rows}

    def select(self, terms: list[str], room: int) -> list[dict]:
        """The highest-priority memories whose lines fit in ``room`` characters."""
        if sum(self.lengths) <= room:
            return list(self.rows)
        if room <= 0:
            return []
        chosen, used, smallest = [], 0, min(self.lengths)
        for position in self._priority(terms):
            cost = self.lengths[position]
            if used + cost <= room:
                chosen.append(self.rows[position])
                used += cost
            elif room - used < smallest:
                break
        return chosen

    def _priority(self, terms: list[str]) -> Iterator[int]:
        scores = self._scores(terms) if terms else {}
        relevant = sorted(scores, key=lambda p: (-scores[p], p))
        rest = (p for p in range(len(self.rows)) if p not in scores)
        return itertools.chain(relevant, rest)

    def _scores(self, terms: list[str]) -> dict[int, float]:
        self._build_index()
        assert self._vocabulary is not None
        total, scores = len(self.rows), dict[int, float]()
        for term in terms:
            matched = self._matching(term)
            if not matched or len(matched) > total / 2:
                continue
            weight = math.log(total / len(matched))
            for position in matched:
                scores[position] = scores.get(position, 0.0) + weight
        return scores

    def _matching(self, term: str) -> set[int]:
        assert self._vocabulary is not None
        start = bisect.bisect_left(self._vocabulary, term)
        matched: set[int] = set()
        for word in self._vocabulary[start:]:
            if not word.startswith(term):
                break
            matched.update(self._postings[word])
        return matched

    def _build_index(self) -> None:
        if self._vocabulary is not None:
            return
        for position, row in enumerate(self.rows):
            for word in set(_WORD.findall(row["norm_text"])):
                self._postings.setdefault(word, []).append(position)
        self._vocabulary = sorted(self._postings)
