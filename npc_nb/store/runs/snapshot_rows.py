"""SQL for the ``snapshots`` table: take one (the store's time and its last audit event,
with the approved memories of that moment, in one transaction), list, find.

A snapshot's definition is exact: the events it includes are those numbered up to its
``event_seq``. While a snapshot is taken no decision can commit in between: a DuckDB
file has one writer, and on PostgreSQL the transaction holds the row every decision
updates first (``Store.hold_decisions``), so every event numbered below the one read is
committed, and every later decision is numbered after it. The time is the store's
(``now()`` of the transaction: DuckDB's, or the PostgreSQL server's), never a kernel's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..contract import Connection, Store, insert_row, rows, scalar
from ..memories.history import approved_rows_at, last_event
from ..memories.predicates import Moment

__all__ = ["find_snapshot", "list_snapshots", "read_watermark", "take_snapshot"]

_COLUMNS = (
    "id, label, taken_at, taken_by, event_seq, user_event_seq, content_hash, memories, "
    "coalesce(event_floor, 0) AS event_floor"
)


def read_watermark(store: Store, clock: datetime) -> tuple[Moment, list[dict]]:
    """The store's newest event now as a moment read at ``clock``, and the memories
    approved then (every persona's), read together: a snapshot's part in a store other
    than the one that records it (the user's)."""
    with store.read() as con:
        moment = Moment(clock, last_event(con))
        return moment, approved_rows_at(con, moment)


def take_snapshot(
    store: Store, make_row: Callable[[Moment, list[dict]], dict[str, Any]]
) -> dict[str, Any]:
    """Insert the row ``make_row`` builds from the store's moment now and the memories
    approved then, in one transaction that no decision can commit into; the row."""
    with store.write() as con:
        store.hold_decisions(con)
        moment = Moment(_store_time(con), last_event(con))
        row = make_row(moment, approved_rows_at(con, moment))
        insert_row(con, "snapshots", row)
    return row


def list_snapshots(store: Store) -> list[dict[str, Any]]:
    """Every snapshot, oldest first."""
    with store.read() as con:
        return rows(con, f"SELECT {_COLUMNS} FROM snapshots ORDER BY taken_at, id")


def find_snapshot(store: Store, ref: str) -> dict[str, Any] | None:
    """The snapshot whose id or label is ``ref`` (an id first), or None."""
    with store.read() as con:
        found = rows(
            con,
            f"SELECT {_COLUMNS} FROM snapshots WHERE id = $ref OR label = $ref "
            "ORDER BY (id = $ref) DESC LIMIT 1",
            {"ref": ref},
        )
    return found[0] if found else None


def _store_time(con: Connection) -> datetime:
    """The store's transaction time, naive UTC."""
    value: datetime = scalar(con, "SELECT CAST(timezone('UTC', now()) AS TIMESTAMP)")
    return value
