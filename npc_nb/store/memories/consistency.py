"""SQL: memories whose row disagrees with their audit log (set by SQL, not decided).

Every status change writes its event in the same transaction (``decisions``), and the
event records the status it set (``to_status``) and the text the memory holds after
it (``text_after``). So a memory's row agrees with its newest event: the same status,
and, for an approved memory, the same text. A row that disagrees was changed outside
npc_nb (``UPDATE memories ...``): what it says now was never decided. A memory with no
event at all counts only while it waits (``pending_approval``): every other status is
reached by a decision. The check reads the whole table once (both engines).
"""

from __future__ import annotations

from typing import Any

from ...vocabulary import APPROVED_STATUSES
from ..contract import Connection, rows

__all__ = ["describe", "disagreeing_memories"]

_NEWEST_EVENT = (
    "SELECT DISTINCT ON (memory_id) memory_id, seq, to_status, text_after "
    "FROM memory_events ORDER BY memory_id, seq DESC"
)


def disagreeing_memories(
    con: Connection, ids: list[str] | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """Up to ``limit`` memories (of ``ids``, or all) whose status (or, approved, text)
    is not what their newest audit event set: id, status, text and that event's."""
    params: dict[str, Any] = {"approved": list(APPROVED_STATUSES), "limit": limit}
    only = ""
    if ids is not None:
        only, params["ids"] = "AND m.id = ANY($ids) ", list(ids)
    return rows(
        con,
        "SELECT m.id, m.status, m.final_text, e.seq, e.to_status, e.text_after "
        f"FROM memories m LEFT JOIN ({_NEWEST_EVENT}) AS e ON e.memory_id = m.id "
        f"WHERE ((e.memory_id IS NULL AND m.status <> 'pending_approval') "
        "OR m.status <> e.to_status "
        "OR (m.status = ANY($approved) AND m.final_text IS DISTINCT FROM e.text_after)) "
        f"{only}ORDER BY m.id LIMIT $limit",
        params,
    )


def describe(row: dict[str, Any]) -> str:
    """A memory whose row disagrees with its newest audit event, in words."""
    memory = f"memory {row['id']!r}"
    if row["seq"] is None:
        return (
            f"{memory} is {row['status']} but has no audit event: no decision made it so "
            "(set by SQL)."
        )
    if row["status"] != row["to_status"]:
        return (
            f"{memory} is {row['status']} but its last audit event (seq {row['seq']}) set "
            f"{row['to_status']}: its status was changed by SQL, never decided."
        )
    return (
        f"{memory}'s approved text is not the text its last audit event (seq "
        f"{row['seq']}) approved: its text was changed by SQL, never decided."
    )
