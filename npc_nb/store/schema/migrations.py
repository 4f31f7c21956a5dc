"""Numbered schema migrations, applied on open, each in one transaction with its record.

A migration is a function named ``mNNN_description`` registered with ``@migration``;
duplicate names are refused at import time. ``apply_migrations`` runs, in order, every
migration the ``_migrations`` table does not list, each inside its own transaction
together with the row that records it, so a crash leaves either both or neither. A
store that lists a migration this code does not know was written by a newer npc_nb and
is refused rather than guessed at.

The CHECK constraints are generated from ``npc_nb.vocabulary`` so Python and the
database enforce the very same closed sets.

A migration that changes memory rows (not just adds columns) must also start a new
epoch of the decision generation (``generation.rewrite_sql()``): caches patch
themselves from the audit log, and a migration writes no events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection

import duckdb

from ..._foundations.redact import has_credentials, strip_credentials
from ..._foundations.utc import utc_now
from ...errors import StoreError
from ...vocabulary import (
    APPROVED_STATUSES,
    CATEGORIES,
    EVENT_ACTIONS,
    IMPORT_OUTCOMES,
    IMPORT_SOURCES,
    SCOPES,
    STATUSES,
    VOTE_DECISIONS,
)
from .experiment_tables import EXPERIMENT_TABLES, EXPERIMENT_VIEWS

__all__ = [
    "MIGRATIONS",
    "RUNS_TABLES",
    "SNAPSHOT_FLOOR",
    "VOTES_TABLE",
    "apply_migrations",
    "endpoint_without_credentials",
    "migration",
]

Migration = Callable[[duckdb.DuckDBPyConnection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register a migration; its name orders it and must be unique."""
    if any(existing.__name__ == fn.__name__ for existing in MIGRATIONS):
        raise ValueError(f"Duplicate migration name {fn.__name__!r}")
    MIGRATIONS.append(fn)
    MIGRATIONS.sort(key=lambda m: m.__name__)
    return fn


