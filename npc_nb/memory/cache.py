"""The decision cache: sets that only a decision (or the clock) can change, per process.

The approved memories a persona can see change only when somebody decides (or when a
validity window opens or closes), so each process caches them per store and persona,
keyed by the store's decision generation; checking that the cache is current costs one
single-row query, and another kernel's decision invalidates it. The rejected texts the
tombstone check compares against are cached the same way.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._time import utc_now
from ..store import Store, memory_rows
from .ranking import ApprovedSet

__all__ = ["DecisionCache"]

_MAX_ENTRIES = 64


@dataclass
class _Entry:
    generation: tuple[int, ...]
    valid_until: datetime | None
    value: Any


class DecisionCache:
    """Per-process cache of sets that only a decision (or the clock) can change."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()  # the extraction worker reads it too

    def approved(self, stores: list[Store], npc: str, team: str | None) -> ApprovedSet:
        """Approved memories visible to ``npc`` across ``stores``, in priority order."""

        def load() -> tuple[ApprovedSet, datetime | None]:
            rows, horizons = [], []
            for store in stores:
                with store.read() as con:
                    # The horizon first: a window that closes between the two reads then
                    # makes the entry expire at once instead of keeping it forever.
                    horizons.append(memory_rows.next_validity_change(con, npc, team))
                    rows += memory_rows.approved_visible(con, npc, team)
            if len(stores) > 1:
                rows.sort(key=lambda r: (r["scope_rank"], -r["decided_at"].timestamp(), r["id"]))
            return ApprovedSet(rows), min((h for h in horizons if h is not None), default=None)

        return self._get(("approved", npc, team), stores, load)

    def rejected(self, store: Store, npc: str | None, team: str | None) -> dict[str, str]:
        """Visible rejected memories of one store as {id: normalised text}."""

        def load() -> tuple[dict[str, str], None]:
            with store.read() as con:
                return dict(memory_rows.rejected_visible(con, npc, team)), None

        return self._get(("rejected", npc, team), [store], load)

    def _get(
        self, kind: tuple, stores: list[Store], load: Callable[[], tuple[Any, datetime | None]]
    ) -> Any:
        key = (*kind, tuple(store.path for store in stores))
        generation = tuple(_generation(store) for store in stores)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.generation == generation and _current(entry):
                self._entries.move_to_end(key)
                return entry.value
        value, valid_until = load()
        with self._lock:
            self._entries[key] = _Entry(generation, valid_until, value)
            self._entries.move_to_end(key)
            while len(self._entries) > _MAX_ENTRIES:
                self._entries.popitem(last=False)
        return value


def _current(entry: _Entry) -> bool:
    return entry.valid_until is None or utc_now() < entry.valid_until


def _generation(store: Store) -> int:
    with store.read() as con:
        return store.generation(con)
