"""The votes table of independent review and the audit log it widened (``m021_votes``).

DuckDB cannot change a CHECK, so ``m021`` copies the audit log into a table with the
wider set of actions (``EVENTS_TABLE_M021``), every event and its ``seq`` as they were
(``EVENT_COLUMNS_M016``), and renames it. ``VOTES_TABLE`` is the same on both backends.
"""

from __future__ import annotations

from ...vocabulary import EVENT_ACTIONS, STATUSES, VOTE_DECISIONS
from .initial_tables import one_of

__all__ = ["EVENTS_TABLE_M021", "EVENT_COLUMNS_M016", "VOTES_TABLE"]

#: The votes of independent review (``m021_votes``), the same on both backends: one row
#: per vote, never deleted. A vote's own columns are written once; the markers say
#: what became of it (replaced by the voter's next vote, withdrawn by undo, or settled by
#: the event that made its round final).
VOTES_TABLE = f"""CREATE TABLE votes (
    id VARCHAR PRIMARY KEY,
    memory_id VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    decision VARCHAR NOT NULL {one_of("decision", VOTE_DECISIONS)},
    final_text VARCHAR,
    final_hash VARCHAR,
    wording VARCHAR,
    reason VARCHAR,
    defer_until TIMESTAMP,
    time_spent_ms BIGINT,
    review_session VARCHAR,
    voted_at TIMESTAMP NOT NULL,
    event_seq BIGINT NOT NULL,
    replaced_by VARCHAR,
    withdrawn_at TIMESTAMP,
    settled_seq BIGINT
)"""

#: ``memory_events`` as ``m016`` left it (``m017`` to ``m020`` kept it): the columns
#: ``m021`` copies into its new table.
EVENT_COLUMNS_M016 = (
    "seq, memory_id, occurred_at, actor, action, from_status, to_status, text_before, "
    "text_after, reason, batch_id, undoes, lead_time_ms, time_spent_ms, review_session, "
    "state_before, wording"
)

#: ``memory_events`` with the vote actions in its CHECK and the vote an event records
#: (``vote_id``), created beside the old one and renamed to it.
EVENTS_TABLE_M021 = f"""CREATE TABLE memory_events_m021 (
            seq BIGINT PRIMARY KEY,
            memory_id VARCHAR NOT NULL,
            occurred_at TIMESTAMP NOT NULL,
            actor VARCHAR NOT NULL,
            action VARCHAR NOT NULL {one_of("action", EVENT_ACTIONS)},
            from_status VARCHAR,
            to_status VARCHAR NOT NULL {one_of("to_status", STATUSES)},
            text_before VARCHAR,
            text_after VARCHAR,
            reason VARCHAR,
            batch_id VARCHAR,
            undoes BIGINT,
            lead_time_ms BIGINT,
            time_spent_ms BIGINT,
            review_session VARCHAR,
            state_before VARCHAR,
            wording VARCHAR,
            vote_id VARCHAR
        )"""