def apply_migrations(
    con: duckdb.DuckDBPyConnection, *, only: Collection[str] | None = None
) -> list[str]:
    """Bring the schema up to date; return the names applied now. ``only`` applies just
    those migrations (a bundle's data is loaded into the schema it was written at, then
    brought up to date like any store: ``store.bundle``)."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)"
    )
    known = {m.__name__ for m in MIGRATIONS}
    recorded = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    if unknown := sorted(recorded - known):
        raise StoreError(
            f"This store was written by a newer npc_nb (migrations {', '.join(unknown)}). "
            "Upgrade npc_nb to open it."
        )
    applied = []
    for step in MIGRATIONS:
        if step.__name__ in recorded or (only is not None and step.__name__ not in only):
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            step(con)
            con.execute(
                "INSERT INTO _migrations VALUES (?, ?)",
                [step.__name__, utc_now()],
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(step.__name__)
    return applied


def _one_of(column: str, values: tuple[str, ...]) -> str:
    # Built from the vocabulary constants only, never from user input.
    listed = ", ".join(f"'{v}'" for v in values)
    return f"CHECK ({column} IN ({listed}))"


@migration
def m001_initial(con: duckdb.DuckDBPyConnection) -> None:
    """The first schema: conversations, messages, memories, the audit log, re-proposals,
    context injections, the approval view and the extraction queue."""
    statements = [
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
            category VARCHAR NOT NULL {_one_of("category", CATEGORIES)},
            status VARCHAR NOT NULL {_one_of("status", STATUSES)},
            scope VARCHAR NOT NULL {_one_of("scope", SCOPES)},
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
            action VARCHAR NOT NULL {_one_of("action", EVENT_ACTIONS)},
            from_status VARCHAR,
            to_status VARCHAR NOT NULL {_one_of("to_status", STATUSES)},
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
    ]
    for statement in statements:
        con.execute(statement)


@migration
def m002_store_state(con: duckdb.DuckDBPyConnection) -> None:
    # A token every decision replaces with a fresh random value, so a process can tell
    # cheaply whether the approved and rejected sets it cached are still current
    # (another kernel may have decided).
    con.execute("CREATE TABLE store_state (key VARCHAR PRIMARY KEY, value BIGINT NOT NULL)")
    con.execute("INSERT INTO store_state VALUES ('decision_generation', 0)")


@migration
def m003_extraction_queue(con: duckdb.DuckDBPyConnection) -> None:
    # What the background worker needs to run a job without joins, and to tell a job
    # orphaned by a killed kernel (claimed_by = host:pid) from one still in flight.
    for statement in (
        "ALTER TABLE extraction_jobs ADD COLUMN user_message_id VARCHAR",
        "ALTER TABLE extraction_jobs ADD COLUMN npc VARCHAR",
        "ALTER TABLE extraction_jobs ADD COLUMN team VARCHAR",
        "ALTER TABLE extraction_jobs ADD COLUMN claimed_by VARCHAR",
        "ALTER TABLE extraction_jobs ADD COLUMN candidates INTEGER",
        "CREATE INDEX messages_conversation ON messages (conversation_id)",
    ):
        con.execute(statement)


@migration
def m004_analytics_views(con: duckdb.DuckDBPyConnection) -> None:
    # Stable, documented views for analysis (npc_nb.store.schema.views documents every column);
    # the tables behind them may change, these names and meanings should not.
    statements = [
        """CREATE VIEW v_memories AS
        SELECT id, npc, team, scope, category, status,
            CASE status
                WHEN 'human-approved' THEN 'approved' WHEN 'human-edited' THEN 'edited'
                WHEN 'human-rejected' THEN 'rejected' WHEN 'superseded' THEN 'superseded'
                ELSE 'open' END AS outcome,
            CASE WHEN supersedes IS NULL THEN 'extracted' ELSE 'revision' END AS origin,
            initial_text, final_text, initial_text <> final_text AS edited,
            CASE WHEN initial_text = final_text THEN 0.0
                 ELSE levenshtein(initial_text, final_text)::DOUBLE
                      / greatest(length(initial_text), length(final_text)) END AS text_change,
            flags, len(flags) > 0 AS flagged, confidence,
            extractor_model AS model, provider, prompt_version,
            conversation_id, source_message_id, evidence, evidence_verified,
            recorded_at, decided_at, decided_by AS reviewer,
            date_diff('millisecond', recorded_at, decided_at) AS decision_lead_ms,
            valid_from, valid_to, supersedes, superseded_by, superseded_at, defer_until
        FROM memories""",
        """CREATE VIEW v_decisions AS
        SELECT e.seq, e.memory_id, e.occurred_at, e.actor AS reviewer, e.action,
            e.from_status, e.to_status, e.text_before, e.text_after, e.reason, e.batch_id,
            e.undoes,
            EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) AS undone,
            e.lead_time_ms, e.time_spent_ms, e.review_session,
            m.npc, m.team, m.scope, m.category, m.extractor_model AS model, m.provider,
            m.prompt_version
        FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id""",
        """CREATE VIEW v_reproposals AS
        SELECT id, recorded_at, memory_id, match_kind AS kind, match_type, similarity,
            proposed_text, category, scope, npc, team, conversation_id, source_message_id,
            extractor_model AS model, provider, prompt_version
        FROM reproposals""",
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
    ]
    for statement in statements:
        con.execute(statement)


@migration
def m005_concepts(con: duckdb.DuckDBPyConnection) -> None:
    # The knowledge graph is derived at read time from approved memories and these rows,
    # which are keyed by memory id AND text version (hash): a rejected, superseded or
    # undone memory contributes nothing, because it is no longer approved.
    for statement in (
        """CREATE TABLE concept_extractions (
            memory_id VARCHAR NOT NULL,
            memory_hash VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            extracted_at TIMESTAMP NOT NULL,
            error VARCHAR,
            PRIMARY KEY (memory_id, memory_hash)
        )""",
        """CREATE TABLE memory_concepts (
            memory_id VARCHAR NOT NULL,
            memory_hash VARCHAR NOT NULL,
            concept_key VARCHAR NOT NULL,
            concept_label VARCHAR NOT NULL
        )""",
        """CREATE TABLE concept_relations (
            memory_id VARCHAR NOT NULL,
            memory_hash VARCHAR NOT NULL,
            source_key VARCHAR NOT NULL,
            relation VARCHAR NOT NULL,
            target_key VARCHAR NOT NULL
        )""",
        "CREATE INDEX memory_concepts_memory ON memory_concepts (memory_id)",
    ):
        con.execute(statement)


@migration
def m006_text_change(con: duckdb.DuckDBPyConnection) -> None:
    # DuckDB's levenshtein() counts bytes, so an edit of non-ASCII text measured wrong
    # (and could exceed 1). The review engine now stores a character-level measure on
    # every edit; existing edits are measured here.
    from rapidfuzz.distance import Levenshtein

    con.execute("ALTER TABLE memories ADD COLUMN text_change DOUBLE")
    edited = con.execute(
        "SELECT id, initial_text, final_text FROM memories WHERE initial_text <> final_text"
    ).fetchall()
    for memory_id, initial, final in edited:
        con.execute(
            "UPDATE memories SET text_change = ? WHERE id = ?",
            [Levenshtein.normalized_distance(initial, final), memory_id],
        )
    con.execute(
        """CREATE OR REPLACE VIEW v_memories AS
        SELECT id, npc, team, scope, category, status,
            CASE status
                WHEN 'human-approved' THEN 'approved' WHEN 'human-edited' THEN 'edited'
                WHEN 'human-rejected' THEN 'rejected' WHEN 'superseded' THEN 'superseded'
                ELSE 'open' END AS outcome,
            CASE WHEN supersedes IS NULL THEN 'extracted' ELSE 'revision' END AS origin,
            initial_text, final_text, initial_text <> final_text AS edited,
            coalesce(text_change, 0.0) AS text_change,
            flags, len(flags) > 0 AS flagged, confidence,
            extractor_model AS model, provider, prompt_version,
            conversation_id, source_message_id, evidence, evidence_verified,
            recorded_at, decided_at, decided_by AS reviewer,
            date_diff('millisecond', recorded_at, decided_at) AS decision_lead_ms,
            valid_from, valid_to, supersedes, superseded_by, superseded_at, defer_until
        FROM memories"""
    )


@migration
def m007_utc_approval(con: duckdb.DuckDBPyConnection) -> None:
    # The approval predicate compared validity windows with now()::TIMESTAMP, which
    # follows the session's TimeZone setting: a query that changed it could re-open an
    # expired window. timezone('UTC', now()) is the UTC wall clock whatever the setting.
    con.execute(
        f"""CREATE OR REPLACE VIEW approved_memories AS
            SELECT * FROM memories
            WHERE status IN ({", ".join(f"'{s}'" for s in APPROVED_STATUSES)})
              AND superseded_by IS NULL
              AND (valid_from IS NULL OR valid_from <= timezone('UTC', now()))
              AND (valid_to IS NULL OR valid_to > timezone('UTC', now()))"""
    )


@migration
def m008_rehash_unmasked(con: duckdb.DuckDBPyConnection) -> None:
    # Normalisation now folds disguises (invisible characters, lookalike letters,
    # markup) before hashing, so every stored hash is recomputed: old tombstones keep
    # matching their disguised repeats. Rows keyed by a memory's text hash (concepts,
    # context injections) follow their memory.
    import pandas as pd

    from ..._foundations.text import content_hash, normalise

    rows = con.execute(
        "SELECT id, initial_text, final_text, initial_hash, final_hash FROM memories"
    ).fetchall()
    frame = pd.DataFrame(
        [
            (memory_id, old_initial, content_hash(initial), old_final, content_hash(final),
             normalise(final))
            for memory_id, initial, final, old_initial, old_final in rows
        ],
        columns=["id", "old_initial", "new_initial", "old_final", "new_final", "new_norm"],
    )  # fmt: skip
    frame = frame[(frame.old_initial != frame.new_initial) | (frame.old_final != frame.new_final)]
    if frame.empty:
        return
    con.register("rehashed", frame)
    try:
        con.execute(
            "UPDATE memories SET initial_hash = r.new_initial, final_hash = r.new_final, "
            "norm_text = r.new_norm FROM rehashed r WHERE memories.id = r.id"
        )
        for table in ("context_injections", "concept_extractions", "memory_concepts",
                      "concept_relations"):  # fmt: skip
            con.execute(
                f"UPDATE {table} SET memory_hash = r.new_final FROM rehashed r "
                f"WHERE {table}.memory_id = r.id AND {table}.memory_hash = r.old_final"
            )
    finally:
        con.unregister("rehashed")


@migration
def m009_injections_by_message(con: duckdb.DuckDBPyConnection) -> None:
    # Every turn reads the injection manifests of its history (a reply that drew on a
    # memory no longer approved is withheld), so look them up by message.
    con.execute("CREATE INDEX context_injections_message ON context_injections (message_id)")


@migration
def m010_job_endpoint(con: duckdb.DuckDBPyConnection) -> None:
    # A turn sent to a custom endpoint (api_base=...) has its extraction sent there too.
    # The endpoint is stored (JSON); credentials never are: only the names of the
    # options that carried them, so a job whose key is gone can say what it needs.
    con.execute("ALTER TABLE extraction_jobs ADD COLUMN endpoint VARCHAR")
    con.execute("ALTER TABLE extraction_jobs ADD COLUMN secret_options VARCHAR[]")


@migration
def m011_same_fact_matching(con: duckdb.DuckDBPyConnection) -> None:
    # Same-fact matching. Memories keep the content terms the neighbour index reads
    # (computed once, at insert: opening a project never re-indexes it), an insert
    # sequence so every kernel can pick up others' new memories since a watermark, and,
    # for a candidate queued as an update, the approved memory it would replace and what
    # differs. Re-proposals record the matcher's verdict, score and the outcome.
    from ..._foundations.terms import content_terms

    for statement in (
        "CREATE SEQUENCE memory_insert_seq START 1",
        "ALTER TABLE memories ADD COLUMN insert_seq BIGINT",
        "ALTER TABLE memories ADD COLUMN match_terms VARCHAR[]",
        "ALTER TABLE memories ADD COLUMN updates VARCHAR",
        "ALTER TABLE memories ADD COLUMN differs VARCHAR",
        "ALTER TABLE memories ADD COLUMN match_error VARCHAR",
        # DuckDB cannot add a column with a CHECK; the closed sets are held by the code
        # (matching.VERDICTS, proposal's outcomes) and tested.
        "ALTER TABLE reproposals ADD COLUMN verdict VARCHAR",
        "ALTER TABLE reproposals ADD COLUMN matcher VARCHAR",
        "ALTER TABLE reproposals ADD COLUMN outcome VARCHAR",
    ):
        con.execute(statement)
    rows = con.execute("SELECT id, initial_text, final_text FROM memories ORDER BY recorded_at, id")
    backfill = [
        (memory_id, sorted(content_terms(initial) | content_terms(final)))
        for memory_id, initial, final in rows.fetchall()
    ]
    for memory_id, terms in backfill:
        con.execute(
            "UPDATE memories SET match_terms = ?, insert_seq = nextval('memory_insert_seq') "
            "WHERE id = ?",
            [terms, memory_id],
        )
    con.execute(
        "UPDATE reproposals SET verdict = 'same', matcher = match_type, outcome = CASE "
        "match_kind WHEN 'rejected' THEN 'suppressed' WHEN 'pending' THEN 'merged' "
        "ELSE 'reinforced' END"
    )
    con.execute(
        """CREATE OR REPLACE VIEW v_reproposals AS
        SELECT id, recorded_at, memory_id, match_kind AS kind, match_type, similarity,
            verdict, matcher, outcome, proposed_text, category, scope, npc, team,
            conversation_id, source_message_id, extractor_model AS model, provider,
            prompt_version
        FROM reproposals"""
    )


@migration
def m012_one_card_per_fact(con: duckdb.DuckDBPyConnection) -> None:
    # One card per fact. A re-proposal keeps what its card shows of it (evidence, flags,
    # confidence) and when a reviewer was first shown it as an automatic outcome; a
    # reviewer who says an automatic outcome was wrong (a split off a card, a requeue of
    # a suppressed or reinforced repeat) leaves a label, one per re-proposal, naming the
    # card it became: the lab's own measure of how often its matcher is right.
    for statement in (
        "ALTER TABLE reproposals ADD COLUMN evidence VARCHAR",
        "ALTER TABLE reproposals ADD COLUMN flags VARCHAR[]",
        "ALTER TABLE reproposals ADD COLUMN confidence DOUBLE",
        "ALTER TABLE reproposals ADD COLUMN listed_at TIMESTAMP",
        """CREATE TABLE match_labels (
            reproposal_id VARCHAR PRIMARY KEY,
            label VARCHAR NOT NULL CHECK (label IN ('split', 'requeued')),
            new_memory_id VARCHAR NOT NULL,
            labelled_by VARCHAR NOT NULL,
            labelled_at TIMESTAMP NOT NULL
        )""",
        "CREATE INDEX reproposals_memory ON reproposals (memory_id)",  # a card's wordings
        """CREATE OR REPLACE VIEW v_reproposals AS
        SELECT r.id, r.recorded_at, r.memory_id, r.match_kind AS kind, r.match_type,
            r.similarity, r.verdict, r.matcher, r.outcome, r.proposed_text, r.category,
            r.scope, r.npc, r.team, r.conversation_id, r.source_message_id,
            r.extractor_model AS model, r.provider, r.prompt_version, r.listed_at,
            l.label, l.new_memory_id, l.labelled_by, l.labelled_at
        FROM reproposals r LEFT JOIN match_labels l ON l.reproposal_id = r.id""",
    ):
        con.execute(statement)


@migration
def m013_match_terms_as_text(con: duckdb.DuckDBPyConnection) -> None:
    # A memory's content terms move from a list column (match_terms) to text
    # (match_text, space-separated: a term never holds a space). On every insert into a
    # table with indexes, DuckDB writes the whole block of a list column that the new
    # row's vector shares with stored rows to its write-ahead log: ~96 KB a candidate,
    # a checkpoint (a second or more at 100k memories) every ~170 candidates. DuckDB
    # cannot drop a column of an indexed table, so match_terms stays, always NULL. No
    # cache holds the terms (the neighbour index reloads after a reconnect): no new epoch.
    con.execute("ALTER TABLE memories ADD COLUMN match_text VARCHAR")
    con.execute(
        "UPDATE memories SET match_terms = NULL, "
        "match_text = nullif(array_to_string(list_sort(match_terms), ' '), '') "
        "WHERE match_terms IS NOT NULL"
    )


@migration
def m014_endpoints_without_credentials(con: duckdb.DuckDBPyConnection) -> None:
    # A job's endpoint URL (api_base=...) was stored as given, a password or a key in
    # its query included. It keeps its scheme, host, port and path now; the option is
    # named among the job's secret options, so the job asks for the full URL again
    # (nb.extraction.retry(job_id, api_base=...)) rather than calling the bare one.
    found = con.execute(
        "SELECT id, endpoint, secret_options FROM extraction_jobs WHERE endpoint LIKE '%://%'"
    ).fetchall()
    for job_id, endpoint, names in found:
        if changed := endpoint_without_credentials(endpoint, names):
            con.execute(
                "UPDATE extraction_jobs SET endpoint = ?, secret_options = ? WHERE id = ?",
                [*changed, job_id],
            )


def endpoint_without_credentials(
    endpoint: str, names: list[str] | None
) -> tuple[str, list[str]] | None:
    """A stored endpoint (JSON) whose URLs held credentials, stripped, and the job's
    secret options with those URLs' names added; None if it held none."""
    options = json.loads(endpoint)
    urls = [
        key for key, value in options.items()
        if isinstance(value, str) and "://" in value and has_credentials(value)
    ]  # fmt: skip
    if not urls:
        return None
    stripped = {key: strip_credentials(v) if key in urls else v for key, v in options.items()}
    return json.dumps(stripped), sorted({*(names or []), *urls})


