"""Candidates: validate what is proposed, and build the rows that record it.

A ``Candidate`` is a validated proposal (text, category, scope, provenance, flags for
instruction-like text, whether its evidence occurs in its source). What then happens to
it (queued, merged, suppressed, reinforced) is ``proposal``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._foundations.ids import new_id
from .._foundations.terms import content_terms, joined_terms
from .._foundations.text import content_hash, evidence_occurs_in, instruction_flags, normalise
from ..errors import CandidateError, InvalidValueError
from ..vocabulary import CATEGORIES, PENDING, SCOPES

__all__ = [
    "Candidate",
    "build_candidate",
    "memory_row",
    "proposal_event",
    "reproposal_row",
    "validate_memory_text",
]


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
    #: When the source recorded it (an import keeps another tool's time); None: now.
    recorded_at: datetime | None = None
    #: The experiment arm that extracted it (None: live memory). Its memory is matched
    #: only against that arm's and reaches no prompt (``predicates``).
    experiment_arm: str | None = None
    #: (arm, exchange message, item of the answer): recorded with its row in the same
    #: transaction, so a resumed run never proposes it twice.
    experiment_item: tuple[str, str, int] | None = None

    @property
    def norm_text(self) -> str:
        return normalise(self.text)

    @property
    def terms(self) -> frozenset[str]:
        """The content terms the neighbour index finds it by (``matching.content_terms``)."""
        return content_terms(self.text)


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
        raise InvalidValueError("category", category, CATEGORIES)
    if scope not in SCOPES:
        raise InvalidValueError("scope", scope, SCOPES)
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


def memory_row(memory_id: str, c: Candidate, now: Any) -> dict[str, Any]:
    """The new memory row of a queued candidate (content terms included, for the index)."""
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
        "match_text": joined_terms(c.terms),
        "experiment_arm": c.experiment_arm,
    }


def proposal_event(memory_id: str, c: Candidate, now: Any, actor: str) -> dict[str, Any]:
    """The audit event that records a candidate's proposal."""
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


def reproposal_row(
    c: Candidate, memory_id: str, kind: str, match_type: str, similarity: float, now: Any
) -> dict[str, Any]:
    """The ``reproposals`` row of a candidate that repeated memory ``memory_id``."""
    return {
        "id": new_id(),
        "recorded_at": now,
        "memory_id": memory_id,
        "match_kind": kind,
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
        "evidence": c.evidence,
        "flags": list(c.flags),
        "confidence": c.confidence,
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
        recorded_at=_recorded_at(fields.get("recorded_at")),
        experiment_arm=fields.get("experiment_arm"),
        experiment_item=fields.get("experiment_item"),
    )


def _recorded_at(value: object) -> datetime | None:
    """A source's own time for a candidate (naive UTC), or None."""
    if value is None:
        return None
    if not isinstance(value, datetime) or value.tzinfo is not None:
        raise CandidateError(f"recorded_at must be a naive UTC datetime, not {value!r}.")
    return value
