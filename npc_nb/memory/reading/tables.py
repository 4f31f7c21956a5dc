"""The tables of memory state a user reads: memories, the audit log, votes, re-proposals,
the matcher's automatic outcomes, the review queue and plain SQL, now or as they stood.

``MemoryTables`` is built by the facade from the memory core (its stores, snapshots,
vote desk) and a persona check handed down from the chat service (``check_npc``: a
persona filter naming nobody is an error, not an empty table). The facade exposes its
methods as they are (``nb.memories`` is ``MemoryTables.memories``), so each signature
is written here once.

Key design choice: a past state is the same SQL as now, read over the events a moment
includes (``store.memories.predicates.Moment``), never a copy kept aside. Every read
takes a keyword-only ``as_of`` (a snapshot, its id or label, or a time); the snapshots
service resolves it once and gives each store its own moment (the project's events and
the user store's); a snapshot whose past was changed since is refused, not read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from ..._foundations.arguments import AsOf, Category, Scope, StatusFilter
from ..._foundations.tables import with_missing_as_na
from ..._foundations.utc import utc_now
from ...store.analysis import frames
from ...store.analysis.user_sql import run_sql
from ...store.memories.predicates import Moment
from ..core import AUTOMATIC_KINDS, MemoryCore
from ..queue import QUEUE_KINDS, VOTE_QUEUE_KINDS, queue_filters, review_queue
from ..snapshots import State

__all__ = ["MemoryTables"]


class MemoryTables:
    """One project's memory state as DataFrames, each readable as of a past state."""

    def __init__(self, core: MemoryCore, check_npc: Callable[[str | None], None]) -> None:
        self._core = core
        self._check_npc = check_npc

    def memories(
        self,
        *,
        status: StatusFilter | None = None,
        npc: str | None = None,
        as_of: AsOf | None = None,
    ) -> pd.DataFrame:
        """Memories as a DataFrame; ``status="approved"`` uses the approval predicate;
        ``as_of`` (a snapshot, its id or label, or a time) shows them as they stood."""
        self._check_npc(npc)
        return _concat(
            frames.memories_frame(store, status=status, npc=npc, as_of=moment)
            for store, moment in self._at(as_of)
        )

    def decisions(self, memory_id: str | None = None, *, as_of: AsOf | None = None) -> pd.DataFrame:
        """The audit log: who did what to which memory, when, with text before and after;
        ``as_of`` lists only the events recorded by then."""
        return _concat(
            frames.decisions_frame(store, memory_id=memory_id, as_of=moment)
            for store, moment in self._at(as_of)
        )

    def votes(
        self, memory_id: str | None = None, *, history: bool = False, as_of: AsOf | None = None
    ) -> pd.DataFrame:
        """Every vote of independent review (or one card's), card by card, in the order
        cast: ``vote`` is the number ``adjudicate`` picks by, ``final`` whether the card's
        round is decided. The analysis view: it shows every vote, also on cards still
        open (a reviewer reviews through the queue, the panel or ``npc-nb review``, which
        never show another's vote). ``history=True`` adds the votes replaced or withdrawn;
        ``as_of`` shows the votes cast by then, each as it stood then."""
        return _concat(
            frames.votes_frame(store, memory_id=memory_id, history=history, as_of=moment)
            for store, moment in self._at(as_of)
        )

    def reproposals(self, *, as_of: AsOf | None = None) -> pd.DataFrame:
        """Every time extraction repeated content that was already decided or pending
        (by ``as_of``, if given)."""
        return _concat(
            frames.reproposals_frame(store, as_of=moment) for store, moment in self._at(as_of)
        )

    def automatic_outcomes(
        self, *, unlisted_only: bool = False, npc: str | None = None
    ) -> pd.DataFrame:
        """What the matcher decided without asking anybody (merged, suppressed,
        reinforced) and nobody has put back, oldest first, with the memory each matched;
        ``unlisted_only`` keeps those no review has listed yet, ``npc`` one persona's."""
        self._check_npc(npc)
        found = self._core.automatic_outcomes(
            unlisted_only=unlisted_only, mark_listed=False, npc=npc
        )
        return with_missing_as_na(found, AUTOMATIC_KINDS)

    def review_queue(
        self,
        *,
        npc: str | None = None,
        team: str | None = None,
        category: Category | None = None,
        scope: Scope | None = None,
        conversation: str | None = None,
        by: str | None = None,
        adjudicate: bool = False,
        as_of: AsOf | None = None,
    ) -> pd.DataFrame:
        """Pending and due deferred candidates, skipped ones last, oldest first; ``as_of``
        shows the cards waiting then (a deferred card due by then included).

        In independent review it is the queue of reviewer ``by`` (default: you, as
        decisions record you): only the cards still collecting votes that ``by`` has not
        voted on, with how many votes each has (``votes``) and needs (``votes_needed``),
        never whose or which (counted as they stand now). ``adjudicate=True`` lists the
        cards whose votes disagree, waiting for an adjudicator (those ``by`` voted on left
        out)."""
        self._check_npc(npc)
        view = self._core.votes.view(self._core.voter(by), adjudicate=adjudicate)
        filters = queue_filters(npc, team, category, scope, conversation)
        at = None if as_of is None else self._at(as_of)
        queue = review_queue(self._core.stores, filters, utc_now(), view, at)
        return with_missing_as_na(queue, QUEUE_KINDS if view is None else VOTE_QUEUE_KINDS)

    def sql(self, query: str, params: Any = None, *, allow_write: bool = False) -> pd.DataFrame:
        """Run SQL on the project store; read-only unless ``allow_write=True``."""
        return run_sql(self._core.stores.project, query, params, allow_write=allow_write)

    def _at(self, as_of: object) -> list[tuple[Any, Moment | None]]:
        """Each existing store with the moment ``as_of`` names in it (None: now)."""
        snapshots = self._core.snapshots
        state: State = snapshots.resolve(as_of)
        snapshots.check(state)
        return snapshots.moments(state)


def _concat(frames_: Iterable[pd.DataFrame]) -> pd.DataFrame:
    every = list(frames_)
    filled = [f for f in every if not f.empty]
    if len(filled) > 1:
        return pd.concat(filled, ignore_index=True)
    return filled[0] if filled else every[0]