@migration
def m015_proposal_locks(con: duckdb.DuckDBPyConnection) -> None:
    # The rows proposals lock on PostgreSQL, one per text. Proposals of one text take
    # the row of its hash until they commit (an insert, or an update of the row that
    # is there): a row lock needs the UPDATE privilege, which a reader role lacks, so a
    # reader cannot hold a proposal up as it could an advisory lock. The embedded file's
    # lock already serialises writers: DuckDB leaves it empty, and has it so that both
    # backends keep one schema.
    con.execute("CREATE TABLE proposal_locks (text_hash VARCHAR PRIMARY KEY)")


#: Whether a decided memory's text is a wording the model proposed for its card (a
#: merged re-proposal) rather than the reviewer's own: ``v_memories.other_wording``.
OTHER_WORDING = (
    "(status <> 'pending_approval' AND status <> 'deferred' "
    "AND initial_text <> final_text AND EXISTS (SELECT 1 FROM reproposals r "
    "WHERE r.memory_id = memories.id AND r.outcome = 'merged' "
    "AND r.proposed_text = memories.final_text))"
)


@migration
def m016_approved_wording(con: duckdb.DuckDBPyConnection) -> None:
    # Approving another wording of a card (a merged re-proposal: the model's wording, not
    # the reviewer's) is an approval of that wording: status human-approved, and the
    # event names the wording (its re-proposal id). Earlier ones were recorded as edits;
    # the audit log is append-only and is not rewritten: v_memories tells them by their
    # data (the approved text is a wording merged into the card), old and new alike, so
    # ``edited`` counts only the reviewer's own text. No memory row changes: no new epoch.
    con.execute("ALTER TABLE memory_events ADD COLUMN wording VARCHAR")
    con.execute(
        f"""CREATE OR REPLACE VIEW v_memories AS
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
        FROM memories"""
    )
    con.execute(
        """CREATE OR REPLACE VIEW v_decisions AS
        SELECT e.seq, e.memory_id, e.occurred_at, e.actor AS reviewer, e.action,
            e.from_status, e.to_status, e.text_before, e.text_after, e.reason, e.batch_id,
            e.undoes,
            EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) AS undone,
            e.lead_time_ms, e.time_spent_ms, e.review_session, e.wording,
            m.npc, m.team, m.scope, m.category, m.extractor_model AS model, m.provider,
            m.prompt_version
        FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id"""
    )


