"""The memories as they stood: approved rows at a ``Moment`` (a snapshot's last event,
or a time), and the audit events between two moments.

Everything here reads through ``predicates.memories_at``, the one definition of a past
state, in SQL both engines take (the operational path: the memory block of a pinned
kernel reads here on PostgreSQL as on DuckDB). ``None`` for a moment means now.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..contract import Connection, one_of, rows, scalar
from .predicates import SCOPE_RANK_SQL, VISIBLE, Moment, approved_source, included

__all__ = [
    "BLOCK_COLUMNS",
    "approved_rows_at",
    "approved_table_at",
    "events_between",
    "last_event",
]

#: What the memory block (and a snapshot's hash, and a diff) needs of a memory.
BLOCK_COLUMNS = (
    "id",
    "final_text",
    "final_hash",
    "norm_text",
    "scope",
    "category",
    "valid_from",
    "valid_to",
    "decided_at",
    "npc",
    "team",
    "supersedes",
    "updates",
)
#: Of the events between two moments, what a diff shows.
_EVENT_COLUMNS = (
    "seq, memory_id, occurred_at, actor, action, from_status, to_status, text_before, "
    "text_after, reason, undoes"
)


def approved_rows_at(
    con: Connection, moment: Moment | None, npc: str | None = None, team: str | None = None
) -> list[dict]:
    """The memories approved at ``moment`` (now: None) that ``npc`` may see (every
    persona's when ``npc`` is None), most specific scope, then newest, first."""
    source, params = approved_source(moment, columns=BLOCK_COLUMNS)
    where = VISIBLE if npc is not None else "TRUE"
    return rows(
        con,
        f"SELECT {', '.join(BLOCK_COLUMNS)}, {SCOPE_RANK_SQL} AS scope_rank FROM {source} "
        f"WHERE {where} ORDER BY scope_rank, decided_at DESC, id",
        params | ({"npc": npc, "team": team} if npc is not None else {}),
    )


def approved_table_at(con: Connection, moment: Moment) -> tuple[list[str], list[tuple]]:
    """``approved_rows_at`` for every persona as column names and plain tuples (no dict
    per row): what a read at a snapshot holds to its hash before it keeps a persona's."""
    source, params = approved_source(moment, columns=BLOCK_COLUMNS)
    cursor = con.execute(
        f"SELECT {', '.join(BLOCK_COLUMNS)}, {SCOPE_RANK_SQL} AS scope_rank FROM {source}", params
    )
    names = [d[0] for d in cursor.description or ()]
    return names, cursor.fetchall()


def events_between(
    con: Connection, earlier: Moment | None, later: Moment | None, ids: Sequence[str]
) -> list[dict[str, Any]]:
    """The audit events of memories ``ids`` that ``later`` includes and ``earlier`` does
    not (``None``: now, which includes every event), oldest first."""
    if not ids:
        return []
    listed, params = one_of("memory_id", list(ids), "id")
    clauses = [listed]
    if earlier is not None:
        clauses.append(f"NOT ({included(earlier, name='earlier')})")
        params |= earlier.params("earlier")
    else:
        clauses.append("FALSE")
    if later is not None:
        clauses.append(included(later, name="later"))
        params |= later.params("later")
    return rows(
        con,
        f"SELECT {_EVENT_COLUMNS} FROM memory_events WHERE {' AND '.join(clauses)} ORDER BY seq",
        params,
    )


def last_event(con: Connection) -> int:
    """The newest event's ``seq`` (0 when the log is empty)."""
    return int(scalar(con, "SELECT coalesce(max(seq), 0) FROM memory_events"))
