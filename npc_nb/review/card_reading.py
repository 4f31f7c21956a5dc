"""What a card shows beside its row, read from the memory core: the source message, the
nearest approved memories, the memory it would update, its conversations, its votes.

The session reads a card once per card and queue state (a key press draws it several
times) and hands the row and these reads to ``card.card_from_row``. The nearest
approved memories are the one slow read (the neighbour index): a front end that loads
the index in the background gets the card without them until it is loaded
(``nearest_pending``), and ``nearest`` is what the panel's look-ahead warms.
"""

from __future__ import annotations

from typing import Any

from ..errors import NpcError
from ..memory.core import MemoryCore
from .card import Card, Nearest, VoteShown, card_from_row, conversation_ids, text_or_none
from .names import differs_line

__all__ = [
    "NEAREST_LIMIT",
    "NEAREST_MIN_SIMILARITY",
    "current_row",
    "nearest",
    "read_card",
    "stored_text",
]

NEAREST_LIMIT = 3
NEAREST_MIN_SIMILARITY = 60.0


def read_card(
    memory: MemoryCore,
    row: dict[str, Any],
    *,
    position: int,
    total: int,
    nearest_pending: bool = False,
    votes: tuple[VoteShown, ...] = (),
) -> Card:
    """The card of ``row``, ``position`` of ``total`` in its review."""
    updates, differs = text_or_none(row.get("updates")), text_or_none(row.get("differs"))

    def current(memory_id: str | None) -> dict[str, Any] | None:
        return current_row(memory, memory_id)

    return card_from_row(
        row,
        source=memory.source_message(row["source_message_id"]),
        position=position,
        total=total,
        nearest=() if nearest_pending else nearest(memory, row),
        nearest_pending=nearest_pending,
        updates_text=(current(updates) or {}).get("final_text"),
        differs=differs and differs_line(differs, row["final_text"], current),
        conversations=memory.conversation_starts(conversation_ids(row)),
        votes=votes,
    )


def nearest(memory: MemoryCore, row: dict[str, Any]) -> tuple[Nearest, ...]:
    """The approved memories nearest to the card's text."""
    found = memory.nearest_approved(
        row["final_text"],
        row["npc"],
        row["team"],
        limit=NEAREST_LIMIT,
        min_similarity=NEAREST_MIN_SIMILARITY,
    )
    return tuple(Nearest(*item) for item in found)


def current_row(memory: MemoryCore, memory_id: str | None) -> dict[str, Any] | None:
    """A memory's status and text as they are now (None if it is not there)."""
    if memory_id is None:
        return None
    try:
        return memory.stores.locate(memory_id, columns="status, final_text")[1]
    except NpcError:
        return None


def stored_text(memory: MemoryCore, memory_id: str) -> str:
    """A memory's text as stored now."""
    return str(memory.stores.locate(memory_id, columns="final_text")[1]["final_text"])
