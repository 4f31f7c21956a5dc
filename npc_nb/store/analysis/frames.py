"""Read-side queries that return pandas DataFrames: memories, decisions, re-proposals,
votes, each now or as it stood at a ``Moment`` (``as_of``).

``status="approved"`` reads through the one approval predicate
(``predicates.approved_source``), now or as the memories stood at ``as_of``. The audit
log at a moment is the events it includes (``predicates.included``); votes are read
through the same view as now, over those events (``vote_rows.votes_at``); a
re-proposal, recorded outside the audit log, is one recorded by the moment's clock.

When to use which: these are the tables the facade hands a user (``nb.memories()``,
``nb.decisions()``, ``nb.reproposals()``), read through the analysis path as whole
DataFrames. The operational path (a few rows by id or by hash, as dicts, in the
caller's transaction) is ``memories.memory_rows``.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from ..contract import Store
from ..memories.predicates import LIVE, Moment, approved_source, included, memories_at
from ..memories.vote_rows import ACTIVE, VOTES_NOW, votes_at

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


def decisions_frame(store: Store, *, memory_id: str | None, as_of: Moment | None) -> pd.DataFrame:
    """The audit log (as it stood at ``as_of``), oldest first; one row per event, who
    did it in ``reviewer``."""
    clauses, params = [_OF_LIVE], {}
    if memory_id is not None:
        clauses.append("memory_id = $id")
        params["id"] = memory_id
    if as_of is not None:
        clauses.append(included(as_of))
        params |= as_of.params()
    # The stored column ``actor`` reads as ``reviewer``, the word users see everywhere.
    return store.table(
        "SELECT * EXCLUDE (state_before) RENAME (actor AS reviewer) FROM memory_events "
        f"WHERE {' AND '.join(clauses)} ORDER BY seq",
        params,
    )


def reproposals_frame(store: Store, *, as_of: Moment | None) -> pd.DataFrame:
    """Every re-proposal (recorded by ``as_of``'s clock); ``score`` is the matcher's
    score (``similarity``, 0-100); ``label`` and ``new_memory_id`` say whether a reviewer
    put it back as its own card (by then)."""
    then, labelled, params = "", "", {}
    if as_of is not None:
        then, labelled = " AND r.recorded_at <= $clock", " AND l.labelled_at <= $clock"
        params["clock"] = as_of.clock
    return store.table(
        "SELECT r.*, r.similarity AS score, l.label, l.new_memory_id FROM reproposals r "
        f"LEFT JOIN match_labels l ON l.reproposal_id = r.id{labelled} "
        f"WHERE {_OF_LIVE}{then} ORDER BY r.recorded_at, r.id",
        params,
    )


def votes_frame(
    store: Store, *, memory_id: str | None, history: bool, as_of: Moment | None
) -> pd.DataFrame:
    """The votes of independent review, card by card (oldest card first), round by
    round, in the order cast. ``vote`` numbers a round's active votes from 1 (what
    ``adjudicate(vote=...)`` picks); ``final`` says whether the round was decided (by
    agreement or adjudication). With ``history`` the votes replaced or withdrawn are
    listed too (``state``; their ``vote`` is missing). On PostgreSQL a role reads the
    votes row-level security lets it (``schema.pg_extras``): a reviewer its own and
    those of complete rounds, a reader those of settled rounds, the owner all. At
    ``as_of`` every vote and its card read as they stood then."""
    clauses = ["TRUE" if history else ACTIVE]
    params: dict[str, object] = {}
    votes, cards = VOTES_NOW, "memories"
    if as_of is not None:
        votes, params = votes_at(as_of)
        cards = f"({memories_at(as_of)[0]})"
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
        FROM {votes} v LEFT JOIN {cards} m ON m.id = v.memory_id
        WHERE {" AND ".join(clauses)}
        ORDER BY m.recorded_at, v.memory_id, v.round, v.voted_at, v.id""",
        params,
    )
