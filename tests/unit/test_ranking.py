"""What goes into the memory block when not everything fits: the kept-current approved set
chooses exactly what a plain computation from scratch chooses, through any decisions."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from npc_nb.memory.block import render_line
from npc_nb.memory.ranking import ApprovedSet, priority_key

WORDS = ["duckdb", "survey", "ringing", "station", "vienna", "graz", "nest", "logger", "data"]
START = datetime(2026, 1, 1)


def memory(number: int, words: list[str], scope: int, minutes: int) -> dict:
    text = " ".join(words) or "nothing"
    return {
        "id": f"m{number:04d}",
        "final_text": text,
        "norm_text": text,
        "final_hash": f"h{number}",
        "scope": ("npc", "team", "project", "global")[scope],
        "scope_rank": scope,
        "category": "fact",
        "decided_at": START + timedelta(minutes=minutes),
    }


def chosen_from_scratch(rows: list[dict], terms: list[str], room: int) -> list[str]:
    """The selection written out plainly: score by the rarer terms matched (as word
    prefixes; a term in more than half the memories counts for nothing), best first,
    ties in priority order, taken greedily while lines fit."""
    lines = {row["id"]: len(render_line(row)) for row in rows}
    if sum(lines.values()) <= room:
        return [row["id"] for row in sorted(rows, key=priority_key)]
    words = {row["id"]: set(row["norm_text"].split()) for row in rows}
    score = dict.fromkeys(words, 0.0)
    for term in terms:
        matched = [i for i, ws in words.items() if any(w.startswith(term) for w in ws)]
        if matched and len(matched) <= len(rows) / 2:
            for memory_id in matched:
                score[memory_id] += math.log(len(rows) / len(matched))
    ordered = sorted(rows, key=lambda row: (-score[row["id"]], priority_key(row)))
    chosen, used = [], 0
    for row in ordered:
        if used + lines[row["id"]] <= room:
            chosen.append(row["id"])
            used += lines[row["id"]]
    return chosen


memories = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), max_size=4),
        st.integers(0, 3),
        st.integers(0, 50),  # minutes: ties in time are common, ids break them
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150)
@given(
    first=memories,
    changes=st.lists(st.tuples(st.integers(0, 60), st.booleans()), max_size=12),
    query=st.lists(st.sampled_from([*WORDS, "sta", "du", "zzz"]), max_size=4),
    room=st.integers(0, 250),
)
def test_the_kept_set_chooses_what_a_plain_computation_chooses(
    first: list[tuple], changes: list[tuple[int, bool]], query: list[str], room: int
) -> None:
    rows = {f"m{n:04d}": memory(n, *spec) for n, spec in enumerate(first)}
    kept = ApprovedSet(dict(row) for row in rows.values())
    kept.select(query, room)  # build the word index, then keep it through decisions
    for number, approved in changes:  # a decision approves (again) or removes a memory
        memory_id = f"m{number:04d}"
        if approved:
            words, scope, minutes = WORDS[number % 9 : number % 9 + 2], number % 4, number
            rows[memory_id] = memory(number, words, scope, minutes)
        else:
            rows.pop(memory_id, None)
        current = [dict(rows[memory_id])] if memory_id in rows else []
        kept.apply([memory_id], current)
    if not rows:
        assert kept.select(query, room) == []
        return
    chosen = [row["id"] for row in kept.select(query, room)]
    assert chosen == chosen_from_scratch(list(rows.values()), query, room)