@migration
def m017_imported_records(con: duckdb.DuckDBPyConnection) -> None:
    # Where imported memories came from: one row per record of another tool (npcpy,
    # mem0, Letta) that was read, keyed by the source and the record's own id, so the
    # same file imported again imports nothing new. It names the memory the record
    # became or matched, what happened to it, and the source's provenance as JSON.
    con.execute(
        f"""CREATE TABLE imported_records (
            source VARCHAR NOT NULL {_one_of("source", IMPORT_SOURCES)},
            source_key VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            outcome VARCHAR NOT NULL {_one_of("outcome", IMPORT_OUTCOMES)},
            source_file VARCHAR,
            source_time TIMESTAMP,
            details VARCHAR,
            imported_by VARCHAR NOT NULL,
            imported_at TIMESTAMP NOT NULL,
            PRIMARY KEY (source, source_key)
        )"""
    )


#: The tables of ``m018_reproducible_runs``, in SQL both engines take as it is.
RUNS_TABLES = (
    # A snapshot is a row, not a copy: the audit log is append-only, so the memories as
    # they stood are rebuilt from it. ``event_seq`` is the last event of this store the
    # snapshot includes (exact, unlike a time: events may share a microsecond, and
    # kernels' clocks differ), ``user_event_seq`` the same in the user's store (global
    # scope). Labels are unique per project; any number of snapshots may have none.
    """CREATE TABLE snapshots (
        id VARCHAR PRIMARY KEY,
        label VARCHAR UNIQUE,
        taken_at TIMESTAMP NOT NULL,
        taken_by VARCHAR NOT NULL,
        event_seq BIGINT NOT NULL,
        user_event_seq BIGINT NOT NULL,
        content_hash VARCHAR NOT NULL,
        memories BIGINT NOT NULL
    )""",
    # Every recorded call is kept; a replay serves the newest one of its fingerprint.
    """CREATE TABLE model_recordings (
        id VARCHAR PRIMARY KEY,
        fingerprint VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        caller VARCHAR,
        request VARCHAR NOT NULL,
        reply VARCHAR NOT NULL,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        recorded_at TIMESTAMP NOT NULL
    )""",
    "CREATE INDEX model_recordings_fingerprint ON model_recordings (fingerprint)",
)


