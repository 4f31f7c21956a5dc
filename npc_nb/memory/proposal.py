"""What happens to a candidate: queued, merged, suppressed or reinforced.

1. **Exact repeats** are decided first, by normalisation and hash, with no matcher:
   the same text as a rejected memory is suppressed (the tombstone), as an approved one
   reinforces it, as a pending one is merged into its card.
2. Otherwise the **neighbour index** finds the nearest memories the candidate's persona
   could see (pending, approved, rejected), and the **matcher** judges each: same,
   update or different. The guards of ``matching`` turn any "same" on a changed number,
   date, name, label or negation, or on a value added or left out, into "update".
3. The **outcome**: same as a rejected memory, suppressed; as an approved one,
   reinforced; as a pending one, merged. An update of an approved memory is queued as a
   proposed update (approving it supersedes that memory); anything else is queued, with
   what differs from its nearest memory recorded for the card.

The matcher runs outside any write transaction (a model judge must never hold the
DuckDB lock); the write then re-checks, inside its transaction, that no exact repeat
arrived and that the judged memories' statuses did not change meanwhile, and starts
over if they did. It skips that re-read when nothing can have been written since the
reads it repeats (``Store.untouched_since``: the file stayed open in this process and
this process committed nothing), which on DuckDB is the usual case. A matcher that
raises, or answers anything but one valid verdict per neighbour it was asked about (it
gets a list of its own, so changing that list changes nothing), leaves the candidate
queued, the error recorded, nothing lost; a model judge that fails leaves it to the
offline matcher instead (``Matching.fallback``), the failure recorded. Every non-queued
outcome writes a ``reproposals`` row (verdict, score, matcher, the memory it matched).

What matching did is kept with the candidate's row, queued or not (``_Judging``): who
judged, the ids of the neighbours shown (neighbour recall is measured from them), the
model judge's calls and tokens, and how long judging took. The candidate's sentence
vector is computed once, for the dense half of the neighbour lookup, and stored with
its row when it is queued.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from rapidfuzz import fuzz

from .._foundations.ids import new_id
from .._foundations.results import CandidateOutcome
from .._foundations.terms import as_written, content_terms
from .._foundations.text import content_hash, normalise
from .._foundations.utc import utc_now
from ..store import Connection, Store
from ..store.contract import insert_row
from ..store.experiments import experiment_rows
from ..store.memories import events, memory_rows
from .candidates import Candidate, memory_row, proposal_event, reproposal_row
from .lookup.embedding import embed
from .lookup.neighbours import NeighbourIndex
from .matching import JudgeFailed, Judgement, Matcher, Usage, ask_measured, guard

__all__ = ["MATCH_KIND", "Matching", "Repeat", "propose", "repeat_of"]

MATCH_KIND = {
    "human-rejected": "rejected",
    "human-approved": "approved",
    "human-edited": "approved",
    "superseded": "superseded",
    "pending_approval": "pending",
    "deferred": "pending",
}
Outcome = Literal["suppressed", "reinforced", "merged"]
_OUTCOME: dict[str, Outcome] = {
    "rejected": "suppressed",
    "approved": "reinforced",
    "pending": "merged",
}
#: When a candidate is the same as several memories, the strongest outcome wins.
_PRECEDENCE = ("rejected", "approved", "superseded", "pending")
_ATTEMPTS = 3


@dataclass
class Matching:
    """How candidates are matched: the matcher (None: exact repeats only), its name for
    the record, the neighbour indexes, how many neighbours it sees of each store, and
    what judges a candidate when the matcher fails (the model judge's: the offline
    matcher; None: the candidate is queued with the error)."""

    matcher: Matcher | None
    name: str
    index_for: Callable[[Store], NeighbourIndex]
    limit: int = 15
    fallback: Matcher | None = None
    fallback_name: str = "offline"


@dataclass(frozen=True)
class _Read:
    """Where each store stood (``Store.mark``) before the exact-repeat checks and the
    judging read it; a store not listed was not read."""

    marks: dict[int, tuple[int, int]]

    def still_true(self, store: Store) -> bool:
        """Whether what was read of ``store`` still holds (call inside its write)."""
        mark = self.marks.get(id(store))
        return mark is not None and store.untouched_since(mark)


@dataclass
class _Judged:
    store: Store
    row: dict[str, Any]
    judgement: Judgement


@dataclass
class _Judging:
    """What matching did with one candidate: the verdicts, the ids of the neighbours
    shown (None: no lookup, exact repeats only), who judged (None: nobody was asked),
    why a matcher failed, and what judging cost."""

    judged: list[_Judged] = field(default_factory=list)
    shown: list[str] | None = None
    matcher: str | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    ms: float | None = None

    def columns(self) -> dict[str, Any]:
        """What its row records of it (``match_*``)."""
        asked = self.ms is not None
        return {
            "match_neighbours": None if self.shown is None else " ".join(self.shown),
            "match_calls": self.usage.calls if asked or self.usage.calls else None,
            "match_tokens": self.usage.tokens if asked or self.usage.calls else None,
            "match_ms": self.ms,
        }


def propose(
    target: Store, others: list[Store], candidate: Candidate, *, actor: str, matching: Matching
) -> CandidateOutcome:
    """Decide and record what happens to ``candidate`` (see the module docstring).

    ``others`` are the stores whose memories the same readers also see (the user store
    for a project candidate, the project store for a global one). They are checked
    before ``target`` and never while ``target`` is in a transaction, so no process ever
    waits for one store while holding the other.
    """
    # Exact repeats first: no matcher for those. Without a matcher, the target's check is
    # the one ``_queue`` makes inside its transaction anyway.
    checked = [*others, target] if matching.matcher is not None else others
    vector = _vector(candidate, matching)
    for _ in range(_ATTEMPTS):
        read = _Read({id(store): store.mark() for store in checked})  # before the reads
        for store in checked:
            if store.exists and (outcome := _exact_in(store, candidate)) is not None:
                return outcome
        judging = _judge(candidate, [*others, target], matching, vector)
        same = _strongest_same(judging.judged)
        if same is not None:
            outcome = _record_same(same, candidate, judging, read)
        else:
            outcome = _queue(target, candidate, judging, actor, matching, read, vector)
        if outcome is not None:
            return outcome
    # Decisions kept changing the judged memories: queue it; a reviewer sees it.
    outcome = _queue(
        target, candidate, _Judging(), actor, matching, _Read({}), vector, recheck=False
    )
    assert outcome is not None  # without a re-check it is always queued
    return outcome


def _vector(candidate: Candidate, matching: Matching) -> np.ndarray | None:
    """The candidate's sentence vector (the dense neighbour lookup's query, stored with
    its row): computed once, and only when a matcher will judge it."""
    if matching.matcher is None:
        return None
    found = embed([candidate.text])
    return None if found is None else found[0]


# -- exact repeats -----------------------------------------------------------------------


def _exact_in(store: Store, candidate: Candidate) -> CandidateOutcome | None:
    with store.read() as con:
        match = _exact_match(con, candidate)
    if match is None:
        return None
    with store.write() as con:
        store.lock_text(con, content_hash(candidate.text))
        match = _exact_match(con, candidate)  # again, inside the transaction
        return _record(store, con, candidate, match, "exact", 100.0) if match else None


def _exact_match(con: Connection, candidate: Candidate) -> dict | None:
    found = memory_rows.find_by_hash(
        con, content_hash(candidate.text), candidate.npc, candidate.team, candidate.experiment_arm
    )
    if not found:
        return None
    return min(found, key=lambda m: (_PRECEDENCE.index(MATCH_KIND[m["status"]]), m["id"]))


# -- judging -------------------------------------------------------------------------------


def _judge(
    candidate: Candidate, stores: list[Store], matching: Matching, vector: np.ndarray | None
) -> _Judging:
    if matching.matcher is None:
        return _Judging()
    found = _neighbours(candidate, stores, matching, vector)
    shown = [row["id"] for _, row in found]
    if not found:
        return _Judging(shown=shown, matcher=matching.name)  # not called without neighbours
    texts = [row["final_text"] for _, row in found]
    name, error = matching.name, None
    try:
        verdicts, usage, ms = ask_measured(matching.matcher, candidate.text, texts)
    except Exception as exc:  # any matcher, any failure: recorded, and nothing lost
        usage = exc.usage if isinstance(exc, JudgeFailed) else Usage()
        kind = "judge" if isinstance(exc, JudgeFailed) else "matcher"
        detail = str(exc) if isinstance(exc, JudgeFailed) else f"{type(exc).__name__}: {exc}"
        error = f"{matching.name} {kind} failed: {detail}"[:500]
        if matching.fallback is None:
            return _Judging(shown=shown, matcher=name, error=error, usage=usage)
        verdicts, _, ms = ask_measured(matching.fallback, candidate.text, texts)
        name, error = (
            matching.fallback_name,
            f"{error}; judged by the {matching.fallback_name} matcher",
        )
    judged = []
    for (store, row), (verdict, score) in zip(found, verdicts, strict=True):
        verdict, differs = guard(candidate.text, row["final_text"], verdict)
        if not score:  # no score from the matcher: the lexical one
            score = float(fuzz.token_set_ratio(candidate.norm_text, normalise(row["final_text"])))
        judged.append(_Judged(store, row, Judgement(verdict, score, differs)))
    return _Judging(judged, shown, name, error, usage, ms)


def _neighbours(
    candidate: Candidate, stores: list[Store], matching: Matching, vector: np.ndarray | None
) -> list[tuple[Store, dict]]:
    """The nearest memories of each store (``matching.limit`` of each, never fewer of one
    because another has many: a project's tombstone is judged however many memories of
    the user store share its words), by BM25 and, given the candidate's vector, by
    meaning (``NeighbourIndex.nearest``)."""
    terms = candidate.terms
    found = []
    for store in stores:
        if not store.exists:
            continue
        ids = matching.index_for(store).nearest(
            terms, candidate.npc, candidate.team, matching.limit, vector, candidate.experiment_arm
        )
        by_id = {row["id"]: row for row in memory_rows.rows_by_id(store, ids)}
        found += [
            (store, by_id[i]) for i in ids if i in by_id and by_id[i]["status"] != "superseded"
        ]
    return found


def _strongest_same(judged: list[_Judged]) -> _Judged | None:
    same = [j for j in judged if j.judgement.verdict == "same"]
    if not same:
        return None
    return min(
        same,
        key=lambda j: (_PRECEDENCE.index(MATCH_KIND[j.row["status"]]), -j.judgement.score),
    )


# -- recording -----------------------------------------------------------------------------


def _record_same(
    same: _Judged, candidate: Candidate, judging: _Judging, read: _Read
) -> CandidateOutcome | None:
    """Suppress, reinforce or merge, if the matched memory is still as it was judged."""
    with same.store.write() as con:
        same.store.lock_text(con, content_hash(candidate.text))
        current: dict | None = same.row
        if not read.still_true(same.store):
            if _exact_match(con, candidate) is not None:
                return None  # an exact repeat arrived meanwhile: start over
            current = memory_rows.get_memory(same.store, same.row["id"], con)
        if current is None or current["status"] != same.row["status"]:
            return None  # decided meanwhile: judge again
        score = same.judgement.score
        return _record(same.store, con, candidate, current, "near", score, judging)


def _record(
    store: Store,
    con: Connection,
    candidate: Candidate,
    memory: dict,
    match_type: str,
    score: float,
    judging: _Judging | None = None,
) -> CandidateOutcome:
    """A repeat of ``memory`` (exact without ``judging``), and what happened to it."""
    kind = MATCH_KIND[memory["status"]]
    outcome = _OUTCOME.get(kind, "suppressed")
    how: Literal["exact", "near"] = "exact" if match_type == "exact" else "near"
    matcher = judging.matcher if judging is not None else "exact"
    row = reproposal_row(candidate, memory["id"], kind, match_type, score, utc_now())
    judged = (judging or _Judging()).columns() | {"match_error": judging and judging.error}
    insert_row(
        con,
        "reproposals",
        row | {"verdict": "same", "matcher": matcher, "outcome": outcome} | judged,
    )
    if outcome == "merged" and candidate.flags:
        # never lose a warning
        memory_rows.add_flags(store, con, memory["id"], list(candidate.flags))
    if candidate.experiment_item is not None:
        experiment_rows.record_item(con, candidate.experiment_item, outcome, memory["id"])
    return CandidateOutcome(
        outcome,
        memory["id"],
        memory["status"],
        how,
        score,
        candidate.flags,
        verdict="same",
        matcher=matcher,
        error=judging.error if judging is not None else None,
    )


def _queue(
    target: Store,
    candidate: Candidate,
    judging: _Judging,
    actor: str,
    matching: Matching,
    read: _Read,
    vector: np.ndarray | None,
    *,
    recheck: bool = True,
    despite_repeats: bool = False,
) -> CandidateOutcome | None:
    """Insert the candidate as a new card (a proposed update when it updates an approved
    memory), unless something it was judged against changed meanwhile (or, unless
    ``despite_repeats``, an exact repeat arrived)."""
    judged, error = judging.judged, judging.error
    nearest = next((j for j in judged if j.judgement.verdict == "update"), None)
    approved = nearest is not None and MATCH_KIND[nearest.row["status"]] == "approved"
    updates = nearest.row["id"] if nearest and approved else None
    differs = _differs_note(nearest, candidate) if nearest else None
    with target.write() as con:
        # Two kernels proposing the same text at once queue it once: the second waits
        # here for the first to commit, then finds its card as an exact repeat.
        target.lock_text(con, content_hash(candidate.text))
        if not despite_repeats and not read.still_true(target):
            if (match := _exact_match(con, candidate)) is not None:
                return _record(target, con, candidate, match, "exact", 100.0)
            if recheck and _changed(con, target, judged):
                return None
        memory_id, now = new_id(), candidate.recorded_at or utc_now()
        best = judged[0].judgement if judged else None
        verdict = nearest.judgement.verdict if nearest else (best.verdict if best else None)
        row = memory_row(memory_id, candidate, now) | {
            "updates": updates,
            "differs": differs,
            "match_error": error,
            "matcher": judging.matcher,
            "verdict": verdict,
            "match_vector": None if vector is None else vector.astype("<f2").tobytes(),
            **judging.columns(),
        }
        seq = memory_rows.insert_memory(target, con, row)
        seen = (target.connections, target.memory_inserts)
        events.insert_event(con, proposal_event(memory_id, candidate, now, actor))
        if candidate.experiment_item is not None:
            experiment_rows.record_item(con, candidate.experiment_item, "queued", memory_id)
    matching.index_for(target).inserted(seq, row, seen)  # the next lookup need not look
    return CandidateOutcome(
        "queued",
        memory_id,
        flags=candidate.flags,
        similarity=best.score if best else None,
        updates=updates,
        verdict=verdict,
        matcher=judging.matcher if judged or error else None,
        differs=differs,
        error=error,
    )


def _differs_note(judged: _Judged, candidate: Candidate) -> str:
    """What the card shows: which memory the candidate changes, and how."""
    kind = MATCH_KIND[judged.row["status"]]
    what = judged.judgement.differs or _word_changes(candidate.text, judged.row["final_text"])
    return f"differs from {kind} memory {judged.row['id']} ({judged.row['final_text']!r}): {what}"


def _word_changes(candidate: str, memory: str) -> str:
    """The words one says and the other does not, as written there (not their stems)."""
    ours, theirs = content_terms(candidate), content_terms(memory)
    parts = []
    if added := ours - theirs:
        parts.append(f"adds {', '.join(as_written(candidate, sorted(added)))}")
    if dropped := theirs - ours:
        parts.append(f"leaves out {', '.join(as_written(memory, sorted(dropped)))}")
    return "; ".join(parts) or "worded as a change"


def _changed(con: Connection, target: Store, judged: list[_Judged]) -> bool:
    """Whether a judged memory of ``target`` changed status since it was judged."""
    seen = {j.row["id"]: j.row["status"] for j in judged if j.store is target}
    return memory_rows.statuses(con, list(seen)) != seen


# -- a repeat, without proposing ----------------------------------------------------------------


@dataclass(frozen=True)
class Repeat:
    """The memory a text would repeat (``repeat_of``): its id and status, and how it
    was matched (``exact``, or ``near`` with the matcher's score)."""

    memory_id: str
    status: str
    how: Literal["exact", "near"]
    score: float


def repeat_of(
    target: Store, others: list[Store], candidate: Candidate, matching: Matching
) -> Repeat | None:
    """The memory ``propose`` would find ``candidate`` the same as (an exact repeat
    first, then the matcher's strongest "same", guards applied), reading only: nothing
    is recorded. None: it would be queued."""
    for store in [*others, target]:
        if store.exists:
            with store.read() as con:
                match = _exact_match(con, candidate)
            if match is not None:
                return Repeat(match["id"], match["status"], "exact", 100.0)
    judging = _judge(candidate, [*others, target], matching, _vector(candidate, matching))
    same = _strongest_same(judging.judged)
    if same is None:
        return None
    return Repeat(same.row["id"], same.row["status"], "near", same.judgement.score)


def queue_despite_repeats(
    target: Store, candidate: Candidate, *, actor: str, matching: Matching
) -> CandidateOutcome:
    """Queue ``candidate`` as a card of its own whatever it repeats: for a decision that
    conflicts with one already made here (another tool approved what this project
    rejected), which a person must settle. Never used for what a model proposes."""
    outcome = _queue(
        target, candidate, _Judging(), actor, matching, _Read({}),
        _vector(candidate, matching), recheck=False, despite_repeats=True,
    )  # fmt: skip
    assert outcome is not None  # without a re-check it is always queued
    return outcome
