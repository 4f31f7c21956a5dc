"""One card per fact: the wordings merged into a card, and putting an automatic outcome
back in front of a reviewer.

A candidate the matcher judged the same as a pending one is *merged*: its wording is
kept as a variant of that card (a ``reproposals`` row) and the card asks once. The
reviewer may approve a variant's wording instead of the card's (an approval of the
model's other wording, not an edit: the card's wording stays as the initial text, the
event names the variant in ``wording``), or split a variant that is a different fact
into a card of its own. The same call, ``requeue``, puts back a suppressed or reinforced
repeat as its own card. Either way a label records that the matcher was wrong there:
the lab's own measure of its matcher (``metrics.matching``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._foundations.ids import new_id
from .._foundations.terms import content_terms, joined_terms
from .._foundations.text import content_hash, normalise
from ..errors import DecisionError
from ..store import Store, Stores
from ..store.memories import events, memory_rows, reproposal_rows
from ..store.memories.reproposal_rows import AUTOMATIC_OUTCOMES
from ..vocabulary import PENDING
from .lookup.embedding import blob

__all__ = ["Variant", "card_variants", "cards_variants", "requeue", "variant_text"]

#: Told of a memory row once its insert is committed: the store, the row's
#: ``insert_seq``, the row, and the store's (connections, inserts) right after it.
Inserted = Callable[[Store, int, dict[str, Any], tuple[int, int]], None]


@dataclass(frozen=True)
class Variant:
    """A wording merged into a card: its re-proposal id, text, when and where from."""

    reproposal_id: str
    text: str
    recorded_at: datetime
    conversation_id: str | None
    flags: tuple[str, ...]


def card_variants(store: Store, memory_id: str) -> tuple[Variant, ...]:
    """The wordings merged into the card ``memory_id`` and not split off, oldest first."""
    return cards_variants(store, [memory_id]).get(memory_id, ())


def cards_variants(store: Store, memory_ids: list[str]) -> dict[str, tuple[Variant, ...]]:
    """``card_variants`` of several cards in one read (those with none left out)."""
    return {
        card: tuple(
            Variant(
                row["id"],
                row["proposed_text"],
                row["recorded_at"],
                row["conversation_id"],
                tuple(row["flags"] or ()),
            )
            for row in found
        )
        for card, found in reproposal_rows.open_variants(store, memory_ids).items()
    }


def variant_text(store: Store, memory: dict, reproposal_id: object) -> str:
    """The wording of variant ``reproposal_id`` of the card ``memory``, or a
    DecisionError saying which variants it has."""
    for variant in card_variants(store, memory["id"]):
        if variant.reproposal_id == reproposal_id:
            return variant.text
    with store.read() as con:
        known = reproposal_rows.get_reproposal(con, str(reproposal_id))
    if known is not None and known["new_memory_id"]:
        why = f"it was split off as its own card {known['new_memory_id']}"
    elif known is not None:
        why = f"it belongs to memory {known['memory_id']} ({known['outcome']})"
    else:
        why = "there is no re-proposal with that id"
    raise DecisionError(
        f"{reproposal_id!r} is not a variant of card {memory['id']}: {why}. A card's "
        "variants are its re-proposals with outcome 'merged' (nb.reproposals())."
    )


def requeue(
    stores: Stores,
    reproposal_id: object,
    actor: str,
    now: datetime,
    *,
    inserted: Inserted | None = None,
) -> str:
    """Put an automatic outcome back in the queue as its own card; returns its id.

    A merged variant is split off its card (label ``split``); a suppressed or
    reinforced repeat is requeued (label ``requeued``). The new card carries the
    re-proposal's wording and provenance, its proposal is audited with the reviewer as
    actor, and it is never matched again: the reviewer asked to see it. ``inserted`` is
    told of the new row once it is committed (the neighbour index takes it in).
    """
    if not isinstance(reproposal_id, str) or not reproposal_id.strip():
        raise DecisionError(
            f"{reproposal_id!r} is not a re-proposal id; ids are in the 'id' column of "
            "nb.reproposals()."
        )
    for store in stores.existing():
        with store.write() as con:
            found = reproposal_rows.get_reproposal(con, reproposal_id.strip())
            if found is None:
                continue
            _check_requeueable(found)
            matched = memory_rows.get_memory(store, found["memory_id"], con, columns="project")
            row = _card_row(new_id(), found, matched["project"] if matched else None, now)
            seq = memory_rows.insert_memory(store, con, row)
            seen = (store.connections, store.memory_inserts)
            events.insert_event(con, _requeue_event(row["id"], found, actor, now))
            reproposal_rows.insert_label(
                con,
                {
                    "reproposal_id": found["id"],
                    "label": "split" if found["outcome"] == "merged" else "requeued",
                    "new_memory_id": row["id"],
                    "labelled_by": actor,
                    "labelled_at": now,
                },
            )
        if inserted is not None:
            inserted(store, seq, row, seen)
        return str(row["id"])
    raise DecisionError(
        f"No re-proposal with id {reproposal_id!r} in this project or the user store; "
        "nb.reproposals() lists them (column id)."
    )


def _check_requeueable(found: dict) -> None:
    if found["new_memory_id"]:
        raise DecisionError(
            f"Re-proposal {found['id']} was already put back as card "
            f"{found['new_memory_id']}; review that card."
        )
    if found["outcome"] not in AUTOMATIC_OUTCOMES:
        raise DecisionError(
            f"Re-proposal {found['id']} was not decided automatically (outcome "
            f"{found['outcome']!r}); only {', '.join(AUTOMATIC_OUTCOMES)} ones can be put back."
        )


def _card_row(memory_id: str, found: dict, project: str | None, now: datetime) -> dict[str, Any]:
    text = found["proposed_text"]
    digest = content_hash(text)
    return {
        "id": memory_id,
        "initial_text": text,
        "final_text": text,
        "initial_hash": digest,
        "final_hash": digest,
        "norm_text": normalise(text),
        "category": found["category"],
        "status": PENDING,
        "scope": found["scope"],
        "npc": found["npc"],
        "team": found["team"],
        "project": project,
        "conversation_id": found["conversation_id"],
        "source_message_id": found["source_message_id"],
        "evidence": found.get("evidence"),
        "extractor_model": found["extractor_model"],
        "provider": found["provider"],
        "prompt_version": found["prompt_version"],
        "flags": list(found.get("flags") or []),
        "confidence": found.get("confidence"),
        "recorded_at": now,
        "match_text": joined_terms(content_terms(text)),
        "match_vector": blob(text),
    }


def _requeue_event(memory_id: str, found: dict, actor: str, now: datetime) -> dict[str, Any]:
    how = "split off" if found["outcome"] == "merged" else f"requeued ({found['outcome']})"
    return {
        "memory_id": memory_id,
        "occurred_at": now,
        "actor": actor,
        "action": "propose",
        "from_status": None,
        "to_status": PENDING,
        "text_before": None,
        "text_after": found["proposed_text"],
        "reason": f"{how} from memory {found['memory_id']}: re-proposal {found['id']}",
        "lead_time_ms": 0,
    }
