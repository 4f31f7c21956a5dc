"""Writing candidates: validate, normalise, check against what was already decided, queue.

A candidate that repeats a rejected memory (same normalised text, or a near repeat above
``near_duplicate_threshold``) is suppressed: that is what makes a rejection a tombstone.
One that repeats an approved or superseded memory is not asked again; one that repeats a
pending memory is merged into it. Every such outcome writes a ``reproposals`` row, so the
re-proposal rate is measurable. The check and the insert share one transaction, so two
kernels proposing the same text at once still queue it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rapidfuzz import fuzz, process

from .._ids import new_id
from .._results import CandidateOutcome
from .._text import content_hash, evidence_occurs_in, instruction_flags, normalise
from .._time import utc_now
from ..errors import CandidateError
from ..store import Connection, Store, events, memory_rows
from ..store._database import insert_row
from ..vocabulary import CATEGORIES, PENDING, SCOPES
from .cache import DecisionCache

__all__ = ["Candidate", "propose", "validate_memory_text"]

_MATCH_KIND = {
    "human-rejected": "rejected",
    "human-approved": "approved",
    "human-edited": "approved",
    "superseded": "superseded",
    "pending_approval": "pending",
    "deferred": "pending",
}
#: When one text matches several memories, the strongest verdict wins.
_PRECEDENCE = ("rejected", "approved", "superseded", "pending")


@dataclass(frozen=True)
class Candidate:
    """A validated proposal, ready to be checked and stored."""

    text: str
    category: str
    scope: str
    npc: str | None
    team: str | None
    project: str
    evidence: str | None
    evidence_verified: bool | None
    source_message_id: str | None
    conversation_id: str | None
    model: str | None
    provider: str | None
    prompt_version: str | None
    confidence: float | None
    flags: tuple[str, ...]

    @property
    def norm_text(self) -> str:
        return normalise(self.text)


def validate_memory_text(text: object, max_chars: int) -> str:
    """The stripped text, or a CandidateError saying what is wrong with it."""
    if not isinstance(text, str):
        raise CandidateError(f"Memory text must be a string, not {type(text).__name__}.")
    stripped = text.strip()
    try:
        stripped.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CandidateError(
            f"Memory text contains characters that are not valid Unicode text ({exc.reason} "
            f"at position {exc.start}); remove them."
        ) from exc
    control = next((c for c in stripped if _is_control(c)), None)
    if control is not None:
        raise CandidateError(
            f"Memory text contains the control character {control!r} at position "
            f"{stripped.index(control)}; remove it (tabs and line breaks are fine)."
        )
    if not normalise(stripped):
        raise CandidateError("Memory text is empty; write the statement to remember.")
    if len(stripped) > max_chars:
        raise CandidateError(
            f"Memory text is {len(stripped):,} characters; the limit is {max_chars:,} "
            "(setting max_memory_chars). Split it into shorter statements."
        )
    return stripped


def _is_control(char: str) -> bool:
    return (char < " " and char not in "\t\n\r") or "\x7f" <= char <= "\x9f"


def check_fields(category: object, scope: object, npc: object, team: object) -> None:
    for name, value in (("npc", npc), ("team", team)):
        if value is not None and not (isinstance(value, str) and value.strip()):
            raise CandidateError(
                f"{name} must be a non-empty name (a string) or None, not {value!r}."
            )
    if category not in CATEGORIES:
        raise CandidateError(f"Unknown category {category!r}; use one of {', '.join(CATEGORIES)}.")
    if scope not in SCOPES:
        raise CandidateError(f"Unknown scope {scope!r}; use one of {', '.join(SCOPES)}.")
    if scope == "npc" and not npc:
        raise CandidateError("An npc-scoped memory needs npc=<persona name>.")
    if scope == "team" and not team:
        raise CandidateError("A team-scoped memory needs team=<team name>.")


def check_confidence(confidence: object) -> float | None:
    if confidence is None:
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise CandidateError(f"confidence must be a number from 0 to 1, not {confidence!r}.")
    if not 0 <= confidence <= 1:
        raise CandidateError(f"confidence must be from 0 to 1, not {confidence}.")
    return float(confidence)


#: (memory id, its status, how it matched, similarity 0-100)
Match = tuple[str, str, Literal["exact", "near"], float]


def propose(
    target: Store,
    others: list[Store],
    candidate: Candidate,
    *,
    threshold: float,
    actor: str,
    cache: DecisionCache,
) -> CandidateOutcome:
    """Queue, merge or suppress a candidate in ``target``, recording what happened.

    ``others`` are the stores whose memories the same readers also see (the user store
    for a project candidate, the project store for a global one): a tombstone there
    suppresses the candidate too. They are checked first and never while ``target`` is
    in a transaction, so no process ever waits for one store while holding the other.
    """
    for store in others:
        with store.read() as con:
            match = _match(store, con, candidate, threshold, cache)
        if match is not None:
            with store.write() as con:
                return _record_match(store, con, candidate, match)
    with target.write() as con:
        match = _match(target, con, candidate, threshold, cache)
        if match is not None:
            return _record_match(target, con, candidate, match)
        memory_id, now = new_id(), utc_now()
        memory_rows.insert_memory(con, _memory_row(memory_id, candidate, now))
        events.insert_event(con, _proposal_event(memory_id, candidate, now, actor))
    return CandidateOutcome("queued", memory_id, flags=candidate.flags)


def _match(
    store: Store, con: Connection, candidate: Candidate, threshold: float, cache: DecisionCache
) -> Match | None:
    return _exact_match(store, con, candidate) or _near_rejected(
        cache.rejected(store, candidate.npc, candidate.team), candidate, threshold
    )


def _record_match(
    store: Store, con: Connection, candidate: Candidate, match: Match
) -> CandidateOutcome:
    memory_id, status, match_type, similarity = match
    insert_row(con, "reproposals", _reproposal(candidate, match, utc_now()))
    merged = _MATCH_KIND[status] == "pending"
    if merged and candidate.flags:
        memory_rows.add_flags(con, memory_id, list(candidate.flags))  # a warning is never lost
    return CandidateOutcome(
        "merged" if merged else "suppressed",
        memory_id,
        status,
        match_type,
        similarity,
        candidate.flags,
    )


def _exact_match(store: Store, con: Connection, candidate: Candidate) -> Match | None:
    found = memory_rows.find_by_hash(
        con, content_hash(candidate.text), candidate.npc, candidate.team
    )
    if not found:
        return None
    best = min(found, key=lambda m: (_PRECEDENCE.index(_MATCH_KIND[m["status"]]), m["id"]))
    return best["id"], best["status"], "exact", 100.0


def _near_rejected(
    rejected: dict[str, str], candidate: Candidate, threshold: float
) -> Match | None:
    """The most similar rejected memory at or above ``threshold``, if any.

    Only rejections: a near repeat of an approved memory may be a changed fact ("budget
    is 20k" after "budget is 10k") and must reach a reviewer. Plain Indel similarity on
    normalised text, not a token-sorted one: "coffee over tea" must not match "tea over
    coffee".
    """
    if not rejected:
        return None
    best = process.extractOne(
        candidate.norm_text, rejected, scorer=fuzz.ratio, score_cutoff=threshold
    )
    if best is None:
        return None
    _, score, memory_id = best
    return memory_id, "human-rejected", "near", float(score)


def _memory_row(memory_id: str, c: Candidate, now: Any) -> dict[str, Any]:
    digest = content_hash(c.text)
    return {
        "id": memory_id,
        "initial_text": c.text,
        "final_text": c.text,
        "initial_hash": digest,
        "final_hash": digest,
        "norm_text": c.norm_text,
        "category": c.category,
        "status": PENDING,
        "scope": c.scope,
        "npc": c.npc,
        "team": c.team,
        "project": c.project,
        "conversation_id": c.conversation_id,
        "source_message_id": c.source_message_id,
        "evidence": c.evidence,
        "evidence_verified": c.evidence_verified,
        "extractor_model": c.model,
        "provider": c.provider,
        "prompt_version": c.prompt_version,
        "flags": list(c.flags),
        "confidence": c.confidence,
        "recorded_at": now,
    }


def _proposal_event(memory_id: str, c: Candidate, now: Any, actor: str) -> dict[str, Any]:
    return {
        "memory_id": memory_id,
        "occurred_at": now,
        "actor": f"model:{c.model}" if c.model else actor,
        "action": "propose",
        "from_status": None,
        "to_status": PENDING,
        "text_before": None,
        "text_after": c.text,
        "lead_time_ms": 0,
    }


def _reproposal(c: Candidate, match: tuple[str, str, str, float], now: Any) -> dict[str, Any]:
    memory_id, status, match_type, similarity = match
    return {
        "id": new_id(),
        "recorded_at": now,
        "memory_id": memory_id,
        "match_kind": _MATCH_KIND[status],
        "match_type": match_type,
        "similarity": similarity,
        "proposed_text": c.text,
        "category": c.category,
        "scope": c.scope,
        "npc": c.npc,
        "team": c.team,
        "conversation_id": c.conversation_id,
        "source_message_id": c.source_message_id,
        "extractor_model": c.model,
        "provider": c.provider,
        "prompt_version": c.prompt_version,
    }


def build_candidate(
    fields: dict[str, Any], *, source_text: str | None, max_chars: int
) -> Candidate:
    """Validate raw fields into a Candidate; raises CandidateError and writes nothing."""
    text = validate_memory_text(fields["text"], max_chars)
    check_fields(fields["category"], fields["scope"], fields["npc"], fields["team"])
    confidence = check_confidence(fields.get("confidence"))
    evidence = fields.get("evidence")
    verified = None
    if evidence is not None and source_text is not None:
        verified = evidence_occurs_in(evidence, source_text)
    flags = instruction_flags(text)
    if verified is False:
        flags.append("evidence-not-in-source")
    return Candidate(
        text=text,
        category=fields["category"],
        scope=fields["scope"],
        npc=fields["npc"],
        team=fields["team"],
        project=fields["project"],
        evidence=evidence,
        evidence_verified=verified,
        source_message_id=fields.get("source_message_id"),
        conversation_id=fields.get("conversation_id"),
        model=fields.get("model"),
        provider=fields.get("provider"),
        prompt_version=fields.get("prompt_version"),
        confidence=confidence,
        flags=tuple(flags),
    )
