"""One card per fact in a review: a card's wordings and the automatic outcomes, by number.

A card shows its own wording (1) and the wordings merged into it (2 and up, its
variants: ``Card.wordings``); the end of a review lists what the matcher decided
without asking (``ReviewSession.automatic``), numbered from 1. The session picks one by
the number a reviewer typed; these are the checks, each a ``DecisionError`` that says
which numbers there are.
"""

from __future__ import annotations

from typing import Any

from ..errors import DecisionError
from .card import Card
from .names import card_name

__all__ = ["automatic_entry", "variant_id", "wording_card"]


def wording_card(card: Card | None, number: int, what: str) -> Card:
    """``card``, if it has a wording ``number`` to ``what`` (approve, split)."""
    if card is None:
        raise DecisionError("Nothing left to review: the queue is empty.")
    if not 1 <= number <= len(card.wordings):
        raise DecisionError(
            f"Cannot {what} wording {number}: this card has "
            + (f"wordings 1 to {len(card.wordings)}." if card.variants else "one wording.")
        )
    return card


def variant_id(card: Card, number: int) -> str:
    """The re-proposal behind the card's wording ``number`` (2 and up)."""
    if number == 1:
        raise DecisionError("Wording 1 is the card's own; split off one of the others (2 and up).")
    return card.variants[number - 2].reproposal_id


def automatic_entry(listed: list[dict[str, Any]], number: int) -> dict[str, Any]:
    """Automatic outcome ``number`` (from 1) of ``listed``, if not put back already."""
    if not 1 <= number <= len(listed):
        raise DecisionError(
            f"No automatic outcome {number}: the list has {len(listed)}."
            if listed
            else "Nothing was decided automatically since the last review."
        )
    entry = listed[number - 1]
    if entry.get("requeued_as"):
        put_back = card_name(str(entry["proposed_text"]))
        raise DecisionError(f"Already put back as its own card {put_back}.")
    return entry
