"""The predicates every reader shares: who may see a memory, and what counts as approved.

**Approved** is defined here once: status approved or edited, not superseded, and inside
its validity window at the moment asked about (now, or ``as_of``). The memory block,
the graph, the DataFrames and the metrics all read through ``approved_source``. Times
are bound as explicit naive-UTC values, never taken from ``now()``, whose meaning follows
a session setting a query could change. The ``approved_memories`` view offered for
analysis is the same predicate with ``timezone('UTC', now())``.

``as_of`` answers "what was the state at that moment" from the audit log alone: the
status and text of each memory are those of its latest event at or before that time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..._foundations.utc import utc_now
from ...vocabulary import APPROVED_STATUSES

__all__ = [
    "AS_OF",
    "SCOPE_RANK",
    "SCOPE_RANK_SQL",
    "VISIBLE",
    "approved_at",
    "approved_now",
    "approved_source",
    "visible_to",
]

#: Visible to a persona: its own npc-scoped memories, its team's, the project's, global.
VISIBLE = (
    "((scope = 'npc' AND npc = $npc) OR (scope = 'team' AND team = $team)"
    " OR scope IN ('project', 'global'))"
)

SCOPE_RANK_SQL = "CASE scope WHEN 'npc' THEN 0 WHEN 'team' THEN 1 WHEN 'project' THEN 2 ELSE 3 END"
#: ``SCOPE_RANK_SQL`` for a row in hand (3 for any other scope).
SCOPE_RANK = {"npc": 0, "team": 1, "project": 2}

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

_APPROVED_AT = (
    "status = ANY($approved_statuses)"
    " AND (valid_from IS NULL OR valid_from <= $moment)"
    " AND (valid_to IS NULL OR valid_to > $moment)"
)


def approved_now() -> tuple[str, dict[str, Any]]:
    """The condition on a ``memories`` row that it is approved now, and its parameters
    (for a query that must keep its own access path, such as a lookup by id)."""
    params: dict[str, Any] = {"approved_statuses": list(APPROVED_STATUSES), "moment": utc_now()}
    return f"{_APPROVED_AT} AND superseded_by IS NULL", params


def approved_source(as_of: datetime | None = None) -> tuple[str, dict[str, Any]]:
    """A subquery (aliased ``approved``) of the approved memories now (or at ``as_of``)
    and its parameters.

    At ``as_of`` the status is that moment's (a memory superseded later was approved
    then), so ``superseded_by`` is not consulted; the validity window is the current one.
    """
    if as_of is None:
        where, now = approved_now()
        return f"(SELECT * FROM memories WHERE {where}) AS approved", now
    params = {"approved_statuses": list(APPROVED_STATUSES), "moment": as_of, "as_of": as_of}
    return f"(SELECT * FROM ({AS_OF}) AS as_of WHERE {_APPROVED_AT}) AS approved", params


def visible_to(row: dict, npc: str | None, team: str | None) -> bool:
    """``VISIBLE`` for a row already in hand (a test holds the two in agreement)."""
    scope = row["scope"]
    if scope == "npc":
        return npc is not None and row["npc"] == npc
    if scope == "team":
        return team is not None and row["team"] == team
    return scope in ("project", "global")


def approved_at(row: dict, moment: datetime) -> bool:
    """``approved_now`` for a row already in hand (a test holds the two in agreement)."""
    return (
        row["status"] in APPROVED_STATUSES
        and row["superseded_by"] is None
        and (row["valid_from"] is None or row["valid_from"] <= moment)
        and (row["valid_to"] is None or row["valid_to"] > moment)
    )
