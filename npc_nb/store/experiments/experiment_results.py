"""What an experiment's results count, read from the store: one row per card, one row
per proposed item, each with its arm.

A card is a memory an arm queued (``experiment_items`` outcome ``queued``); its decision
is its status now (approved, edited, rejected; open while pending or deferred), its
review time the time spent on its latest decision that was not undone. Items that an
arm's matcher merged, suppressed or reinforced are its duplicates within the arm.
"""

from __future__ import annotations

import pandas as pd

from ..contract import Store, frame

__all__ = ["card_frame", "item_frame"]


def card_frame(store: Store, experiment_id: str) -> pd.DataFrame:
    """One row per card of the experiment: arm, memory id, conversation, status,
    decision (approve, edit, reject, or <NA> while open), flagged, time spent (ms)."""
    sql = """SELECT a.name AS arm, a.position, m.id AS memory_id, m.conversation_id,
            m.source_message_id, m.status,
            CASE m.status WHEN 'human-approved' THEN 'approve' WHEN 'human-edited' THEN 'edit'
                WHEN 'human-rejected' THEN 'reject' WHEN 'superseded' THEN 'approve'
                ELSE NULL END AS decision,
            len(m.flags) > 0 AS flagged, m.final_text, m.decided_by AS reviewer,
            (SELECT e.time_spent_ms FROM memory_events e WHERE e.memory_id = m.id
                AND e.action IN ('approve', 'reject', 'edit', 'approve_all')
                AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq)
                ORDER BY e.seq DESC LIMIT 1) AS time_spent_ms
        FROM memories m JOIN experiment_arms a ON a.id = m.experiment_arm
        WHERE a.experiment_id = ? ORDER BY a.position, m.id"""
    with store.analysis() as con:
        return frame(con.execute(sql, [experiment_id]))


def item_frame(store: Store, experiment_id: str) -> pd.DataFrame:
    """One row per proposed item: arm, exchange, item, outcome, memory id."""
    sql = """SELECT a.name AS arm, a.position, i.message_id, i.item, i.outcome, i.memory_id
        FROM experiment_items i JOIN experiment_arms a ON a.id = i.arm_id
        WHERE a.experiment_id = ? ORDER BY a.position, i.message_id, i.item"""
    with store.analysis() as con:
        return frame(con.execute(sql, [experiment_id]))
