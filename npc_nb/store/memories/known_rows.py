"""Memory rows this process read by id, kept for as long as they are the file's rows.

A DuckDB file has one writer at a time: while this process holds it, a memory's row
changes only through this process's own writes. So ``FileStore`` keeps the few columns a
lookup by id reads (``memory_rows.approved_by_id``: status, text, visibility, validity;
``rows_by_id``, what a matcher judges: status and text), and the whole rows of the cards
a review reads ahead, which a decision on one of them plans from
(``memory_rows.get_memory``). It forgets a row whenever this process changes it (a
decision, a flag added); it forgets everything when it reopens the file (another process
may have written meanwhile) or runs SQL the audit log does not describe. A row found
here is the row in the file, and reading it costs no statement. The review panel reads
the nearest memories of every card this way (about 40 rows by id, 2–3 ms of index probes
in DuckDB at any store size), and the matcher a candidate's neighbours (10): the same
memories are neighbours of many cards and candidates.

When to use which: nothing reads this but ``memory_rows``, through ``Store.known``. To
read a memory, call ``memory_rows``; it looks here first where the store keeps rows.

Used only under the store's lease (its one connection's lock), never inside a write
transaction, whose rows are not committed yet. A shared PostgreSQL store keeps none:
other clients write while this one reads.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["WHOLE", "KnownRows"]

#: Rows kept per store and shape; the oldest go first. A card's lookup is about 40 rows.
_LIMIT = 8_192
#: The shape of a row holding every column (``SELECT *``).
WHOLE = "*"


class KnownRows:
    """Rows by memory id, as they were read, by shape (the columns a reader reads: a
    lookup's few, or ``WHOLE``); see the module docstring for when."""

    def __init__(self, limit: int = _LIMIT) -> None:
        self._shapes: dict[str, dict[str, dict]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return sum(len(rows) for rows in self._shapes.values())

    def split(self, ids: Iterable[str], shape: str) -> tuple[dict[str, dict], list[str]]:
        """The rows of ``shape`` known of ``ids``, and the ids not known (to read)."""
        rows = self._shapes.get(shape, {})
        known, unknown = {}, []
        for memory_id in dict.fromkeys(ids):
            row = rows.get(memory_id)
            if row is None:
                unknown.append(memory_id)
            else:
                known[memory_id] = row
        return known, unknown

    def keep(self, rows: Iterable[dict], shape: str) -> None:
        """Keep rows of ``shape`` just read (with the file held and no write under way)."""
        kept = self._shapes.setdefault(shape, {})
        for row in rows:
            kept.pop(row["id"], None)
            kept[row["id"]] = row
        for memory_id in list(kept)[: max(len(kept) - self._limit, 0)]:
            del kept[memory_id]

    def forget(self, memory_id: str) -> None:
        """This process is changing the row: read it again next time, in every shape."""
        for rows in self._shapes.values():
            rows.pop(memory_id, None)

    def clear(self) -> None:
        """Anything may have changed (the file was reopened, or SQL rewrote it)."""
        self._shapes.clear()
