"""The tables of extraction experiments (``m023_experiments``), in SQL both engines take.

An experiment's memories are ordinary ``memories`` rows marked with their arm
(``memories.experiment_arm``, the ``experiment_arms`` id; NULL for live memory), so the
review engine, the audit log and the matcher work on them unchanged, while the one
approval predicate and every visibility filter (``memories.predicates``) require the
mark to be NULL: nothing of an experiment reaches a prompt, the graph, an export or a
metric of live memory. The views a user queries leave them out the same way.

Resuming after a killed kernel rests on ``experiment_items``: one row per (arm,
exchange, item of the model's answer), written in the transaction that writes the
candidate's memory or re-proposal row, so a re-run skips an item already proposed and
never proposes it twice. ``experiment_jobs`` is the work list (one row per arm and
exchange), ``experiment_reviews`` records each blind review's order and what it hid,
``experiment_promotions`` what became of each memory an arm promoted.
"""

from __future__ import annotations

from ...vocabulary import APPROVED_STATUSES

__all__ = [
    "EXPERIMENT_STATES",
    "EXPERIMENT_TABLES",
    "EXPERIMENT_VIEWS",
    "ITEM_OUTCOMES",
    "JOB_STATES",
    "PROMOTION_OUTCOMES",
]

EXPERIMENT_STATES = ("created", "running", "done")
JOB_STATES = ("queued", "running", "done", "failed")
ITEM_OUTCOMES = ("queued", "merged", "suppressed", "reinforced")
#: What promotion did with one approved memory of an arm.
PROMOTION_OUTCOMES = ("approved", "approved_card", "reinforced", "tombstoned")


def _one_of(column: str, values: tuple[str, ...]) -> str:
    # Built from the constants above only, never from user input.
    return f"CHECK ({column} IN ({', '.join(f'{v!r}' for v in values)}))"


EXPERIMENT_TABLES = (
    "ALTER TABLE memories ADD COLUMN experiment_arm VARCHAR",
    # The conversation selection as asked (JSON) and the exchanges it found then.
    f"""CREATE TABLE experiments (
        id VARCHAR PRIMARY KEY,
        name VARCHAR NOT NULL UNIQUE,
        npc VARCHAR,
        seed BIGINT NOT NULL,
        selection VARCHAR NOT NULL,
        exchanges BIGINT NOT NULL,
        state VARCHAR NOT NULL {_one_of("state", EXPERIMENT_STATES)},
        created_at TIMESTAMP NOT NULL,
        created_by VARCHAR NOT NULL
    )""",
    # An arm's whole configuration (JSON, keys sorted) and its hash.
    """CREATE TABLE experiment_arms (
        id VARCHAR PRIMARY KEY,
        experiment_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        position INTEGER NOT NULL,
        config VARCHAR NOT NULL,
        config_hash VARCHAR NOT NULL,
        UNIQUE (experiment_id, name)
    )""",
    f"""CREATE TABLE experiment_jobs (
        arm_id VARCHAR NOT NULL,
        message_id VARCHAR NOT NULL,
        experiment_id VARCHAR NOT NULL,
        conversation_id VARCHAR NOT NULL,
        user_message_id VARCHAR NOT NULL,
        npc VARCHAR NOT NULL,
        team VARCHAR,
        position INTEGER NOT NULL,
        state VARCHAR NOT NULL {_one_of("state", JOB_STATES)},
        attempts INTEGER NOT NULL,
        error VARCHAR,
        raw_output VARCHAR,
        candidates INTEGER,
        claimed_by VARCHAR,
        finished_at TIMESTAMP,
        PRIMARY KEY (arm_id, message_id)
    )""",
    f"""CREATE TABLE experiment_items (
        arm_id VARCHAR NOT NULL,
        message_id VARCHAR NOT NULL,
        item INTEGER NOT NULL,
        outcome VARCHAR NOT NULL {_one_of("outcome", ITEM_OUTCOMES)},
        memory_id VARCHAR NOT NULL,
        recorded_at TIMESTAMP NOT NULL,
        PRIMARY KEY (arm_id, message_id, item)
    )""",
    # What a blind review hid, and the order it showed the cards in (JSON lists).
    """CREATE TABLE experiment_reviews (
        id VARCHAR PRIMARY KEY,
        experiment_id VARCHAR NOT NULL,
        opened_at TIMESTAMP NOT NULL,
        opened_by VARCHAR NOT NULL,
        seed BIGINT NOT NULL,
        hidden VARCHAR NOT NULL,
        card_order VARCHAR NOT NULL
    )""",
    f"""CREATE TABLE experiment_promotions (
        arm_id VARCHAR NOT NULL,
        memory_id VARCHAR NOT NULL,
        outcome VARCHAR NOT NULL {_one_of("outcome", PROMOTION_OUTCOMES)},
        live_memory_id VARCHAR,
        promoted_by VARCHAR NOT NULL,
        promoted_at TIMESTAMP NOT NULL,
        PRIMARY KEY (arm_id, memory_id)
    )""",
)

