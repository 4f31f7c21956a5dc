"""Promotion: an arm's approved memories into the persona's live memory, through the
live matcher, audited as promoted from the experiment.

Each approved memory of the arm not promoted before is proposed to live memory like any
candidate (``MemoryCore.add_candidate``): a new card is approved at once by the promoter,
the event's reason naming the experiment, the arm and the memory; the same fact as a
live pending card approves that card (a person already approved the fact); the same as
a live approved memory reinforces it; the same as a live tombstone stays out and is
listed. ``experiment_promotions`` records what became of each, so promoting again does
nothing more.

In independent review the promoter is one reviewer: the approval is their vote
(``intent="vote"``), attributed to them, never an adjudication and never a second vote
in a complete round. The report says what it did to each live card (``done``): the
vote made it final, the vote was cast and the card waits for other votes, or nothing
was cast because the card waits for adjudication (or its round is complete).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .._foundations.utc import utc_now
from ..errors import DecisionError
from ..memory.core import MemoryCore
from ..store import Store
from ..store.experiments import experiment_rows
from ..vocabulary import APPROVED_STATUSES

__all__ = ["Promotion", "promote"]

#: What a promotion did to a live card it approved (``Promotion.done``).
_DONE = ("final", "vote cast", "waiting")

#: What promotion did with a memory, for each outcome of the live matcher.
_BECAME = {
    "queued": "approved",
    "merged": "approved_card",
    "reinforced": "reinforced",
    "suppressed": "tombstoned",
}


@dataclass(frozen=True)
class Promotion:
    """What ``Experiment.promote`` did: counts per outcome, and one row per memory
    (``rows``: arm memory, what it became, the live memory, its text). ``tombstoned``
    lists the texts a live tombstone kept out."""

    arm: str
    rows: pd.DataFrame = field(repr=False)

    @property
    def done(self) -> dict[str, int]:
        """What the promotion did to live cards it approved: ``final`` (approved now),
        ``vote cast`` (one vote of independent review, the card still open),
        ``waiting`` (no vote cast: the card waits for adjudication)."""
        found = self.rows["done"].value_counts() if len(self.rows) else pd.Series()
        return {kind: int(found.get(kind, 0)) for kind in _DONE}

    @property
    def counts(self) -> dict[str, int]:
        found = self.rows["outcome"].value_counts() if len(self.rows) else pd.Series()
        return {kind: int(found.get(kind, 0)) for kind in _BECAME.values()}

    @property
    def tombstoned(self) -> list[str]:
        return self.rows.loc[self.rows["outcome"] == "tombstoned", "text"].tolist()

    def __str__(self) -> str:
        counts = self.counts
        if not len(self.rows):
            return f"Promoted arm {self.arm!r}: nothing new to promote."
        counts = {k: n for k, n in counts.items() if k not in ("approved", "approved_card")}
        approved = self.rows.loc[self.rows["done"] == "final", "outcome"].value_counts()
        counts = {k: int(approved.get(k, 0)) for k in ("approved", "approved_card")} | counts
        counts |= {k: n for k, n in self.done.items() if k != "final"}
        said = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in counts.items() if n)
        lines = [f"Promoted arm {self.arm!r}: {said}."]
        lines += [f"  kept out by a live tombstone: {text}" for text in self.tombstoned]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self)}


def promote(
    memory: MemoryCore, store: Store, arm_id: str, arm: str, experiment: str, by: str | None
) -> Promotion:
    """Promote the arm's approved memories not promoted yet (see the module docstring)."""
    done = experiment_rows.promoted(store, arm_id)
    actor = memory.actor(by)
    found = []
    for row in experiment_rows.approved_in_arm(store, arm_id):
        if row["id"] in done:
            continue
        outcome = memory.add_candidate(
            row["final_text"],
            category=row["category"],
            npc=row["npc"],
            team=row["team"],
            evidence=row["evidence"],
            source_message_id=row["source_message_id"],
            conversation_id=row["conversation_id"],
            model=row["extractor_model"],
            provider=row["provider"],
            prompt_version=row["prompt_version"],
            confidence=row["confidence"],
        )
        became = _BECAME[outcome.action]
        effect = ""
        if became in ("approved", "approved_card"):
            reason = f"promoted from experiment {experiment!r}, arm {arm!r} (memory {row['id']})"
            effect = _approve(memory, outcome.memory_id, actor, reason)
        experiment_rows.record_promotion(
            store,
            {
                "arm_id": arm_id,
                "memory_id": row["id"],
                "outcome": became,
                "live_memory_id": outcome.memory_id,
                "promoted_by": actor,
                "promoted_at": utc_now(),
            },
        )
        found.append((row["id"], became, effect, outcome.memory_id, row["final_text"]))
    columns = ["memory_id", "outcome", "done", "live_memory_id", "text"]
    return Promotion(arm, pd.DataFrame(found, columns=columns))


def _approve(memory: MemoryCore, memory_id: str, actor: str, reason: str) -> str:
    """Approve the live card (in independent review: vote for it); what that did."""
    try:
        result = memory.approve_promoted(memory_id, actor, reason)
    except DecisionError:  # independent review: waiting for adjudication, or complete
        return "waiting"
    if result.decision not in ("vote", "replace_vote"):
        return "final"
    _, row = memory.stores.locate(memory_id, columns="status")
    return "final" if row["status"] in APPROVED_STATUSES else "vote cast"
