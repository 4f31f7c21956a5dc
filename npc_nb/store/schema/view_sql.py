"""The views, as SQL: the one approval predicate and the analytical views.

DuckDB runs this SQL as it is, on both backends' behalf: a PostgreSQL store is read
for analysis through DuckDB, which defines these views over the attached schema
(``server.attach``), so the views are written once, in DuckDB's SQL, and are the same
text on both. Every view leaves an experiment's memories out (``experiment_arm IS
NULL``). The views' columns are documented in ``views`` (``VIEW_COLUMNS``). A view is
replaced whole when it changes: its new text here, and a ladder step that runs it.
"""

from __future__ import annotations

from ...vocabulary import APPROVED_STATUSES

__all__ = ["OTHER_WORDING", "VIEWS"]

#: Whether a decided memory's text is a wording the model proposed for its card (a
#: merged re-proposal) rather than the reviewer's own: ``v_memories.other_wording``.
OTHER_WORDING = (
    "(status <> 'pending_approval' AND status <> 'deferred' "
    "AND initial_text <> final_text AND EXISTS (SELECT 1 FROM reproposals r "
    "WHERE r.memory_id = memories.id AND r.outcome = 'merged' "
    "AND r.proposed_text = memories.final_text))"
)

_LIVE_REPROPOSAL = (
    "NOT EXISTS (SELECT 1 FROM memories x WHERE x.id = r.memory_id "
    "AND x.experiment_arm IS NOT NULL)"
)

VIEWS = (
    # The one approval predicate every reader uses: context, graph, search, export.
    f"""CREATE VIEW approved_memories AS
        SELECT * FROM memories
        WHERE status IN ({", ".join(f"'{s}'" for s in APPROVED_STATUSES)})
          AND superseded_by IS NULL AND experiment_arm IS NULL
          AND (valid_from IS NULL OR valid_from <= timezone('UTC', now()))
          AND (valid_to IS NULL OR valid_to > timezone('UTC', now()))""",
    f"""CREATE VIEW v_memories AS
        SELECT id, npc, team, scope, category, status,
            CASE status
                WHEN 'human-approved' THEN 'approved' WHEN 'human-edited' THEN 'edited'
                WHEN 'human-rejected' THEN 'rejected' WHEN 'superseded' THEN 'superseded'
                ELSE 'open' END AS outcome,
            CASE WHEN supersedes IS NULL THEN 'extracted' ELSE 'revision' END AS origin,
            initial_text, final_text,
            initial_text <> final_text AND NOT {OTHER_WORDING} AS edited,
            {OTHER_WORDING} AS other_wording,
            coalesce(text_change, 0.0) AS text_change,
            flags, len(flags) > 0 AS flagged, confidence,
            extractor_model AS model, provider, prompt_version,
            conversation_id, source_message_id, evidence, evidence_verified,
            recorded_at, decided_at, decided_by AS reviewer,
            date_diff('millisecond', recorded_at, decided_at) AS decision_lead_ms,
            valid_from, valid_to, supersedes, superseded_by, superseded_at, defer_until
        FROM memories WHERE experiment_arm IS NULL""",
    """CREATE VIEW v_decisions AS
        SELECT e.seq, e.memory_id, e.occurred_at, e.actor AS reviewer, e.action,
            e.from_status, e.to_status, e.text_before, e.text_after, e.reason, e.batch_id,
            e.undoes,
            EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) AS undone,
            e.lead_time_ms, e.time_spent_ms, e.review_session, e.wording,
            m.npc, m.team, m.scope, m.category, m.extractor_model AS model, m.provider,
            m.prompt_version
        FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id
        WHERE m.experiment_arm IS NULL""",
    f"""CREATE VIEW v_reproposals AS
        SELECT r.id, r.recorded_at, r.memory_id, r.match_kind AS kind, r.match_type,
            r.similarity, r.verdict, r.matcher, r.outcome, r.proposed_text, r.category,
            r.scope, r.npc, r.team, r.conversation_id, r.source_message_id,
            r.extractor_model AS model, r.provider, r.prompt_version, r.listed_at,
            l.label, l.new_memory_id, l.labelled_by, l.labelled_at
        FROM reproposals r LEFT JOIN match_labels l ON l.reproposal_id = r.id
        WHERE {_LIVE_REPROPOSAL}""",
    """CREATE VIEW v_injections AS
        SELECT i.message_id, i.memory_id, i.position, i.memory_hash, i.injected_at,
            msg.conversation_id, msg.npc, msg.model AS reply_model,
            m.category, m.scope, m.final_text
        FROM context_injections i
        LEFT JOIN messages msg ON msg.id = i.message_id
        LEFT JOIN memories m ON m.id = i.memory_id""",
    """CREATE VIEW v_jobs AS
        SELECT id, status, attempts, npc, team, model, prompt_version, candidates, error,
            length(raw_output) AS raw_output_chars, created_at, started_at, finished_at,
            date_diff('millisecond', created_at, finished_at) AS duration_ms,
            conversation_id, message_id, user_message_id
        FROM extraction_jobs""",
)
