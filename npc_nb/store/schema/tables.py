"""The core tables, declared once for both backends: conversations, memories, the
audit log, matching, the extraction queue, the knowledge graph's rows, imports.

Each ``Table`` lists its columns in the order a store has them (the order the old
migrations added them: a bundle's tables and a moved store's rows keep it). Every
closed set is a ``OneOf`` over a tuple of ``npc_nb.vocabulary``. A new column is
appended to its table here AND added by a step of the ladder (``migrations``): this
declaration is what a new store gets; the ladder moves the stores that exist.
"""

from __future__ import annotations

from ...vocabulary import (
    CATEGORIES,
    EVENT_ACTIONS,
    IMPORT_OUTCOMES,
    IMPORT_SOURCES,
    JOB_STATUSES,
    MATCH_KINDS,
    MATCH_LABELS,
    MATCH_TYPES,
    MESSAGE_ROLES,
    SCOPES,
    STATUSES,
)
from .model import Check, Column, Index, OneOf, Sequence, Table

__all__ = ["CORE_TABLES", "INDEXES", "SEQUENCES"]

CORE_TABLES = (
    Table(
        "conversations",
        (
            Column("id", "VARCHAR"),
            Column("npc", "VARCHAR", not_null=True),
            Column("team", "VARCHAR"),
            Column("project", "VARCHAR"),
            Column("model", "VARCHAR"),
            Column("provider", "VARCHAR"),
            Column("notebook_path", "VARCHAR"),
            Column("started_at", "TIMESTAMP", not_null=True),
        ),
        primary_key=("id",),
        doc="One conversation with a persona: who, which model, which notebook.",
    ),
    Table(
        "messages",
        (
            Column("id", "VARCHAR"),
            Column("conversation_id", "VARCHAR", not_null=True),
            Column("role", "VARCHAR", not_null=True),
            Column("content", "VARCHAR", not_null=True),
            Column("npc", "VARCHAR"),
            Column("model", "VARCHAR"),
            Column("provider", "VARCHAR"),
            Column("notebook_path", "VARCHAR"),
            Column("execution_count", "INTEGER"),
            Column("prompt_tokens", "INTEGER"),
            Column("completion_tokens", "INTEGER"),
            Column("latency_ms", "DOUBLE"),
            Column("created_at", "TIMESTAMP", not_null=True),
        ),
        primary_key=("id",),
        checks=(OneOf("role", MESSAGE_ROLES),),
        doc="Every turn of a conversation, with its model, tokens and latency.",
    ),
    Table(
        "memories",
        (
            Column("id", "VARCHAR"),
            Column("initial_text", "VARCHAR", not_null=True),
            Column("final_text", "VARCHAR", not_null=True),
            Column("initial_hash", "VARCHAR", not_null=True),
            Column("final_hash", "VARCHAR", not_null=True),
            Column("norm_text", "VARCHAR", not_null=True),
            Column("category", "VARCHAR", not_null=True),
            Column("status", "VARCHAR", not_null=True),
            Column("scope", "VARCHAR", not_null=True),
            Column("npc", "VARCHAR"),
            Column("team", "VARCHAR"),
            Column("project", "VARCHAR"),
            Column("conversation_id", "VARCHAR"),
            Column("source_message_id", "VARCHAR"),
            Column("evidence", "VARCHAR"),
            Column("evidence_verified", "BOOLEAN"),
            Column("extractor_model", "VARCHAR"),
            Column("provider", "VARCHAR"),
            Column("prompt_version", "VARCHAR"),
            Column("flags", "VARCHAR[]", not_null=True),
            Column("confidence", "DOUBLE"),
            Column("recorded_at", "TIMESTAMP", not_null=True),
            Column("decided_at", "TIMESTAMP"),
            Column("decided_by", "VARCHAR"),
            Column("valid_from", "TIMESTAMP"),
            Column("valid_to", "TIMESTAMP"),
            Column("supersedes", "VARCHAR"),
            Column("superseded_by", "VARCHAR"),
            Column("superseded_at", "TIMESTAMP"),
            Column("defer_until", "TIMESTAMP"),
            Column("skipped_at", "TIMESTAMP"),
            Column("text_change", "DOUBLE"),
            Column("insert_seq", "BIGINT"),
            Column("match_terms", "VARCHAR[]"),
            Column("updates", "VARCHAR"),
            Column("differs", "VARCHAR"),
            Column("match_error", "VARCHAR"),
            Column("match_text", "VARCHAR"),
            Column("match_vector", "BLOB"),
            Column("matcher", "VARCHAR"),
            Column("verdict", "VARCHAR"),
            Column("match_neighbours", "VARCHAR"),
            Column("match_calls", "INTEGER"),
            Column("match_tokens", "INTEGER"),
            Column("match_ms", "DOUBLE"),
            Column("experiment_arm", "VARCHAR"),
        ),
        primary_key=("id",),
        checks=(
            OneOf("category", CATEGORIES),
            OneOf("status", STATUSES),
            OneOf("scope", SCOPES),
            Check(
                "confidence IS NULL OR (confidence >= 0 AND confidence <= 1)",
                "memories_confidence_check",
            ),
            Check("scope <> 'npc' OR npc IS NOT NULL", "memories_check"),
            Check("scope <> 'team' OR team IS NOT NULL", "memories_check1"),
            Check(
                "valid_from IS NULL OR valid_to IS NULL OR valid_from < valid_to", "memories_check2"
            ),
        ),
        doc=(
            "Every memory and candidate: initial and final text, its status, scope, provenance, "
            "validity, what matching found and, for an experiment's memory, its arm."
        ),
    ),
    Table(
        "memory_events",
        (
            Column("seq", "BIGINT"),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("occurred_at", "TIMESTAMP", not_null=True),
            Column("actor", "VARCHAR", not_null=True),
            Column("action", "VARCHAR", not_null=True),
            Column("from_status", "VARCHAR"),
            Column("to_status", "VARCHAR", not_null=True),
            Column("text_before", "VARCHAR"),
            Column("text_after", "VARCHAR"),
            Column("reason", "VARCHAR"),
            Column("batch_id", "VARCHAR"),
            Column("undoes", "BIGINT"),
            Column("lead_time_ms", "BIGINT"),
            Column("time_spent_ms", "BIGINT"),
            Column("review_session", "VARCHAR"),
            Column("state_before", "VARCHAR"),
            Column("wording", "VARCHAR"),
            Column("vote_id", "VARCHAR"),
            Column("reviewer_role", "VARCHAR", pg_default="SESSION_USER"),
            Column("chain_seq", "BIGINT"),
            Column("chain_hash", "VARCHAR"),
        ),
        primary_key=("seq",),
        checks=(
            OneOf("action", EVENT_ACTIONS),
            OneOf("to_status", STATUSES),
        ),
        doc=(
            "The audit log, append-only and hash-chained: every decision, vote and system action on"
            " a memory."
        ),
    ),
    Table(
        "reproposals",
        (
            Column("id", "VARCHAR"),
            Column("recorded_at", "TIMESTAMP", not_null=True),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("match_kind", "VARCHAR", not_null=True),
            Column("match_type", "VARCHAR", not_null=True),
            Column("similarity", "DOUBLE", not_null=True),
            Column("proposed_text", "VARCHAR", not_null=True),
            Column("category", "VARCHAR"),
            Column("scope", "VARCHAR"),
            Column("npc", "VARCHAR"),
            Column("team", "VARCHAR"),
            Column("conversation_id", "VARCHAR"),
            Column("source_message_id", "VARCHAR"),
            Column("extractor_model", "VARCHAR"),
            Column("provider", "VARCHAR"),
            Column("prompt_version", "VARCHAR"),
            Column("verdict", "VARCHAR"),
            Column("matcher", "VARCHAR"),
            Column("outcome", "VARCHAR"),
            Column("evidence", "VARCHAR"),
            Column("flags", "VARCHAR[]"),
            Column("confidence", "DOUBLE"),
            Column("listed_at", "TIMESTAMP"),
            Column("match_neighbours", "VARCHAR"),
            Column("match_calls", "INTEGER"),
            Column("match_tokens", "INTEGER"),
            Column("match_ms", "DOUBLE"),
            Column("match_error", "VARCHAR"),
        ),
        primary_key=("id",),
        checks=(
            OneOf("match_kind", MATCH_KINDS),
            OneOf("match_type", MATCH_TYPES),
        ),
        doc=(
            "Each time extraction produced content matching a memory already there, and what the "
            "matcher did with it."
        ),
    ),
    Table(
        "context_injections",
        (
            Column("message_id", "VARCHAR", not_null=True),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("position", "INTEGER", not_null=True),
            Column("memory_hash", "VARCHAR", not_null=True),
            Column("injected_at", "TIMESTAMP", not_null=True),
        ),
        doc="Which memories (and text versions) each reply's prompt carried, in order.",
    ),
    Table(
        "extraction_jobs",
        (
            Column("id", "VARCHAR"),
            Column("conversation_id", "VARCHAR"),
            Column("message_id", "VARCHAR"),
            Column("status", "VARCHAR", not_null=True),
            Column("attempts", "INTEGER", not_null=True),
            Column("model", "VARCHAR"),
            Column("prompt_version", "VARCHAR"),
            Column("error", "VARCHAR"),
            Column("raw_output", "VARCHAR"),
            Column("created_at", "TIMESTAMP", not_null=True),
            Column("started_at", "TIMESTAMP"),
            Column("finished_at", "TIMESTAMP"),
            Column("user_message_id", "VARCHAR"),
            Column("npc", "VARCHAR"),
            Column("team", "VARCHAR"),
            Column("claimed_by", "VARCHAR"),
            Column("candidates", "INTEGER"),
            Column("endpoint", "VARCHAR"),
            Column("secret_options", "VARCHAR[]"),
        ),
        primary_key=("id",),
        checks=(OneOf("status", JOB_STATUSES),),
        doc="The durable extraction queue: a killed kernel loses no job.",
    ),
    Table(
        "store_state",
        (
            Column("key", "VARCHAR"),
            Column("value", "BIGINT", not_null=True),
        ),
        primary_key=("key",),
        doc="Counters the store keeps (the decision generation every cache checks).",
    ),
    Table(
        "concept_extractions",
        (
            Column("memory_id", "VARCHAR", not_null=True),
            Column("memory_hash", "VARCHAR", not_null=True),
            Column("model", "VARCHAR", not_null=True),
            Column("extracted_at", "TIMESTAMP", not_null=True),
            Column("error", "VARCHAR"),
        ),
        primary_key=("memory_id", "memory_hash"),
        doc="Which memory text versions the knowledge graph has read.",
    ),
    Table(
        "memory_concepts",
        (
            Column("memory_id", "VARCHAR", not_null=True),
            Column("memory_hash", "VARCHAR", not_null=True),
            Column("concept_key", "VARCHAR", not_null=True),
            Column("concept_label", "VARCHAR", not_null=True),
        ),
        doc="The concepts a memory text version mentions.",
    ),
    Table(
        "concept_relations",
        (
            Column("memory_id", "VARCHAR", not_null=True),
            Column("memory_hash", "VARCHAR", not_null=True),
            Column("source_key", "VARCHAR", not_null=True),
            Column("relation", "VARCHAR", not_null=True),
            Column("target_key", "VARCHAR", not_null=True),
        ),
        doc="The relations between concepts a memory text version states.",
    ),
    Table(
        "match_labels",
        (
            Column("reproposal_id", "VARCHAR"),
            Column("label", "VARCHAR", not_null=True),
            Column("new_memory_id", "VARCHAR", not_null=True),
            Column("labelled_by", "VARCHAR", not_null=True),
            Column("labelled_at", "TIMESTAMP", not_null=True),
        ),
        primary_key=("reproposal_id",),
        checks=(OneOf("label", MATCH_LABELS),),
        doc=(
            "A reviewer's label on an automatic outcome (a split or a requeue): the matcher's "
            "measured mistakes."
        ),
    ),
    Table(
        "proposal_locks",
        (Column("text_hash", "VARCHAR"),),
        primary_key=("text_hash",),
        doc=(
            "The rows proposals of one text lock on PostgreSQL (empty on DuckDB, whose file lock "
            "serialises writers)."
        ),
    ),
    Table(
        "imported_records",
        (
            Column("source", "VARCHAR", not_null=True),
            Column("source_key", "VARCHAR", not_null=True),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("outcome", "VARCHAR", not_null=True),
            Column("source_file", "VARCHAR"),
            Column("source_time", "TIMESTAMP"),
            Column("details", "VARCHAR"),
            Column("imported_by", "VARCHAR", not_null=True),
            Column("imported_at", "TIMESTAMP", not_null=True),
        ),
        primary_key=("source", "source_key"),
        checks=(
            OneOf("source", IMPORT_SOURCES),
            OneOf("outcome", IMPORT_OUTCOMES),
        ),
        doc="One row per record of another tool that was imported, and what became of it.",
    ),
)