@migration
def m018_reproducible_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Reproducible runs: snapshots (a named store time and the hash of what was approved
    then) and recorded model replies (keyed by a fingerprint of the request)."""
    for statement in RUNS_TABLES:
        con.execute(statement)


@migration
def m019_rehash_values(con: duckdb.DuckDBPyConnection) -> None:
    # Normalisation no longer changes a value: a sign, an exponent (superscripts,
    # <sup>, **), subscript digits and a unit symbol's case are kept ("10⁵" was "105",
    # "-20 °C" was "20 °C", "5 MW" was "5 mw"), and combining marks on Latin letters
    # and a lone lookalike letter are folded. Every stored hash and normalised text is
    # recomputed, and the content terms (number words are now their digits), so that
    # old tombstones hold against the same disguises and never against a correction.
    # Rows keyed by a memory's text hash follow it, as in m008. No cache can hold the
    # old hashes: a client with older code refuses this store, and this one migrates it
    # on open, before any cache is filled.
    import pandas as pd

    rows = con.execute(
        "SELECT id, initial_text, final_text, initial_hash, final_hash, norm_text, match_text "
        "FROM memories"
    ).fetchall()
    changed = rehashed_rows(rows)
    if not changed:
        return
    frame = pd.DataFrame(changed, columns=list(REHASHED_COLUMNS))
    con.register("rehashed", frame)
    try:
        con.execute(
            "UPDATE memories SET initial_hash = r.new_initial, final_hash = r.new_final, "
            "norm_text = r.new_norm, match_text = r.new_terms FROM rehashed r "
            "WHERE memories.id = r.id"
        )
        for table in ("context_injections", "concept_extractions", "memory_concepts",
                      "concept_relations"):  # fmt: skip
            con.execute(
                f"UPDATE {table} SET memory_hash = r.new_final FROM rehashed r "
                f"WHERE {table}.memory_id = r.id AND {table}.memory_hash = r.old_final"
            )
    finally:
        con.unregister("rehashed")


#: What ``rehashed_rows`` gives for each memory whose stored text keys changed.
REHASHED_COLUMNS = ("id", "old_final", "new_initial", "new_final", "new_norm", "new_terms")


def rehashed_rows(rows: list[tuple]) -> list[tuple]:
    """For memory rows (id, initial text, final text, initial hash, final hash, norm
    text, match text), the new keys of those today's normalisation keys differently
    (``REHASHED_COLUMNS``): both backends' rehash migrations write these."""
    from ..._foundations.terms import content_terms, joined_terms
    from ..._foundations.text import content_hash, normalise

    changed = []
    for memory_id, initial, final, initial_hash, final_hash, norm, terms in rows:
        new = (
            content_hash(initial),
            content_hash(final),
            normalise(final),
            joined_terms(content_terms(initial) | content_terms(final)),
        )
        if new != (initial_hash, final_hash, norm, terms):
            changed.append((memory_id, final_hash, *new))
    return changed


