"""The reading half of the Project facade: queues and tables as pandas DataFrames.

``Project`` mixes this in; nothing here writes. ``status="approved"`` and the context
use the one approval predicate (the ``approved_memories`` view).
"""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .errors import DecisionError
from .stamps import to_utc, utc_now
from .store.frames import decisions_frame, memories_frame, reproposals_frame
from .vocabulary import STATUSES

if TYPE_CHECKING:
    from .metrics import Metrics
    from .review_session import ReviewSession
    from .store import StorePair

__all__ = ["QUEUE_COLUMNS", "Reading", "queue_filters"]

QUEUE_COLUMNS = [
    "id",
    "final_text",
    "category",
    "scope",
    "npc",
    "team",
    "status",
    "flags",
    "confidence",
    "evidence",
    "conversation_id",
    "source_message_id",
    "extractor_model",
    "recorded_at",
    "defer_until",
]


class Reading:
    """Read-only queries of a project's memory (mixed into ``Project``)."""

    _stores: StorePair

    def review_queue(
        self,
        *,
        npc: str | None = None,
        team: str | None = None,
        category: str | None = None,
        scope: str | None = None,
        conversation: str | None = None,
    ) -> pd.DataFrame:
        """Pending and due deferred candidates, skipped ones last, oldest first."""
        filters = queue_filters(npc, team, category, scope, conversation)
        now = utc_now()
        found = [m for s in self._stores.existing() for m in s.open_memories(filters, now)]
        found.sort(
            key=lambda m: (
                m["skipped_at"] is not None,
                m["skipped_at"] or now,
                m["recorded_at"],
                m["id"],
            )
        )
        return pd.DataFrame(found, columns=QUEUE_COLUMNS)

    def source_message(self, message_id: str | None) -> str | None:
        """The text of the chat message a candidate was extracted from (None if unknown)."""
        if not isinstance(message_id, str):
            return None
        return self._stores.project.message_content(message_id)

    def review_session(
        self,
        *,
        npc: str | None = None,
        category: str | None = None,
        conversation: str | None = None,
        by: str | None = None,
    ) -> ReviewSession:
        """A review of the waiting candidates, one card at a time, with tally and undo."""
        from .review_session import ReviewSession

        project: Any = self  # a Reading is always mixed into a Project
        return ReviewSession(project, npc=npc, category=category, conversation=conversation, by=by)

    def review_panel(
        self,
        *,
        npc: str | None = None,
        category: str | None = None,
        conversation: str | None = None,
        by: str | None = None,
    ) -> Any:
        """The keyboard-first review panel (ipywidgets) over ``review_session(...)``."""
        from .widgets import ReviewPanel

        return ReviewPanel(
            self.review_session(npc=npc, category=category, conversation=conversation, by=by)
        )

    def memories(
        self, status: str | None = None, npc: str | None = None, as_of: datetime | None = None
    ) -> pd.DataFrame:
        """Memories as a DataFrame; ``status="approved"`` uses the approval predicate."""
        if status is not None and status not in (*STATUSES, "approved"):
            raise DecisionError(f"Unknown status {status!r}; use 'approved' or one of {STATUSES}.")
        try:
            moment = to_utc(as_of, name="as_of") if as_of is not None else None
        except ValueError as exc:
            raise DecisionError(str(exc)) from exc
        return self._concat(
            memories_frame(s, status=status, npc=npc, as_of=moment) for s in self._stores.existing()
        )

    def decisions(self, memory_id: str | None = None) -> pd.DataFrame:
        """The audit log: who did what to which memory, when, with text before and after."""
        return self._concat(
            decisions_frame(s, memory_id=memory_id) for s in self._stores.existing()
        )

    def reproposals(self) -> pd.DataFrame:
        """Every time extraction repeated content that was already decided or pending."""
        return self._concat(reproposals_frame(s) for s in self._stores.existing())

    def sql(self, query: str, params: Any = None, *, allow_write: bool = False) -> pd.DataFrame:
        """Run SQL on the project store; read-only unless ``allow_write=True``."""
        return self._stores.project.run_sql(query, params, allow_write=allow_write)

    @staticmethod
    def _concat(frames: Any) -> pd.DataFrame:
        every = list(frames)
        filled = [f for f in every if not f.empty]
        if len(filled) > 1:
            return pd.concat(filled, ignore_index=True)
        return filled[0] if filled else every[0]

    def pending_count(self) -> int:
        """How many candidates wait for review now (pending, or deferred and due)."""
        now = utc_now()
        return sum(store.count_open(now) for store in self._stores.existing())

    def waiting_line(self) -> str:
        """The quiet line under a reply: "2 memory candidates waiting · %npc_review"."""
        count = self.pending_count()
        return f"{count} memory candidate{'' if count == 1 else 's'} waiting · %npc_review"

    @functools.cached_property
    def metrics(self) -> Metrics:
        """Approval, rejection, edit and re-proposal rates, backlog, time to decision,
        reviewer throughput and memory use, as DataFrames (see ``npc_nb.metrics``)."""
        from .metrics import Metrics

        return Metrics(self._stores.project)

    def export(self, folder: str | Path, format: str = "parquet") -> dict[str, Path]:
        """Write ``memories`` and ``decisions`` (every column of the analytical views) to
        ``folder`` as Parquet or JSON Lines; returns the paths written."""
        from .export import export_tables

        return export_tables(self._stores.project, folder, format)

    def export_review_log(self, path: str | Path) -> Path:
        """Write every decision (not undone) as Prodigy-style JSONL: text, answer
        (accept/reject/ignore), label, annotator, timestamp."""
        from .export import export_review_log

        return export_review_log(self._stores.project, path)


def queue_filters(
    npc: str | None,
    team: str | None,
    category: str | None,
    scope: str | None,
    conversation: str | None,
    ids: list[str] | None = None,
) -> dict[str, Any]:
    """The review-queue filters as the store takes them (shared with approve_all)."""
    return {
        "npc": npc,
        "team": team,
        "category": category,
        "scope": scope,
        "conversation_id": conversation,
        "ids": ids,
    }