SEQUENCES = (
    Sequence("memory_event_seq", "numbers the audit log's events (memory_events.seq)"),
    Sequence("memory_insert_seq", "orders memories by insert (memories.insert_seq)"),
)

#: Every index of both table modules. Those on PostgreSQL only: DuckDB writes an index's
#: changed blocks on every insert (a cost its single-writer file does not repay), and
#: its chains' heads are read by a scan.
INDEXES = (
    Index("messages_conversation", "messages", ("conversation_id",)),
    Index("memories_final_hash", "memories", ("final_hash",)),
    Index("memories_initial_hash", "memories", ("initial_hash",)),
    Index("memories_insert_seq", "memories", ("insert_seq",), backends=("postgres",)),
    Index("memories_open", "memories", ("status",), backends=("postgres",)),
    Index("memory_events_memory", "memory_events", ("memory_id",)),
    Index("memory_events_undoes", "memory_events", ("undoes",), backends=("postgres",)),
    Index("memory_events_chain", "memory_events", ("chain_seq",), unique=True,
          backends=("postgres",)),
    Index("reproposals_memory", "reproposals", ("memory_id",)),
    Index("context_injections_message", "context_injections", ("message_id",)),
    Index("memory_concepts_memory", "memory_concepts", ("memory_id",)),
    Index("model_recordings_fingerprint", "model_recordings", ("fingerprint",)),
    Index("model_recordings_chain", "model_recordings", ("chain_seq",), unique=True,
          backends=("postgres",)),
    Index("votes_memory", "votes", ("memory_id",)),
    Index("votes_chain", "votes", ("chain_seq",), unique=True, backends=("postgres",)),
)  # fmt: skip
