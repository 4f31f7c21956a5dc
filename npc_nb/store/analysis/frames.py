"""Read-side queries that return pandas DataFrames: memories, decisions, re-proposals.

``status="approved"`` reads through the one approval predicate
(``predicates.approved_source``), now or as the memories stood at ``as_of``.

When to use which: these are the tables the facade hands a user (``nb.memories()``,
``nb.decisions()``, ``nb.reproposals()``), read through the analysis path as whole
DataFrames. The operational path (a few rows by id or by hash, as dicts, in the
caller's transaction) is ``memories.memory_rows``.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from ..contract import Store
from ..memories.predicates import LIVE, Moment, approved_source, memories_at

__all__ = ["decisions_frame", "memories_frame", "reproposals_frame"]

#: A row (of the audit log, of re-proposals) about a memory of live memory, not of an
#: extraction experiment's arm (those are the experiment's: ``Experiment.results``).
_OF_LIVE = "memory_id NOT IN (SELECT id FROM memories WHERE experiment_arm IS NOT NULL)"


def memories_frame(
    store: Store, *, status: str | None, npc: str | None, as_of: datetime | Moment | None
) -> pd.DataFrame:
    """Memories (now, or as they stood at ``as_of``), filtered by status and persona."""
    if status == "approved":
        source, params = approved_source(as_of)
    elif as_of is not None:
        state, params = memories_at(as_of if isinstance(as_of, Moment) else Moment(as_of))
        source = f"({state}) AS as_of"
    else:
        source, params = "memories", {}
    clauses: list[str] = [LIVE]  # an experiment's memories are its own (nb.experiment)
    for column, value in (("status", status if status != "approved" else None), ("npc", npc)):
        if value is not None:
            clauses.append(f"{column} = ${column}")
            params[column] = value
    # The sentence vector is the neighbour index's, bytes no reader wants in a table.
    sql = (
        f"SELECT * EXCLUDE (match_vector) FROM {source} WHERE {' AND '.join(clauses)} "
        "ORDER BY recorded_at, id"
    )
    return store.table(sql, params)


def decisions_frame(store: Store, *, memory_id: str | None) -> pd.DataFrame:
    """The audit log, oldest first; one row per event."""
    where = f"WHERE {_OF_LIVE}" + (" AND memory_id = $id" if memory_id is not None else "")
    params = {"id": memory_id} if memory_id is not None else {}
    return store.table(
        f"SELECT * EXCLUDE (state_before) FROM memory_events {where} ORDER BY seq",
        params,
    )


def reproposals_frame(store: Store) -> pd.DataFrame:
    """Every re-proposal; ``score`` is the matcher's score (``similarity``, 0-100);
    ``label`` and ``new_memory_id`` say whether a reviewer put it back as its own card."""
    return store.table(
        "SELECT r.*, r.similarity AS score, l.label, l.new_memory_id FROM reproposals r "
        f"LEFT JOIN match_labels l ON l.reproposal_id = r.id WHERE {_OF_LIVE} "
        "ORDER BY r.recorded_at, r.id"
    )
