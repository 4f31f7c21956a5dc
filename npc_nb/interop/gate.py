"""The gate every imported record goes through: the same as an extracted candidate's.

For each record, in file order:

1. A record whose key (its id in the source) was imported before is counted and left
   alone: importing the same file again imports nothing new.
2. It is proposed like any candidate (``MemoryCore.add_candidate``), with the
   source's own time: text checks (control characters, invalid Unicode, length) refuse
   it alone, as skipped at its position; the matcher merges a repeat of a pending
   card, suppresses a repeat of a rejected memory (the tombstone holds) and reinforces
   an approved one. Only a queued record goes on. An approval the source recorded for
   a text this project rejected is not proposed that way: it is a conflict, queued as
   a pending card of its own with the reason (the rejection stands), listed as held.
3. An approval the source recorded is taken only for a text that passes the same
   checks (``holds``): a proposed text flagged as instruction-like, or an edited final
   text refused by the text checks, flagged, or covered by one of this project's
   tombstones, leaves the card pending, listed as held with the reason. Otherwise the
   decision the source recorded (npcpy's ``human-approved``, ``human-edited``,
   ``human-rejected``) is applied by the review engine, audited with actor
   ``imported:<source>`` at the decision time given (the file's), with a reason saying
   the original reviewer is unknown. With ``trust=True`` (mem0, Letta) a queued record
   is approved, audited under the importing person's name with a reason saying it was
   a trusted import; an instruction-like (flagged) one is left for review, as
   ``approve_all`` leaves it, and listed as held.
4. The record is written to ``imported_records``: the memory it became or matched, the
   outcome, the source file and time, and its provenance.

A record the gate refuses is reported, never raised: one bad record loses nothing else.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .._foundations.results import CandidateOutcome
from .._foundations.utc import utc_now
from ..errors import NpcError
from ..memory import decisions, transitions
from ..memory.core import MemoryCore
from ..memory.proposal import Repeat
from ..store.memories.imported_rows import already_imported, record_import
from ..vocabulary import APPROVED, EDITED, PENDING, REJECTED
from .holds import Hold, approval_hold, approved_text, hold, tombstone_reason
from .records import ForeignRecord
from .summary import ImportSummary, Progress, Skipped

__all__ = ["UNKNOWN_REVIEWER", "Gate"]

#: The reason an imported decision's audit event gives.
UNKNOWN_REVIEWER = (
    "imported from {source}: decided in {source}, which records no reviewer and no "
    "decision time; the original reviewer is unknown (time: the file's)"
)
_TRUSTED = (
    "imported from {source} with trust=True: approved without review of each memory, "
    "by the person who ran the import"
)
_DECIDED = {"approve": "approved", "edit": "edited", "reject": "rejected"}
#: The status a record imported with each outcome has.
STATUS_OF = {"queued": PENDING, "approved": APPROVED, "edited": EDITED, "rejected": REJECTED}


@dataclasses.dataclass(frozen=True)
class Batch:
    """One file's records and how to treat them."""

    source: str
    file: Path
    records: Sequence[ForeignRecord | Skipped]
    decided_at: datetime
    trust: bool = False


