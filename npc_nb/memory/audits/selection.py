"""Which open candidates an audit may batch-approve, and why the others are set aside.

An audit starts from the open cards of the project store that its filters select (what
``review_queue`` lists for them, experiment arms aside; a global-scope card lives in the
user store and is never in an audit). A card is put aside, with its reason, when a
batch approval must never reach it: flagged (instruction-like, an evidence problem),
imported with a conflict (a ``held at import`` flag), a proposed update of an approved
memory, a card a reviewer split off (or requeued), or near a tombstone (matching found
a rejected memory it differs from). The rest is the batch.

Key design choice: each reason is read from what the card already records (its flags,
``updates``, its ``differs`` note, the reviewers' labels), never from a new column: an
audit classifies; it changes no card. The order of ``EXCLUSIONS`` is the precedence
when a card has several reasons.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...store import Store
from ...store.memories import memory_rows, reproposal_rows
from ..queue import queue_filters
from .sampling import sample_order, stratum_of

__all__ = ["EXCLUSIONS", "Selection", "member_rows", "select"]

#: Why a card is put aside, most telling first (the schema's ``AUDIT_EXCLUSIONS``).
EXCLUSIONS = ("import_conflict", "flagged", "update", "split", "near_tombstone")
#: How a card held at import says so (``interop.holds.HELD_FLAG``'s opening).
_HELD = "held at import:"
#: How matching notes a card that differs from a rejected memory (``memory.proposal``).
_NEAR_TOMBSTONE = "differs from rejected memory "
_COLUMNS = ("id", "npc", "category", "flags", "updates", "differs", "recorded_at")


@dataclass(frozen=True)
class Selection:
    """The batch (card rows, review order) and the cards put aside ({id: reason})."""

    batch: list[dict[str, Any]] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)


def select(
    store: Store,
    *,
    npc: str | None,
    category: str | None,
    conversation: str | None,
    now: datetime,
) -> Selection:
    """The open cards of ``store`` matching the filters, split into batch and set aside."""
    filters = queue_filters(npc, None, category, None, conversation)
    cards = memory_rows.open_memories(store, filters, now, _COLUMNS)
    requeued = reproposal_rows.requeued_cards(store, [card["id"] for card in cards])
    selection = Selection()
    for card in cards:
        reason = exclusion(card, requeued)
        if reason is None:
            selection.batch.append(card)
        else:
            selection.excluded[card["id"]] = reason
    return selection


def exclusion(card: dict[str, Any], requeued: set[str]) -> str | None:
    """Why ``card`` is never batch-approved (one of ``EXCLUSIONS``), or None."""
    flags = list(card.get("flags") or ())
    if any(str(flag).startswith(_HELD) for flag in flags):
        return "import_conflict"
    if flags:
        return "flagged"
    if card.get("updates"):
        return "update"
    if card["id"] in requeued:
        return "split"
    if str(card.get("differs") or "").startswith(_NEAR_TOMBSTONE):
        return "near_tombstone"
    return None


def member_rows(chosen: Selection, seed: int, stratify: bool) -> list[dict[str, Any]]:
    """The audit's member rows: the batch in its seeded order (``position``), each with
    its stratum when stratified, then the cards set aside with their reason."""
    strata = [stratum_of(card) for card in chosen.batch]
    ids = [card["id"] for card in chosen.batch]
    stratum = dict(zip(ids, strata, strict=True))
    order = sample_order(ids, strata if stratify else None, seed)
    batch = [
        {"memory_id": memory_id, "position": position,
         "stratum": stratum[memory_id] if stratify else None}
        for position, memory_id in enumerate(order)
    ]  # fmt: skip
    aside = [
        {"memory_id": memory_id, "position": None, "excluded_because": reason}
        for memory_id, reason in chosen.excluded.items()
    ]
    return batch + aside
