"""The predicates every reader shares: who may see a memory, and what counts as approved.

**Approved** is defined here once: status approved or edited, not superseded, and inside
its validity window at the moment asked about (now, or ``as_of``). The memory block,
the graph, the DataFrames and the metrics all read through ``approved_source``. Times
are bound as explicit naive-UTC values, never taken from ``now()``, whose meaning follows
a session setting a query could change. The ``approved_memories`` view offered for
analysis is the same predicate with ``timezone('UTC', now())``.

``as_of`` answers "what was the state at that moment" from the audit log alone. A
``Moment`` names the events it includes: every event up to a sequence number (a
snapshot's, exact), or every event recorded at or before a time. A memory stood as the
first event after the moment found it (each decision's event keeps the row's state
before it, ``state_before``), or as it is now if nothing happened to it since; one whose
first later event created it did not exist yet. Status, text, validity window,
supersession and decision time all resolve as they stood, and the validity window is
read at the moment's clock.

**Live** memory is every memory not of an extraction experiment: an experiment's
memories carry their arm (``experiment_arm``), and both the approval predicate and
``VISIBLE`` require that mark to be NULL, so nothing of an experiment reaches a prompt,
the graph, a snapshot, an export or the live review until it is promoted. An arm's own
pool (what its candidates are matched against) is ``visible_to(row, ..., arm=)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..._foundations.utc import utc_now
from ...vocabulary import APPROVED_STATUSES

__all__ = [
    "LIVE",
    "MUTABLE_COLUMNS",
    "SCOPE_RANK",
    "SCOPE_RANK_SQL",
    "VISIBLE",
    "Moment",
    "approved_at",
    "approved_now",
    "approved_source",
    "included",
    "memories_at",
    "visible_to",
]

#: Visible to a persona: its own npc-scoped memories, its team's, the project's, global.
VISIBLE = (
    "((scope = 'npc' AND npc = $npc) OR (scope = 'team' AND team = $team)"
    " OR scope IN ('project', 'global')) AND experiment_arm IS NULL"
)
#: Live memory: not of an extraction experiment (see the module docstring).
LIVE = "experiment_arm IS NULL"

SCOPE_RANK_SQL = "CASE scope WHEN 'npc' THEN 0 WHEN 'team' THEN 1 WHEN 'project' THEN 2 ELSE 3 END"
#: ``SCOPE_RANK_SQL`` for a row in hand (3 for any other scope).
SCOPE_RANK = {"npc": 0, "team": 1, "project": 2}


@dataclass(frozen=True)
class Moment:
    """A point in one store's history: the events it includes (those numbered above
    ``floor`` up to ``seq``, the last event of a snapshot; else every event recorded at
    or before ``clock``), and ``clock``, the time validity windows are read at. A
    ``floor`` above 0 is a snapshot merged in from a bundle: the target project's own
    events, numbered lower, are not its, so neither are the memories they created."""

    clock: datetime
    seq: int | None = None
    floor: int = 0

    def params(self, name: str = "as_of") -> dict[str, Any]:
        """The parameters of ``included(self, name=name)``."""
        if self.seq is not None:
            floor = {f"{name}_floor": self.floor} if self.floor else {}
            return {f"{name}_seq": self.seq} | floor
        return {f"{name}_clock": self.clock}


def included(moment: Moment, alias: str = "", name: str = "as_of") -> str:
    """SQL: an audit event (``alias``, if given) is among those ``moment`` includes; its
    parameters are ``moment.params(name)``."""
    prefix = f"{alias}." if alias else ""
    if moment.seq is not None and moment.floor:
        return f"({prefix}seq > ${name}_floor AND {prefix}seq <= ${name}_seq)"
    if moment.seq is not None:
        return f"{prefix}seq <= ${name}_seq"
    return f"{prefix}occurred_at <= ${name}_clock"


#: The columns a decision may change (the memory core's ``transitions.MUTABLE``, held
#: in agreement by a test) and their SQL types: what ``state_before`` records.
MUTABLE_COLUMNS = {
    "status": "VARCHAR",
    "final_text": "VARCHAR",
    "final_hash": "VARCHAR",
    "norm_text": "VARCHAR",
    "decided_at": "TIMESTAMP",
    "decided_by": "VARCHAR",
    "defer_until": "TIMESTAMP",
    "skipped_at": "TIMESTAMP",
    "valid_from": "TIMESTAMP",
    "valid_to": "TIMESTAMP",
    "superseded_by": "VARCHAR",
    "superseded_at": "TIMESTAMP",
    "supersedes": "VARCHAR",
    "text_change": "FLOAT8",
    "match_text": "VARCHAR",
}


def memories_at(moment: Moment, columns: tuple[str, ...] | None = None) -> tuple[str, dict]:
    """Every memory as it stood at ``moment`` (see the module docstring): a query and
    its parameters. ``columns`` (names of ``memories``) are selected in SQL both engines
    take; without them, every column (``m.* REPLACE``: DuckDB, the analysis path)."""
    later = f"NOT ({included(moment)})"
    first_later = (
        "SELECT DISTINCT ON (memory_id) memory_id, state_before FROM memory_events "
        f"WHERE {later} ORDER BY memory_id, seq"
    )

    def column(name: str) -> str:
        if name not in MUTABLE_COLUMNS:
            return f"m.{name}"
        kind = MUTABLE_COLUMNS[name]
        old = f"CAST(l.state_before AS JSON) ->> '{name}'"
        return (
            f"CASE WHEN l.memory_id IS NULL THEN m.{name} ELSE CAST({old} AS {kind}) END AS {name}"
        )

    if columns is None:
        replaced = ", ".join(column(name) for name in MUTABLE_COLUMNS)
        select = f"m.* REPLACE ({replaced})"
    else:
        select = ", ".join(column(name) for name in columns)
    sql = (
        f"SELECT {select} FROM memories m LEFT JOIN ({first_later}) AS l "
        "ON l.memory_id = m.id WHERE l.memory_id IS NULL OR l.state_before IS NOT NULL"
    )
    return sql, moment.params()


_APPROVED_AT = (
    "status = ANY($approved_statuses)"
    " AND (valid_from IS NULL OR valid_from <= $moment)"
    " AND (valid_to IS NULL OR valid_to > $moment)"
)


def approved_now(arm: str | None = None) -> tuple[str, dict[str, Any]]:
    """The condition on a ``memories`` row that it is approved now, and its parameters
    (for a query that must keep its own access path, such as a lookup by id): live
    memory, or with ``arm`` that experiment arm's own (what ``promote`` reads)."""
    params: dict[str, Any] = {"approved_statuses": list(APPROVED_STATUSES), "moment": utc_now()}
    if arm is not None:
        params["approved_arm"] = arm
        return (
            f"{_APPROVED_AT} AND superseded_by IS NULL AND experiment_arm = $approved_arm",
            params,
        )
    return f"{_APPROVED_AT} AND superseded_by IS NULL AND {LIVE}", params