class Gate:
    """Imports records through the memory core (see the module docstring)."""

    def __init__(self, core: MemoryCore) -> None:
        self.core = core

    def run(self, batch: Batch, summary: ImportSummary) -> ImportSummary:
        store = self.core.stores.project
        keys = [r.key for r in batch.records if isinstance(r, ForeignRecord)]
        seen = already_imported(store, batch.source, keys)
        importer = self.core.actor(None)
        progress = Progress(len(batch.records), f"importing {batch.file.name}")
        try:
            for record in batch.records:
                summary.read += 1
                if isinstance(record, Skipped):
                    summary.skipped.append(record)
                elif record.key in seen:
                    summary.already_imported += 1
                else:
                    seen.add(record.key)
                    self._one(batch, record, importer, summary)
                progress.step()
        finally:
            progress.close()
        return summary

    def _one(
        self, batch: Batch, record: ForeignRecord, importer: str, summary: ImportSummary
    ) -> None:
        fields = {
            "category": record.category,
            "scope": record.scope,
            "npc": record.npc,
            "team": record.team,
        }
        try:
            if (conflict := self._conflict(batch, record, fields)) is not None:
                self._held_conflict(batch, record, conflict, fields, importer, summary)
                return
            outcome = self.core.add_candidate(
                record.text,
                **fields,
                model=record.model,
                provider=record.provider,
                recorded_at=_not_after(record.source_time, utc_now()),
            )
        except NpcError as exc:
            summary.skipped.append(Skipped(record.position, str(exc)))
            return
        result: str = outcome.action
        if outcome.queued:
            try:
                result = self._decide(batch, record, outcome, importer, summary)
            except NpcError as exc:  # the candidate stays queued for review
                summary.warnings.append(f"{record.position}: queued, not decided: {exc}")
        elif outcome.action == "suppressed" and record.decision in ("approve", "edit"):
            repeat = Repeat(
                outcome.memory_id, REJECTED, outcome.match_type or "exact",
                outcome.similarity or 100.0,
            )  # fmt: skip
            reason = Hold(tombstone_reason(self.core, repeat, batch.source), flag=False)
            hold(self.core, summary, record, outcome.memory_id, reason)
        _count(summary, result)
        self._record(batch, record, outcome.memory_id, result, importer)

    def _conflict(self, batch: Batch, record: ForeignRecord, fields: dict) -> Repeat | None:
        """The rejected memory an approval the source recorded repeats (None: none)."""
        if record.decision not in ("approve", "edit"):
            return None
        _, repeat = self.core.screen(record.text, **fields)
        return repeat if repeat is not None and repeat.status == REJECTED else None

    def _held_conflict(
        self,
        batch: Batch,
        record: ForeignRecord,
        conflict: Repeat,
        fields: dict,
        importer: str,
        summary: ImportSummary,
    ) -> None:
        """An approval of what this project rejected: a pending card of its own, flagged
        with the reason, for a person to settle; the rejection stands meanwhile."""
        outcome = self.core.add_conflicting(
            record.text,
            **fields,
            model=record.model,
            provider=record.provider,
            recorded_at=_not_after(record.source_time, utc_now()),
        )
        reason = Hold(tombstone_reason(self.core, conflict, batch.source, approved_text(record)))
        hold(self.core, summary, record, outcome.memory_id, reason)
        _count(summary, "queued")
        self._record(batch, record, outcome.memory_id, "queued", importer)

    def _decide(
        self,
        batch: Batch,
        record: ForeignRecord,
        outcome: CandidateOutcome,
        importer: str,
        summary: ImportSummary,
    ) -> str:
        """Apply the source's decision (or trust's approval) to a queued record; the
        outcome to record. In independent review a source's decision is nobody's vote
        here: the record stays queued for the reviewers' votes."""
        if record.decision is not None and self.core.votes.independent:
            summary.warnings.append(
                f"{record.position}: decided in {batch.source}, queued for the votes of "
                "independent review (a source's decision is nobody's vote here)"
            )
            return "queued"
        held = approval_hold(self.core, record, outcome, batch.source)
        if held is not None:
            hold(self.core, summary, record, outcome.memory_id, held)
            return "queued"
        if record.decision is not None:
            source = f"imported:{batch.source}"
            at = max(batch.decided_at, record.source_time or batch.decided_at)
            reason = UNKNOWN_REVIEWER.format(source=batch.source)
            decision = record.decision
            text = approved_text(record)
            if decision == "edit" and text is None:
                decision = "approve"
            self._apply(outcome.memory_id, decision, source, at, reason, text)
            return _DECIDED[decision]
        if batch.trust:
            if outcome.flags:
                summary.warnings.append(
                    f"{record.position}: reads like an instruction ({', '.join(outcome.flags)}); "
                    "left for review, not trusted"
                )
                reason = f"reads like an instruction ({', '.join(outcome.flags)}); not trusted"
                hold(self.core, summary, record, outcome.memory_id, Hold(reason, flag=False))
                return "queued"
            reason = _TRUSTED.format(source=batch.source)
            self._apply(outcome.memory_id, "approve", importer, utc_now(), reason, None)
            return "approved"
        return "queued"

    def _apply(
        self, memory_id: str, decision: str, actor: str, at: datetime, reason: str, text: str | None
    ) -> None:
        store, memory = self.core.stores.locate(memory_id)
        args: dict[str, Any] = {"text": text} if text is not None else {}
        change = transitions.plan(decision, memory, actor=actor, now=at, **args)
        change = dataclasses.replace(change, reason=reason)
        # recorded under who ran the import (reviewer_role), beside the source's name
        audit = {"reviewer_role": self.core.identity().role}
        decisions.apply_changes(store, [change], actor=actor, now=at, audit=audit)

    def _record(
        self, batch: Batch, record: ForeignRecord, memory_id: str, outcome: str, importer: str
    ) -> None:
        row = {
            "source": batch.source,
            "source_key": record.key,
            "memory_id": memory_id,
            "outcome": outcome,
            "source_file": str(batch.file),
            "source_time": record.source_time,
            "details": json.dumps(record.details, ensure_ascii=False, default=str),
            "imported_by": importer,
            "imported_at": utc_now(),
        }
        with self.core.stores.project.write() as con:
            record_import(con, row)


def _count(summary: ImportSummary, outcome: str) -> None:
    if outcome in ("merged", "suppressed", "reinforced"):
        setattr(summary, outcome, getattr(summary, outcome) + 1)
    else:
        summary.imported[STATUS_OF[outcome]] += 1


def _not_after(moment: datetime | None, now: datetime) -> datetime | None:
    return None if moment is None else min(moment, now)
