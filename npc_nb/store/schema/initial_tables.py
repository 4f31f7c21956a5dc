"""The first schema's tables (``m001_initial``), and the CHECK every closed set becomes.

``one_of`` turns a vocabulary tuple into a column's CHECK, so Python and the database
enforce the very same closed sets (``npc_nb.vocabulary``); the later tables use it too.
The statements are ``m001_initial``'s as they ran: a store created since then ran
exactly this text, so it never changes (later migrations alter what it made).
"""

from __future__ import annotations

from ...vocabulary import APPROVED_STATUSES, CATEGORIES, EVENT_ACTIONS, SCOPES, STATUSES

__all__ = ["INITIAL_TABLES", "one_of"]


def one_of(column: str, values: tuple[str, ...]) -> str:
    """A CHECK that ``column`` holds one of ``values``."""
    # Built from the vocabulary constants only, never from user input.
    listed = ", ".join(f"'{v}'" for v in values)
    return f"CHECK ({column} IN ({listed}))"


#: conversations, messages, memories, the audit log, re-proposals, context injections,
#: the approval view and the extraction queue.
INITIAL_TABLES = (
    """CREATE TABLE conversations (
            id VARCHAR PRIMARY KEY,
            npc VARCHAR NOT NULL,
            team VARCHAR,
            project VARCHAR,
            model VARCHAR,
            provider VARCHAR,
            notebook_path VARCHAR,
            started_at TIMESTAMP NOT NULL
        )""",
    """CREATE TABLE messages (
            id VARCHAR PRIMARY KEY,
            conversation_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
            content VARCHAR NOT NULL,
            npc VARCHAR,
            model VARCHAR,
            provider VARCHAR,
            notebook_path VARCHAR,
            execution_count INTEGER,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            latency_ms DOUBLE,
            created_at TIMESTAMP NOT NULL
        )""",
    f"""CREATE TABLE memories (
            id VARCHAR PRIMARY KEY,
            initial_text VARCHAR NOT NULL,
            final_text VARCHAR NOT NULL,
            initial_hash VARCHAR NOT NULL,
            final_hash VARCHAR NOT NULL,
            norm_text VARCHAR NOT NULL,
            category VARCHAR NOT NULL {one_of("category", CATEGORIES)},
            status VARCHAR NOT NULL {one_of("status", STATUSES)},
            scope VARCHAR NOT NULL {one_of("scope", SCOPES)},
            npc VARCHAR,
            team VARCHAR,
            project VARCHAR,
            conversation_id VARCHAR,
            source_message_id VARCHAR,
            evidence VARCHAR,
            evidence_verified BOOLEAN,
            extractor_model VARCHAR,
            provider VARCHAR,
            prompt_version VARCHAR,
            flags VARCHAR[] NOT NULL,
            confidence DOUBLE CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
            recorded_at TIMESTAMP NOT NULL,
            decided_at TIMESTAMP,
            decided_by VARCHAR,
            valid_from TIMESTAMP,
            valid_to TIMESTAMP,
            supersedes VARCHAR,
            superseded_by VARCHAR,
            superseded_at TIMESTAMP,
            defer_until TIMESTAMP,
            skipped_at TIMESTAMP,
            CHECK (scope <> 'npc' OR npc IS NOT NULL),
            CHECK (scope <> 'team' OR team IS NOT NULL),
            CHECK (valid_from IS NULL OR valid_to IS NULL OR valid_from < valid_to)
        )""",
    "CREATE INDEX memories_final_hash ON memories (final_hash)",
    "CREATE INDEX memories_initial_hash ON memories (initial_hash)",
    "CREATE SEQUENCE memory_event_seq START 1",
    f"""CREATE TABLE memory_events (
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
            state_before VARCHAR
        )""",
    "CREATE INDEX memory_events_memory ON memory_events (memory_id)",
    """CREATE TABLE reproposals (
            id VARCHAR PRIMARY KEY,
            recorded_at TIMESTAMP NOT NULL,
            memory_id VARCHAR NOT NULL,
            match_kind VARCHAR NOT NULL
                CHECK (match_kind IN ('rejected', 'approved', 'pending', 'superseded')),
            match_type VARCHAR NOT NULL CHECK (match_type IN ('exact', 'near')),
            similarity DOUBLE NOT NULL,
            proposed_text VARCHAR NOT NULL,
            category VARCHAR,
            scope VARCHAR,
            npc VARCHAR,
            team VARCHAR,
            conversation_id VARCHAR,
            source_message_id VARCHAR,
            extractor_model VARCHAR,
            provider VARCHAR,
            prompt_version VARCHAR
        )""",
    """CREATE TABLE context_injections (
            message_id VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            position INTEGER NOT NULL,
            memory_hash VARCHAR NOT NULL,
            injected_at TIMESTAMP NOT NULL
        )""",
    # The one approval predicate every reader uses: context, graph, search, export.
    f"""CREATE VIEW approved_memories AS
            SELECT * FROM memories
            WHERE status IN ({", ".join(f"'{s}'" for s in APPROVED_STATUSES)})
              AND superseded_by IS NULL
              AND (valid_from IS NULL OR valid_from <= now()::TIMESTAMP)
              AND (valid_to IS NULL OR valid_to > now()::TIMESTAMP)""",
    """CREATE TABLE extraction_jobs (
            id VARCHAR PRIMARY KEY,
            conversation_id VARCHAR,
            message_id VARCHAR,
            status VARCHAR NOT NULL
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
            attempts INTEGER NOT NULL,
            model VARCHAR,
            prompt_version VARCHAR,
            error VARCHAR,
            raw_output VARCHAR,
            created_at TIMESTAMP NOT NULL,
            started_at TIMESTAMP,
            finished_at TIMESTAMP
        )""",
)