_LIVE_REPROPOSAL = (
    "NOT EXISTS (SELECT 1 FROM memories x WHERE x.id = r.memory_id "
    "AND x.experiment_arm IS NOT NULL)"
)

#: The analytical views (DuckDB's; PostgreSQL's analysis attaches through them) made to
#: leave experiment memories out: ``{other_wording}`` is ``view_sql.OTHER_WORDING``.
EXPERIMENT_VIEWS = (
    f"""CREATE OR REPLACE VIEW approved_memories AS
        SELECT * FROM memories
        WHERE status IN ({", ".join(f"'{s}'" for s in APPROVED_STATUSES)})
          AND superseded_by IS NULL AND experiment_arm IS NULL
          AND (valid_from IS NULL OR valid_from <= timezone('UTC', now()))
          AND (valid_to IS NULL OR valid_to > timezone('UTC', now()))""",
    """CREATE OR REPLACE VIEW v_memories AS
        SELECT id, npc, team, scope, category, status,
            CASE status
                WHEN 'human-approved' THEN 'approved' WHEN 'human-edited' THEN 'edited'
                WHEN 'human-rejected' THEN 'rejected' WHEN 'superseded' THEN 'superseded'
                ELSE 'open' END AS outcome,
            CASE WHEN supersedes IS NULL THEN 'extracted' ELSE 'revision' END AS origin,
            initial_text, final_text,
            initial_text <> final_text AND NOT {other_wording} AS edited,
            {other_wording} AS other_wording,
            coalesce(text_change, 0.0) AS text_change,
            flags, len(flags) > 0 AS flagged, confidence,
            extractor_model AS model, provider, prompt_version,
            conversation_id, source_message_id, evidence, evidence_verified,
            recorded_at, decided_at, decided_by AS reviewer,
            date_diff('millisecond', recorded_at, decided_at) AS decision_lead_ms,
            valid_from, valid_to, supersedes, superseded_by, superseded_at, defer_until
        FROM memories WHERE experiment_arm IS NULL""",
    """CREATE OR REPLACE VIEW v_decisions AS
        SELECT e.seq, e.memory_id, e.occurred_at, e.actor AS reviewer, e.action,
            e.from_status, e.to_status, e.text_before, e.text_after, e.reason, e.batch_id,
            e.undoes,
            EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) AS undone,
            e.lead_time_ms, e.time_spent_ms, e.review_session, e.wording,
            m.npc, m.team, m.scope, m.category, m.extractor_model AS model, m.provider,
            m.prompt_version
        FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id
        WHERE m.experiment_arm IS NULL""",
    f"""CREATE OR REPLACE VIEW v_reproposals AS
        SELECT r.id, r.recorded_at, r.memory_id, r.match_kind AS kind, r.match_type,
            r.similarity, r.verdict, r.matcher, r.outcome, r.proposed_text, r.category,
            r.scope, r.npc, r.team, r.conversation_id, r.source_message_id,
            r.extractor_model AS model, r.provider, r.prompt_version, r.listed_at,
            l.label, l.new_memory_id, l.labelled_by, l.labelled_at
        FROM reproposals r LEFT JOIN match_labels l ON l.reproposal_id = r.id
        WHERE {_LIVE_REPROPOSAL}""",
)
