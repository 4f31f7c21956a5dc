"""SQL for the ``memories`` table: read, insert and update memory rows.

Functions that must share the caller's transaction take its connection (``con``); the
others open their own read on the store. Every approved read goes through
``predicates.approved_source``, every visibility filter through ``predicates.VISIBLE``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .._time import utc_now
from ..vocabulary import APPROVED_STATUSES
from ._database import Connection, Store, insert_row, rows, scalar
from .predicates import SCOPE_RANK_SQL, VISIBLE, approved_now, approved_source, visible_to

__all__ = [
    "add_flags",
    "approved_by_id",
    "approved_visible",
    "block_rows",
    "count_open",
    "find_by_hash",
    "get_memory",
    "index_entries",
    "insert_memory",
    "message_content",
    "newest_insert",
    "next_validity_change",
    "open_memories",
    "rejected_visible",
    "rows_by_id",
    "statuses",
    "update_memory",
]


def get_memory(store: Store, memory_id: str, con: Connection | None = None) -> dict | None:
    if con is None:
        with store.read() as own:
            return get_memory(store, memory_id, own)
    found = rows(con, "SELECT * FROM memories WHERE id = ?", [memory_id])
    return found[0] if found else None


def insert_memory(store: Store, con: Connection, memory: dict[str, Any]) -> int:
    """Insert a memory row; returns its ``insert_seq`` (the neighbour index's order)."""
    seq = insert_row(con, "memories", memory)
    assert seq is not None  # memories are sequenced
    store.memory_inserts += 1  # this process's neighbour indexes look again
    return seq


def update_memory(
    store: Store, con: Connection, memory_id: str, expected_status: str, changes: dict
) -> bool:
    """Apply ``changes`` if the memory still has ``expected_status``; report success.

    Call inside ``write()``. The update is conditional on the status the change was
    planned against, so of two reviewers deciding at once exactly one changes the row:
    on DuckDB the file lock and the lease serialise them (the status is checked in the
    same transaction), on PostgreSQL the second UPDATE waits for the first to commit,
    re-reads the row and matches nothing.
    """
    assignments = ", ".join(f"{column} = ?" for column in changes)
    values = [*changes.values(), memory_id]
    if store.sole_writer:
        # A condition beside the key makes DuckDB scan the table (tens of ms at 100k
        # memories). Nobody else writes in this transaction: check by key, update by key.
        found = con.execute("SELECT status FROM memories WHERE id = ?", [memory_id]).fetchone()
        if found is None or found[0] != expected_status:
            return False
        con.execute(f"UPDATE memories SET {assignments} WHERE id = ?", values)
    elif not con.execute(
        f"UPDATE memories SET {assignments} WHERE id = ? AND status = ? RETURNING id",
        [*values, expected_status],
    ).fetchall():
        return False
    store.bump_generation(con)
    return True


def find_by_hash(con: Connection, digest: str, npc: str | None, team: str | None) -> list[dict]:
    """Visible memories whose proposed or final text normalises to ``digest``.

    Superseded versions are left out: a fact that changes back ("the deadline is
    Friday" again) is news a reviewer should see, not a repeat.
    """
    # Two plain lookups, each served by its hash index, in one statement: an OR, or the
    # visibility filter in the same scan, makes DuckDB read the whole table instead.
    columns = "id, status, scope, npc, team, source_message_id"
    found = {
        row["id"]: row
        for row in rows(
            con,
            f"SELECT {columns} FROM memories WHERE final_hash = $digest UNION ALL "
            f"SELECT {columns} FROM memories WHERE initial_hash = $digest",
            {"digest": digest},
        )
    }
    return [
        row
        for row in found.values()
        if row["status"] != "superseded" and visible_to(row, npc, team)
    ]


def rejected_visible(con: Connection, npc: str | None, team: str | None) -> list[tuple]:
    """(id, normalised text) of every rejected memory visible to ``npc``."""
    return con.execute(
        f"SELECT id, norm_text FROM memories WHERE status = 'human-rejected' AND {VISIBLE}",
        {"npc": npc, "team": team},
    ).fetchall()


def add_flags(con: Connection, memory_id: str, flags: list[str]) -> None:
    """Add flags to a memory (in the caller's transaction; a flag is never lost)."""
    found = con.execute("SELECT flags FROM memories WHERE id = ?", [memory_id]).fetchone()
    current = list(found[0] or ()) if found else []
    con.execute(
        "UPDATE memories SET flags = ? WHERE id = ?",
        [current + [flag for flag in dict.fromkeys(flags) if flag not in current], memory_id],
    )


def approved_visible(con: Connection, npc: str, team: str | None) -> list[dict]:
    """Approved memories visible to ``npc``: most specific scope, then newest, first."""
    source, params = approved_source()
    return rows(
        con,
        "SELECT id, final_text, final_hash, norm_text, scope, category, valid_from, "
        f"valid_to, decided_at, {SCOPE_RANK_SQL} AS scope_rank "
        f"FROM {source} WHERE {VISIBLE} ORDER BY scope_rank, decided_at DESC, id",
        params | {"npc": npc, "team": team},
    )


def block_rows(con: Connection, ids: list[str]) -> list[dict]:
    """What the memory block needs of these memories, whatever their status, and what
    decides whether one is approved and visible (looked up by primary key only: a
    filter beside the key would make DuckDB scan the table)."""
    if not ids:
        return []
    return rows(
        con,
        "SELECT id, final_text, final_hash, norm_text, scope, category, valid_from, "
        "valid_to, decided_at, status, superseded_by, npc, team FROM memories "
        f"WHERE id IN ({', '.join('?' for _ in ids)})",
        ids,
    )


def approved_by_id(store: Store, ids: list[str]) -> list[dict]:
    """Those of these memories that are approved now: id, text and who may see it
    (looked up by primary key: the ids are few, the memories may be many)."""
    if not ids:
        return []
    where, params = approved_now()
    with store.read() as con:
        # The ids first, then whether they are approved: with both in one WHERE, DuckDB
        # reads the approval columns of every memory before it looks at the ids.
        return rows(
            con,
            "WITH found AS MATERIALIZED (SELECT id, final_text, scope, npc, team, status, "
            "valid_from, valid_to, superseded_by FROM memories WHERE id = ANY($ids)) "
            f"SELECT id, final_text, scope, npc, team FROM found WHERE {where}",
            {**params, "ids": ids},
        )


def next_validity_change(con: Connection, npc: str, team: str | None) -> datetime | None:
    """The next moment a visible approved memory enters or leaves its validity window.

    Until then, ``approved_visible`` cannot change without a decision.
    """
    moment = scalar(
        con,
        "SELECT min(CASE WHEN valid_from > $now THEN valid_from ELSE valid_to END) "
        "FROM memories WHERE status = ANY($approved) AND superseded_by IS NULL "
        f"AND (valid_from > $now OR valid_to > $now) AND {VISIBLE}",
        {"npc": npc, "team": team, "approved": list(APPROVED_STATUSES), "now": utc_now()},
    )
    return moment


def index_entries(store: Store, after_seq: int) -> list[tuple]:
    """(insert_seq, id, match_terms, scope, npc, team) of memories inserted after
    ``after_seq``, oldest first: what the neighbour index loads, incrementally."""
    with store.read() as con:
        return con.execute(
            "SELECT insert_seq, id, match_terms, scope, npc, team FROM memories "
            "WHERE insert_seq > ? ORDER BY insert_seq",
            [after_seq],
        ).fetchall()


def newest_insert(store: Store) -> int:
    """The highest ``insert_seq`` in the store (0 when empty)."""
    with store.read() as con:
        return int(scalar(con, "SELECT coalesce(max(insert_seq), 0) FROM memories"))


def rows_by_id(store: Store, ids: list[str]) -> list[dict]:
    """The current rows of these memories (any order; missing ids left out)."""
    if not ids:
        return []
    with store.read() as con:
        return rows(
            con,
            "SELECT id, status, final_text, final_hash, scope, npc, team, superseded_by, "
            f"recorded_at FROM memories WHERE id IN ({', '.join('?' for _ in ids)})",
            ids,
        )


def statuses(con: Connection, ids: list[str]) -> dict[str, str]:
    """{id: status} of these memories (missing ids left out), in the caller's transaction."""
    if not ids:
        return {}
    found = con.execute(
        f"SELECT id, status FROM memories WHERE id IN ({', '.join('?' for _ in ids)})", ids
    ).fetchall()
    return dict(found)


def message_content(store: Store, message_id: str) -> str | None:
    with store.read() as con:
        found = con.execute("SELECT content FROM messages WHERE id = ?", [message_id]).fetchone()
    return found[0] if found else None


def open_memories(
    store: Store, filters: dict[str, Any], now: datetime, columns: Sequence[str] = ("*",)
) -> list[dict]:
    """Pending and due deferred memories matching the filters, in review order: whole
    rows, or only ``columns`` (reading fewer columns of a large store is much faster)."""
    clauses = ["(status = 'pending_approval' OR (status = 'deferred' AND defer_until <= $now))"]
    params: dict[str, Any] = {"now": now}
    for column in ("npc", "team", "category", "scope", "conversation_id"):
        if filters.get(column) is not None:
            clauses.append(f"{column} = ${column}")
            params[column] = filters[column]
    listed, table = "", "memories"
    if filters.get("ids") is not None:
        # These memories first, then the other conditions: in one WHERE, DuckDB reads
        # every row's status and filter columns before it looks at the ids.
        listed = "WITH listed AS MATERIALIZED (SELECT * FROM memories WHERE id = ANY($ids)) "
        table = "listed"
        params["ids"] = list(filters["ids"])
    with store.read() as con:
        return rows(
            con,
            f"{listed}SELECT {', '.join(columns)} FROM {table} WHERE "
            + " AND ".join(clauses)
            + " ORDER BY skipped_at NULLS FIRST, recorded_at, id",
            params,
        )


def count_open(store: Store, now: datetime) -> int:
    with store.read() as con:
        count = scalar(
            con,
            "SELECT count(*) FROM memories WHERE status = 'pending_approval' "
            "OR (status = 'deferred' AND defer_until <= ?)",
            [now],
        )
    return int(count)
