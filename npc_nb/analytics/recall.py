"""Neighbour recall: whether the matcher is shown the memory a candidate repeats.

A matcher can only call a candidate the same fact as a memory it is shown. For each
candidate whose neighbours were looked up (the store keeps the ids shown,
``match_neighbours``), and for which a memory of the same fact was there to be found
(recorded before it, visible to its persona, not superseded yet), recall asks whether
one of the neighbours shown states that fact:

    neighbour_recall = candidates shown a memory of their fact
                       / candidates with a memory of their fact to be found

Which statements state the same fact is not in the store: it comes from labels
(``labels``: a DataFrame with ``text`` and ``fact``, and optionally ``npc`` when one
wording is another persona's other fact), matched on the normalised text. Candidates
and memories without a label are left out; exact repeats never reach a matcher and are
not counted. Without labels, or with none to be found, the recall is NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._foundations.text import normalise
from ..store.memories.predicates import visible_to

__all__ = ["neighbour_recall"]


def neighbour_recall(
    candidates: pd.DataFrame,
    memories: pd.DataFrame,
    labels: pd.DataFrame | Mapping[str, str],
    by: Sequence[str],
) -> pd.DataFrame:
    """Per group of ``by``: ``recall_n`` (candidates with a memory of their fact to be
    found), ``recall_found`` (of those, shown one) and ``neighbour_recall``."""
    fact_of = _facts(labels)
    memory_facts: dict[str, set[str]] = {
        row.id: {
            fact
            for text in (row.initial_text, row.final_text)
            if (fact := _fact(fact_of, row.npc, text)) is not None
        }
        for row in memories.itertuples()
    }
    by_fact: dict[str, list[Any]] = {}
    for row in memories.itertuples():
        for fact in memory_facts[row.id]:
            by_fact.setdefault(fact, []).append(row)
    rows = []
    for candidate in candidates.itertuples():
        findable, found = _judge_one(candidate, fact_of, by_fact, memory_facts)
        if findable:
            rows.append({**{d: getattr(candidate, d) for d in by}, "found": found})
    frame = pd.DataFrame(rows, columns=[*by, "found"])
    if by:
        grouped = frame.groupby(list(by), dropna=False)["found"]
        result = grouped.agg(recall_n="count", recall_found="sum").reset_index()
    else:
        result = pd.DataFrame(
            {"recall_n": [len(frame)], "recall_found": [int(frame["found"].sum())]}
        )
    result["recall_n"] = result["recall_n"].astype("int64")
    result["recall_found"] = result["recall_found"].astype("int64")
    n = result["recall_n"].where(result["recall_n"] > 0, np.nan)
    result["neighbour_recall"] = (result["recall_found"] / n).astype("float64")
    return result


def _judge_one(
    candidate: Any, fact_of: dict, by_fact: dict[str, list[Any]], memory_facts: dict
) -> tuple[bool, bool]:
    """(whether a memory of the candidate's fact was there to be found, whether one
    was shown)."""
    fact = _fact(fact_of, candidate.npc, candidate.text)
    if fact is None:
        return False, False
    at = candidate.recorded_at
    there = [
        m
        for m in by_fact.get(fact, ())
        if m.id != candidate.id
        and m.recorded_at < at
        and (pd.isna(m.superseded_at) or m.superseded_at > at)
        and visible_to(
            {"scope": m.scope, "npc": m.npc, "team": m.team}, candidate.npc, _na(candidate.team)
        )
    ]
    if not there:
        return False, False
    shown = str(candidate.match_neighbours or "").split()
    return True, any(fact in memory_facts.get(memory_id, ()) for memory_id in shown)


def _facts(labels: pd.DataFrame | Mapping[str, str]) -> dict[tuple[str | None, str], str]:
    """{(persona or None, normalised text): fact} from the labels."""
    if isinstance(labels, Mapping):
        return {(None, normalise(text)): str(fact) for text, fact in labels.items()}
    npcs = labels["npc"] if "npc" in labels.columns else [None] * len(labels)
    return {
        (_na(npc), normalise(text)): str(fact)
        for text, fact, npc in zip(labels["text"], labels["fact"], npcs, strict=True)
    }


def _fact(fact_of: dict, npc: Any, text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    key = normalise(text)
    return fact_of.get((_na(npc), key)) or fact_of.get((None, key))


def _na(value: Any) -> Any:
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else value