def approved_source(
    as_of: datetime | Moment | None = None, columns: tuple[str, ...] | None = None
) -> tuple[str, dict[str, Any]]:
    """A subquery (aliased ``approved``) of the approved memories now (or at ``as_of``,
    a ``Moment`` or a time) and its parameters; ``columns`` as ``memories_at``."""
    if as_of is None:
        where, now = approved_now()
        return f"(SELECT * FROM memories WHERE {where}) AS approved", now
    moment = as_of if isinstance(as_of, Moment) else Moment(as_of)
    if columns is not None:  # what the predicate reads, besides
        columns = tuple(
            dict.fromkeys(
                (*columns, "status", "superseded_by", "valid_from", "valid_to", "experiment_arm")
            )
        )
    state, params = memories_at(moment, columns)
    params |= {"approved_statuses": list(APPROVED_STATUSES), "moment": moment.clock}
    where = f"{_APPROVED_AT} AND superseded_by IS NULL AND {LIVE}"
    return f"(SELECT * FROM ({state}) AS as_of WHERE {where}) AS approved", params


def visible_to(row: dict, npc: str | None, team: str | None, arm: str | None = None) -> bool:
    """``VISIBLE`` for a row already in hand (a test holds the two in agreement); with
    ``arm``, whether the row is in that experiment arm's pool instead (its only one)."""
    if row.get("experiment_arm") != arm:
        return False
    if arm is not None:
        return True
    scope = row["scope"]
    if scope == "npc":
        return npc is not None and row["npc"] == npc
    if scope == "team":
        return team is not None and row["team"] == team
    return scope in ("project", "global")


def approved_at(row: dict, moment: datetime) -> bool:
    """``approved_now`` for a row already in hand (a test holds the two in agreement)."""
    return (
        row.get("experiment_arm") is None
        and row["status"] in APPROVED_STATUSES
        and row["superseded_by"] is None
        and (row["valid_from"] is None or row["valid_from"] <= moment)
        and (row["valid_to"] is None or row["valid_to"] > moment)
    )
