"""The decision cache: the approved memories each persona can see, per process, kept
current by the audit log instead of re-read after every decision.

The approved set changes only when somebody decides (or when a validity window opens
or closes). Each process caches it per store list and persona together with the
store's generation token (``store.generation``) and a watermark in the audit log.
Checking the cache costs one single-row read. When the token has moved within the
same epoch, every change since is in the audit log: the events after the watermark
name the memories decisions touched (this kernel's, another kernel's, another
machine's alike), and only those rows are read again and patched into the set. A new
epoch (SQL run with ``--write``, a project moved in, a recreated file), a validity
window passing, or a flood of changes reloads the set whole.

On PostgreSQL, event numbers are handed out before commit, so a slow transaction can
commit a number below one already seen. The watermark therefore remembers the numbers
it has not seen below its top (``_Watermark.missing``) and asks for them again, until
they turn up or are old enough to be numbers of rolled-back transactions. A DuckDB file
has one writer at a time (``Store.sole_writer``): a number missing there never turns
up, and none is remembered.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

from .._foundations.utc import utc_now
from ..store import Store
from ..store.generation import same_epoch
from ..store.memories import events, memory_rows
from ..store.memories.predicates import SCOPE_RANK, approved_at, visible_to
from .ranking import ApprovedSet, priority_key

__all__ = ["DecisionCache"]

_MAX_ENTRIES = 64
#: More changed memories than this since the watermark: reading the set whole is as quick.
_MAX_PATCH = 2_000
#: How far below the newest event a fresh watermark looks for numbers not yet committed.
_RECENT = 1_000
#: How long a number below the watermark may stay missing before it counts as rolled back.
_MISSING_FOR = 120.0
_MAX_MISSING = 10_000


@dataclass(frozen=True)
class _Watermark:
    """How far into one store's audit log a cached set is: every event numbered up to
    ``top`` except the ``missing`` ones (number: when first missed, monotonic)."""

    top: int
    missing: dict[int, float] = field(default_factory=dict)

    @classmethod
    def at(cls, seqs: list[int], window: int) -> _Watermark:
        """From the newest event numbers, as read together with a whole set."""
        top = max(seqs, default=0)
        return cls(top)._advanced(seqs, floor=max(top - window, 0)) or cls(top)

    def after(self, seqs: list[int], sole_writer: bool) -> _Watermark | None:
        """The watermark once ``seqs`` (read after this one) are seen; None when too much
        is missing to keep track of. With a ``sole_writer``, nothing can be missing."""
        if sole_writer:
            return _Watermark(max(self.top, max(seqs, default=0)))
        return self._advanced(seqs, floor=self.top)

    def _advanced(self, seqs: list[int], floor: int) -> _Watermark | None:
        now, seen = time.monotonic(), set(seqs)
        top = max(self.top, max(seen, default=0))
        missing = {
            seq: since
            for seq, since in self.missing.items()
            if seq not in seen and now - since < _MISSING_FOR
        }
        if top - floor - len(seen) > _MAX_MISSING:
            return None
        missing |= {seq: now for seq in range(floor + 1, top) if seq not in seen}
        return _Watermark(top, missing)


@dataclass
class _Entry:
    generation: tuple[int, ...]
    valid_until: datetime | None
    approved: ApprovedSet
    watermarks: tuple[_Watermark, ...]


class DecisionCache:
    """Per-process cache of the approved memories each persona can see."""

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()  # the extraction worker may read it too
        self.reloads = 0  # sets read whole (``patches``: sets brought up to date)
        self.patches = 0

    def approved(self, stores: list[Store], npc: str, team: str | None) -> ApprovedSet:
        """Approved memories visible to ``npc`` across ``stores``, in priority order."""
        key = (npc, team, tuple(store.path for store in stores))
        generation = tuple(_generation(store) for store in stores)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and _current(entry):
                self._entries.move_to_end(key)
                if entry.generation == generation or self._patch(
                    entry, stores, npc, team, generation
                ):
                    return entry.approved
        entry = _load(stores, npc, team, generation)
        with self._lock:
            self.reloads += 1
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > _MAX_ENTRIES:
                self._entries.popitem(last=False)
        return entry.approved

    def _patch(
        self,
        entry: _Entry,
        stores: list[Store],
        npc: str,
        team: str | None,
        generation: tuple[int, ...],
    ) -> bool:
        """Bring ``entry`` up to date from the audit log; False if it must be reloaded.
        (Called holding the lock: two threads never patch one set at once.)"""
        pairs = zip(entry.generation, generation, strict=True)
        if not all(same_epoch(seen, now) for seen, now in pairs):
            return False
        changed: list[str] = []
        found_rows: list[dict] = []
        watermarks = []
        for store, watermark in zip(stores, entry.watermarks, strict=True):
            with store.read() as con:
                found = events.events_after(con, watermark.top, sorted(watermark.missing))
                ids = sorted({memory_id for _, memory_id in found})
                moved = watermark.after([seq for seq, _ in found], store.sole_writer)
                if moved is None or len(changed) + len(ids) > _MAX_PATCH:
                    return False
                found_rows += memory_rows.block_rows(con, ids)
            changed += ids
            watermarks.append(moved)
        now = utc_now()
        current = [
            row | {"scope_rank": SCOPE_RANK.get(row["scope"], 3)}
            for row in found_rows
            if approved_at(row, now) and visible_to(row, npc, team)
        ]
        horizons = [_next_change(row, now) for row in found_rows if _may_enter(row, now, npc, team)]
        entry.approved.apply(changed, current)
        entry.generation = generation
        entry.watermarks = tuple(watermarks)
        entry.valid_until = min(
            (h for h in (entry.valid_until, *horizons) if h is not None), default=None
        )
        self.patches += 1
        return True


def _load(stores: list[Store], npc: str, team: str | None, generation: tuple[int, ...]) -> _Entry:
    rows, horizons, watermarks = [], [], []
    for store in stores:
        with store.read() as con:
            # The watermark and the horizon first: a decision or a window closing between
            # the reads is then caught up with (or expires the entry) on the next ask.
            window = 0 if store.sole_writer else _RECENT
            watermarks.append(_Watermark.at(events.recent_seqs(con, max(window, 1)), window))
            horizons.append(memory_rows.next_validity_change(con, npc, team))
            rows += memory_rows.approved_visible(con, npc, team)
    if len(stores) > 1:
        rows.sort(key=priority_key)
    valid_until = min((h for h in horizons if h is not None), default=None)
    return _Entry(generation, valid_until, ApprovedSet(rows), tuple(watermarks))


def _may_enter(row: dict, now: datetime, npc: str, team: str | None) -> bool:
    """Whether the memory is approved and visible but for its validity window."""
    unbounded = row | {"valid_from": None, "valid_to": None}
    return approved_at(unbounded, now) and visible_to(row, npc, team)


def _next_change(row: dict, now: datetime) -> datetime | None:
    """When the memory enters or leaves its validity window next (None: never again),
    as ``memory_rows.next_validity_change`` has it."""
    valid_from, valid_to = row["valid_from"], row["valid_to"]
    if valid_from is not None and valid_from > now:
        return valid_from
    if valid_to is not None and valid_to > now:
        return valid_to
    return None


def _current(entry: _Entry) -> bool:
    return entry.valid_until is None or utc_now() < entry.valid_until


def _generation(store: Store) -> int:
    with store.read() as con:
        return store.generation(con)
