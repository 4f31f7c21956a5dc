"""The target's decisions in a merge: what the bundle says of its memories, and the
two ways a merge keeps the target's word.

``incoming_memories`` reads the staged memories a merge would bring (their status,
text, scope keys and flags), so the interop service can screen them as candidates
before anything is written. In the load's transaction, then:

- a memory the target already holds keeps its row (a duplicate by id, as any row)
  *and* its audit trail: ``without_kept`` lists those memories (``KEPT``) and points
  the load at a view of the bundle's ``votes`` without their rows, and the load's
  numbering of ``memory_events`` leaves their events out (a snapshot whose range
  holds one is then not exact), so the target's log gains no event about a memory
  whose state it decided;
- an incoming approved memory the screen holds (a text one of the target's tombstones
  covers, one the text checks refuse, one flagged as instruction-like where the bundle
  showed no flag) is written, then re-opened (``reopen``): pending, with a ``held at
  import`` flag and a ``propose`` event (actor ``imported:bundle``) that gives the
  reason. It is a new memory of the target's, left for review; the target's own rows
  are not touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from ...vocabulary import PENDING
from ..contract import Connection, Store, rows
from ..memories import events, memory_rows
from .tables import quoted

__all__ = ["KEPT", "KEPT_TABLES", "drop_kept_views", "incoming_memories", "reopen", "without_kept"]

#: The temporary table of the memories whose trail the target keeps (column memory_id).
KEPT = "npc_bundle_kept"
#: The tables besides the audit log whose rows decide a memory's state, left out for a
#: memory already here (the audit log is left out as it is numbered: ``load``).
KEPT_TABLES = ("votes",)
_COLUMNS = "id, status, final_text, category, scope, npc, team, flags, experiment_arm"


def incoming_memories(staged: Path) -> list[dict[str, Any]]:
    """Every staged memory's id, status, final text, category, scope keys, flags and
    experiment arm, in the order they were inserted."""
    con = duckdb.connect(str(staged), read_only=True)
    try:
        return rows(con, f"SELECT {_COLUMNS} FROM memories ORDER BY insert_seq, id")
    finally:
        con.close()


def without_kept(
    store: Store, con: Connection, incoming: dict[str, str], kept: Iterable[str]
) -> bool:
    """List the ``kept`` memories in ``KEPT`` and make ``incoming``'s ``KEPT_TABLES``
    views without their rows (in the load's transaction; ``drop_kept_views`` removes
    them); False when there are none (nothing made)."""
    ids = sorted(set(kept))
    if not ids:
        return False
    con.execute(f"CREATE TEMP TABLE {KEPT} (memory_id VARCHAR)")
    if isinstance(con, duckdb.DuckDBPyConnection):
        con.executemany(f"INSERT INTO {KEPT} VALUES (?)", [[i] for i in ids])
    else:
        store.copy_rows(con, KEPT, ["memory_id"], iter([(i,) for i in ids]))
    for table in KEPT_TABLES:
        view = quoted(f"{KEPT}_{table}")
        con.execute(
            f"CREATE TEMP VIEW {view} AS SELECT * FROM {incoming[table]} s "
            f"WHERE s.memory_id NOT IN (SELECT memory_id FROM {KEPT})"
        )
        incoming[table] = view
    return True


def drop_kept_views(con: Connection) -> None:
    """Drop what ``without_kept`` made (temporary objects outlive a PostgreSQL
    transaction in a pooled session)."""
    for table in KEPT_TABLES:
        con.execute(f"DROP VIEW IF EXISTS {quoted(f'{KEPT}_{table}')}")
    con.execute(f"DROP TABLE IF EXISTS {KEPT}")


def reopen(
    store: Store, con: Connection, held: dict[str, str], *, actor: str, now: datetime
) -> None:
    """Put the ``held`` incoming memories ({id: reason}) back in the review queue, each
    with its reason as a flag and on a ``propose`` event (see the module docstring)."""
    for memory_id, reason in held.items():
        found = con.execute(
            "SELECT status, final_text FROM memories WHERE id = ?", [memory_id]
        ).fetchone()
        if found is None or found[0] == PENDING:
            continue
        store.row_changing(memory_id)
        con.execute(
            "UPDATE memories SET status = ?, decided_at = NULL, decided_by = NULL WHERE id = ?",
            [PENDING, memory_id],
        )
        memory_rows.add_flags(store, con, memory_id, [f"held at import: {reason}"])
        event = {
            "memory_id": memory_id,
            "occurred_at": now,
            "actor": actor,
            "action": "propose",
            "from_status": found[0],
            "to_status": PENDING,
            "text_before": found[1],
            "text_after": found[1],
            "reason": f"held at import: {reason}",
            "lead_time_ms": 0,
        }
        events.insert_event(con, event)
