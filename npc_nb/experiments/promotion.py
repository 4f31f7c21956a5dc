"""Promotion: an arm's approved memories into the persona's live memory, through the
live matcher, audited as promoted from the experiment.

Each approved memory of the arm not promoted before is proposed to live memory like any
candidate (``MemoryCore.add_candidate``): a new card is approved at once by the promoter,
the event's reason naming the experiment, the arm and the memory; the same fact as a
live pending card approves that card (a person already approved the fact); the same as
a live approved memory reinforces it; the same as a live tombstone stays out and is
listed. ``experiment_promotions`` records what became of each, so promoting again does
nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .._foundations.utc import utc_now
from ..memory.core import MemoryCore
from ..store import Store
from ..store.experiments import experiment_rows

__all__ = ["Promotion", "promote"]

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
        if became in ("approved", "approved_card"):
            reason = f"promoted from experiment {experiment!r}, arm {arm!r} (memory {row['id']})"
            memory.approve_promoted(outcome.memory_id, actor, reason)
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
        found.append((row["id"], became, outcome.memory_id, row["final_text"]))
    columns = ["memory_id", "outcome", "live_memory_id", "text"]
    return Promotion(arm, pd.DataFrame(found, columns=columns))
