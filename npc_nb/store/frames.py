"""Read-side queries that return pandas DataFrames: memories, decisions, re-proposals.

``as_of`` answers "what was the state at that moment" from the audit log alone: the
status and text of each memory are those of its latest event at or before that time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd

from ..stamps import utc_now
from ..vocabulary import APPROVED_STATUSES
from .store import Store

__all__ = ["AS_OF", "decisions_frame", "memories_frame", "reproposals_frame"]

_APPROVED_LIST = list(APPROVED_STATUSES)

#: Every memory as it stood at ``$as_of``: status and text from its latest event then.
AS_OF = """
    WITH at_time AS (
        SELECT memory_id, arg_max(to_status, seq) AS status_at,
               arg_max(text_after, seq) AS text_at
        FROM memory_events WHERE occurred_at <= $as_of GROUP BY memory_id
    )
    SELECT m.* REPLACE (a.status_at AS status, a.text_at AS final_text)
    FROM memories m JOIN at_time a ON a.memory_id = m.id
"""


def memories_frame(
    store: Store, *, status: str | None, npc: str | None, as_of: datetime | None
) -> pd.DataFrame:
    """Memories (now, or as they stood at ``as_of``), filtered by status and persona.

    ``status="approved"`` uses the shared approval predicate (approved or edited, not
    superseded, valid at that time).
    """
    source = AS_OF if as_of is not None else "SELECT * FROM memories"
    clauses: list[str] = ["TRUE"]
    params_: dict[str, Any] = {}
    if as_of is not None:
        params_["as_of"] = as_of
    if status == "approved":
        moment = "$as_of" if as_of is not None else "$now"
        if as_of is None:
            params_["now"] = utc_now()
        clauses.append(
            f"list_contains($approved, status) AND (valid_from IS NULL OR valid_from <= {moment})"
            f" AND (valid_to IS NULL OR valid_to > {moment})"
        )
        params_["approved"] = _APPROVED_LIST
        if as_of is None:
            clauses.append("superseded_by IS NULL")
    elif status is not None:
        clauses.append("status = $status")
        params_["status"] = status
    if npc is not None:
        clauses.append("npc = $npc")
        params_["npc"] = npc
    sql = f"SELECT * FROM ({source}) WHERE {' AND '.join(clauses)} ORDER BY recorded_at, id"
    return store.dataframe(sql, params_)


def decisions_frame(store: Store, *, memory_id: str | None) -> pd.DataFrame:
    """The audit log, oldest first; one row per event."""
    where = "WHERE memory_id = $id" if memory_id is not None else ""
    params = {"id": memory_id} if memory_id is not None else {}
    return store.dataframe(
        f"SELECT * EXCLUDE (state_before) FROM memory_events {where} ORDER BY seq",
        params,
    )


def reproposals_frame(store: Store) -> pd.DataFrame:
    return store.dataframe("SELECT * FROM reproposals ORDER BY recorded_at, id")