@migration
def m020_judged_neighbours(con: duckdb.DuckDBPyConnection) -> None:
    # Matching keeps what it did with each candidate. A memory keeps its sentence vector
    # (match_vector: the dense half of the neighbour index, computed once at insert;
    # rows from before are embedded on the first load of the index and written back),
    # and a queued candidate, like a re-proposal, keeps who judged it and its verdict,
    # the ids of the neighbours shown to the matcher (neighbour recall is measured from
    # them), the model judge's calls, tokens and milliseconds, and, on a re-proposal too,
    # why a matcher failed (the model judge falls back to the offline matcher).
    for statement in (
        "ALTER TABLE memories ADD COLUMN match_vector BLOB",
        "ALTER TABLE memories ADD COLUMN matcher VARCHAR",
        "ALTER TABLE memories ADD COLUMN verdict VARCHAR",
        *JUDGING_COLUMNS.format(table="memories").split(";"),
        *JUDGING_COLUMNS.format(table="reproposals").split(";"),
        "ALTER TABLE reproposals ADD COLUMN match_error VARCHAR",
    ):
        con.execute(statement)


#: What matching records of its work on a candidate, in both tables (both backends).
JUDGING_COLUMNS = (
    "ALTER TABLE {table} ADD COLUMN match_neighbours VARCHAR;"
    "ALTER TABLE {table} ADD COLUMN match_calls INTEGER;"
    "ALTER TABLE {table} ADD COLUMN match_tokens INTEGER;"
    "ALTER TABLE {table} ADD COLUMN match_ms DOUBLE"
)


