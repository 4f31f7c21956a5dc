"""The review queue: candidates waiting for a reviewer, across both stores.

Pending and due deferred candidates, skipped ones last, oldest first; one row per card,
with ``variants`` the number of wordings on it (1 plus those merged into it). The same filters
select what ``approve_all`` previews, so the two can never disagree about "the queue".

In independent review a queue is a reviewer's (``voting.QueueView``): only the cards
still collecting votes that the reviewer has not voted on, or for an adjudicator the
cards waiting for adjudication; such a queue adds ``votes`` (how many the card has)
and ``votes_needed``, never who voted or what.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pandas as pd

from .._foundations.tables import Kind
from ..store import Store, Stores
from ..store.memories import memory_rows, vote_rows
from ..store.memories.predicates import Moment
from .variants import cards_variants
from .voting import QueueView, card_votes

__all__ = [
    "QUEUE_COLUMNS",
    "QUEUE_KINDS",
    "VOTE_QUEUE_KINDS",
    "pending_count",
    "queue_filters",
    "queue_order",
    "queue_rows",
    "review_queue",
]

#: The queue's columns and their kinds (``_foundations.tables``: one missing-value marker per kind).
QUEUE_KINDS: dict[str, Kind] = {
    "id": "text",
    "final_text": "text",
    "category": "text",
    "scope": "text",
    "npc": "text",
    "team": "text",
    "status": "text",
    "flags": "other",
    "confidence": "float",
    "evidence": "text",
    "conversation_id": "text",
    "source_message_id": "text",
    "extractor_model": "text",
    "recorded_at": "time",
    "defer_until": "time",
    "updates": "text",
    "differs": "text",
    "variants": "int",
}
QUEUE_COLUMNS = list(QUEUE_KINDS)
#: A queue of independent review: the same, and how many votes the card has and needs.
VOTE_QUEUE_KINDS: dict[str, Kind] = QUEUE_KINDS | {"votes": "int", "votes_needed": "int"}
#: What the queue reads of each open memory: its columns, and when it was skipped (the
#: order). Not whole rows: a row's content terms and hashes are most of what it weighs.
_READ = [*(c for c in QUEUE_COLUMNS if c != "variants"), "skipped_at"]


def queue_filters(
    npc: str | None,
    team: str | None,
    category: str | None,
    scope: str | None,
    conversation: str | None,
    ids: list[str] | None = None,
    arms: list[str] | None = None,
) -> dict[str, Any]:
    """The review-queue filters as the store takes them (shared with approve_all):
    live memory's cards, or with ``arms`` (experiment arm ids) those arms' only."""
    return {
        "arms": arms,
        "npc": npc,
        "team": team,
        "category": category,
        "scope": scope,
        "conversation_id": conversation,
        "ids": ids,
    }


def queue_rows(
    stores: Stores,
    filters: dict[str, Any],
    now: datetime,
    view: QueueView | None = None,
    at: list[tuple[Store, Moment | None]] | None = None,
) -> list[dict]:
    """The open memories matching ``filters`` in both stores, in review order, each with
    ``wordings``: the variants merged into its card (``variants`` counts them and its
    own); with a ``view``, only the cards it shows, each with ``votes`` and
    ``votes_needed``. ``at`` (each store with a moment, ``Snapshots.moments``) reads
    the cards as they stood then, open at that moment's clock (the votes a ``view``
    counts are today's)."""
    # Listed cards (a review reading ahead) are read whole: the ids are few, the rows
    # are read whole anyway, and a decision on one plans from its row as kept here.
    columns = ["*"] if filters.get("ids") is not None else _READ
    found = []
    for store, moment in at or [(store, None) for store in stores.existing()]:
        then = filters if moment is None else {**filters, "as_of": moment}
        clock = now if moment is None else moment.clock
        cards = memory_rows.open_memories(store, then, clock, columns)
        if view is not None:
            cards = _shown(store, cards, view)
        merged = cards_variants(store, [m["id"] for m in cards])
        for card in cards:
            wordings = merged.get(card["id"], ())
            found.append({**card, "variants": 1 + len(wordings), "wordings": wordings})
    found.sort(key=_review_order(now))
    return found


def _shown(store: Store, cards: list[dict], view: QueueView) -> list[dict]:
    """The cards ``view`` shows, each with how many votes it has and needs."""
    standing = card_votes(vote_rows.open_ballots(store, [card["id"] for card in cards]))
    needed = view.policy.needed
    return [
        {**card, "votes": _count(standing.get(card["id"])), "votes_needed": needed}
        for card in cards
        if view.shows(standing.get(card["id"]))
    ]


def _count(standing: Any) -> int:
    return standing.count if standing is not None else 0


def _listed(store: Store, ids: list[str], view: QueueView | None) -> list[str]:
    """The ids of ``ids`` that ``view`` shows (all of them without a view)."""
    if view is None:
        return ids
    standing = card_votes(vote_rows.open_ballots(store))
    return [memory_id for memory_id in ids if view.shows(standing.get(memory_id))]


def queue_order(
    stores: Stores, filters: dict[str, Any], now: datetime, view: QueueView | None = None
) -> list[str]:
    """The ids of ``queue_rows``, in the same order, with nothing else read."""
    existing = list(stores.existing())
    if len(existing) == 1:  # the store's own order
        return _listed(existing[0], memory_rows.open_ids(existing[0], filters, now), view)
    found = [_order_shown(store, filters, now, view) for store in existing]
    found = [part for part in found if part]
    if len(found) == 1:
        return [memory_id for memory_id, _, _ in found[0]]
    merged = [
        {"id": i, "skipped_at": skipped, "recorded_at": recorded}
        for part in found
        for i, skipped, recorded in part
    ]
    merged.sort(key=_review_order(now))
    return [m["id"] for m in merged]


def _review_order(now: datetime) -> Callable[[dict], tuple]:
    """Skipped cards last (longest skipped first), then oldest first."""
    return lambda m: (
        m["skipped_at"] is not None,
        m["skipped_at"] or now,
        m["recorded_at"],
        m["id"],
    )


def _order_shown(
    store: Store, filters: dict[str, Any], now: datetime, view: QueueView | None
) -> list[tuple]:
    """``memory_rows.open_order`` of the cards ``view`` shows."""
    order = memory_rows.open_order(store, filters, now)
    if view is None:
        return order
    shown = set(_listed(store, [row[0] for row in order], view))
    return [row for row in order if row[0] in shown]


def review_queue(
    stores: Stores,
    filters: dict[str, Any],
    now: datetime,
    view: QueueView | None = None,
    at: list[tuple[Store, Moment | None]] | None = None,
) -> pd.DataFrame:
    """The queue (as it stood ``at``, see ``queue_rows``) as a DataFrame with
    ``QUEUE_COLUMNS`` (``VOTE_QUEUE_KINDS``' with a view)."""
    columns = QUEUE_COLUMNS if view is None else list(VOTE_QUEUE_KINDS)
    return pd.DataFrame(queue_rows(stores, filters, now, view, at), columns=columns)


def pending_count(stores: Stores, now: datetime) -> int:
    """How many candidates wait for review now (pending, or deferred and due)."""
    return sum(memory_rows.count_open(store, now) for store in stores.existing())
