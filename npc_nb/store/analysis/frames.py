"""Read-side queries that return pandas DataFrames: memories, decisions, re-proposals,
votes.

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
from ..memories.vote_rows import ACTIVE, VOTES_NOW

__all__ = ["decisions_frame", "memories_frame", "reproposals_frame", "votes_frame"]

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


def votes_frame(store: Store, *, memory_id: str | None, history: bool) -> pd.DataFrame:
    """The votes of independent review, card by card (oldest card first), round by
    round, in the order cast. ``vote`` numbers a round's active votes from 1 (what
    ``adjudicate(vote=...)`` picks); ``final`` says whether the round was decided (by
    agreement or adjudication). With ``history`` the votes replaced or withdrawn are
    listed too (``state``; their ``vote`` is missing). On PostgreSQL a role reads the
    votes row-level security lets it (``schema.pg_extras``): a reviewer its own and
    those of complete rounds, a reader those of settled rounds, the owner all."""
    clauses = ["TRUE" if history else ACTIVE]
    params: dict[str, object] = {}
    if memory_id is not None:
        clauses.append("v.memory_id = $id")
        params["id"] = memory_id
    return store.table(
        f"""SELECT v.memory_id,
            CASE WHEN {ACTIVE} THEN row_number() OVER (
                PARTITION BY v.memory_id, v.round, {ACTIVE} ORDER BY v.voted_at, v.id)
            END AS vote,
            v.round, v.reviewer, v.reviewer_role, v.decision, v.final_text, v.final_hash, v.reason,
            v.wording, v.defer_until, v.time_spent_ms, v.review_session, v.voted_at,
            v.settled_seq IS NOT NULL AS final,
            CASE WHEN v.withdrawn_at IS NOT NULL THEN 'withdrawn'
                 WHEN v.replaced_by IS NOT NULL THEN 'replaced' ELSE 'active' END AS state,
            v.replaced_by, v.withdrawn_at, v.id, v.event_seq, v.settled_seq,
            m.npc, m.category, m.status AS memory_status
        FROM {VOTES_NOW} v LEFT JOIN memories m ON m.id = v.memory_id
        WHERE {" AND ".join(clauses)}
        ORDER BY m.recorded_at, v.memory_id, v.round, v.voted_at, v.id""",
        params,
    )