#: The votes of independent review (``m021_votes``), the same on both backends: one row
#: per vote, never deleted. A vote's own columns are written once; the markers say
#: what became of it (replaced by the voter's next vote, withdrawn by undo, or settled by
#: the event that made its round final).
VOTES_TABLE = f"""CREATE TABLE votes (
    id VARCHAR PRIMARY KEY,
    memory_id VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    decision VARCHAR NOT NULL {_one_of("decision", VOTE_DECISIONS)},
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
_EVENT_COLUMNS_M016 = (
    "seq, memory_id, occurred_at, actor, action, from_status, to_status, text_before, "
    "text_after, reason, batch_id, undoes, lead_time_ms, time_spent_ms, review_session, "
    "state_before, wording"
)


@migration
def m021_votes(con: duckdb.DuckDBPyConnection) -> None:
    """Independent review: the ``votes`` table (one row per vote: who, what, the text
    approved or edited and its hash, reason, time spent, review session; markers for a
    vote replaced, withdrawn or settled), the audit log's vote actions (vote,
    replace_vote, withdraw_vote, agree, adjudicate) and the vote an event records
    (``memory_events.vote_id``). A card's status stays ``pending_approval`` while its
    votes accumulate and while it waits for adjudication: the approval predicate is
    unchanged. DuckDB cannot change a CHECK, so the audit log is copied into a table
    with the wider one, every event and its ``seq`` as they were."""
    con.execute(VOTES_TABLE)
    con.execute("CREATE INDEX votes_memory ON votes (memory_id)")
    con.execute(
        f"""CREATE TABLE memory_events_m021 (
            seq BIGINT PRIMARY KEY,
            memory_id VARCHAR NOT NULL,
            occurred_at TIMESTAMP NOT NULL,
            actor VARCHAR NOT NULL,
            action VARCHAR NOT NULL {_one_of("action", EVENT_ACTIONS)},
            from_status VARCHAR,
            to_status VARCHAR NOT NULL {_one_of("to_status", STATUSES)},
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
    )
    con.execute(
        f"INSERT INTO memory_events_m021 ({_EVENT_COLUMNS_M016}) "
        f"SELECT {_EVENT_COLUMNS_M016} FROM memory_events"
    )
    con.execute("DROP TABLE memory_events")
    con.execute("ALTER TABLE memory_events_m021 RENAME TO memory_events")
    con.execute("CREATE INDEX memory_events_memory ON memory_events (memory_id)")


