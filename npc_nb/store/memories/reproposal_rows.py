"""SQL for re-proposals as the review shows them: a card's merged wordings (its
variants), the automatic outcomes a reviewer has not been shown yet, and the labels a
reviewer leaves when an automatic outcome was wrong (``match_labels``).

A re-proposal row is never changed except to note when it was first listed to a
reviewer; a correction is a new label row, at most one per re-proposal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..contract import Connection, Store, insert_row, one_of, rows

__all__ = [
    "AUTOMATIC_OUTCOMES",
    "automatic",
    "get_reproposal",
    "insert_label",
    "mark_listed",
    "open_variants",
    "requeued_cards",
    "split_since",
]

#: Outcomes the matcher decided without asking anybody.
AUTOMATIC_OUTCOMES = ("merged", "suppressed", "reinforced")
_UNLABELLED = "NOT EXISTS (SELECT 1 FROM match_labels l WHERE l.reproposal_id = r.id)"


def get_reproposal(con: Connection, reproposal_id: str) -> dict | None:
    """The re-proposal with its label (``label``, ``new_memory_id``; None when none)."""
    found = rows(
        con,
        "SELECT r.*, l.label, l.new_memory_id FROM reproposals r "
        "LEFT JOIN match_labels l ON l.reproposal_id = r.id WHERE r.id = ?",
        [reproposal_id],
    )
    return found[0] if found else None


def open_variants(store: Store, memory_ids: list[str]) -> dict[str, list[dict]]:
    """{card id: the wordings merged into it and not split off, oldest first} for those
    of these cards that have any, in one read (the caller passes open cards)."""
    if not memory_ids:
        return {}
    cards, params = one_of("memory_id", memory_ids, "card")
    with store.read() as con:
        # The cards' re-proposals first (by their index), then the label check: joined
        # straight away, the label check would scan every re-proposal.
        found = rows(
            con,
            "WITH r AS MATERIALIZED (SELECT id, memory_id, recorded_at, proposed_text, "
            f"conversation_id, flags FROM reproposals WHERE {cards} AND outcome = 'merged') "
            f"SELECT * FROM r WHERE {_UNLABELLED} ORDER BY recorded_at, id",
            params,
        )
    wordings: dict[str, list[dict]] = {}
    for row in found:
        wordings.setdefault(row["memory_id"], []).append(row)
    return wordings


def automatic(store: Store, *, unlisted_only: bool, npc: str | None = None) -> list[dict]:
    """Automatic outcomes not put back, oldest first, each with the memory it matched
    (``memory_text``, ``memory_status``, and ``memory_initial_text``: a card's own
    wording); only those never listed if ``unlisted_only``, only ``npc``'s if given."""
    with store.read() as con:
        return rows(
            con,
            "SELECT r.id, r.recorded_at, r.outcome, r.verdict, r.matcher, r.similarity, "
            "r.proposed_text, r.memory_id, m.final_text AS memory_text, "
            "m.status AS memory_status, m.initial_text AS memory_initial_text, r.npc, "
            "r.conversation_id, r.listed_at "
            "FROM reproposals r LEFT JOIN memories m ON m.id = r.memory_id "
            f"WHERE r.outcome = ANY($outcomes) AND {_UNLABELLED} "
            "AND (NOT $unlisted_only OR r.listed_at IS NULL) "
            "AND ($npc IS NULL OR r.npc = $npc) ORDER BY r.recorded_at, r.id",
            {"outcomes": list(AUTOMATIC_OUTCOMES), "unlisted_only": unlisted_only, "npc": npc},
        )


def mark_listed(store: Store, reproposal_ids: list[str], now: datetime) -> None:
    """Note that these automatic outcomes were listed to a reviewer (first time only)."""
    if not reproposal_ids:
        return
    with store.write() as con:
        con.execute(
            "UPDATE reproposals SET listed_at = $now WHERE id = ANY($ids) AND listed_at IS NULL",
            {"ids": reproposal_ids, "now": now},
        )


def insert_label(con: Connection, label: dict[str, Any]) -> None:
    insert_row(con, "match_labels", label)


def requeued_cards(store: Store, memory_ids: list[str]) -> set[str]:
    """Those of these cards that a reviewer created by putting a wording back (a split
    off another card, or a requeued repeat): an audit never batch-approves them."""
    if not memory_ids:
        return set()
    cards, params = one_of("new_memory_id", memory_ids, "card")
    with store.read() as con:
        found = con.execute(f"SELECT new_memory_id FROM match_labels WHERE {cards}", params)
        return {memory_id for (memory_id,) in found.fetchall()}


def split_since(store: Store, memory_ids: list[str], since: datetime) -> set[str]:
    """Those of these cards a reviewer split a wording off at or after ``since``."""
    if not memory_ids:
        return set()
    cards, params = one_of("r.memory_id", memory_ids, "card")
    with store.read() as con:
        found = con.execute(
            "SELECT DISTINCT r.memory_id FROM reproposals r JOIN match_labels l "
            f"ON l.reproposal_id = r.id WHERE {cards} AND l.label = 'split' "
            "AND l.labelled_at >= $since",
            params | {"since": since},
        )
        return {memory_id for (memory_id,) in found.fetchall()}