#: ``m022_snapshot_event_floor`` on both engines: a snapshot includes the events numbered
#: above ``event_floor`` up to ``event_seq``. 0 for a snapshot taken in its own store (every
#: event up to ``event_seq``); a bundle merged into a project with events of its own gives
#: its snapshots the number before their first event here (store/bundle/load.py), and -1
#: to one whose events a merge could not place in one range (reading at it is refused).
SNAPSHOT_FLOOR = "ALTER TABLE snapshots ADD COLUMN event_floor BIGINT DEFAULT 0"


@migration
def m022_snapshot_event_floor(con: duckdb.DuckDBPyConnection) -> None:
    """Snapshots name where their audit events start too (event_floor), so a
    bundle's snapshot merged into a project that has events of its own stays exact."""
    con.execute(SNAPSHOT_FLOOR)


@migration
def m023_experiments(con: duckdb.DuckDBPyConnection) -> None:
    # Extraction experiments (``experiment_tables``): their tables, the arm mark on
    # memories (NULL for every memory so far: live), and the views made to leave an
    # experiment's memories out. No memory row changes: no new epoch.
    for statement in EXPERIMENT_TABLES:
        con.execute(statement)
    for view in EXPERIMENT_VIEWS:
        con.execute(view.replace("{other_wording}", OTHER_WORDING))
