"""The schema on PostgreSQL: the same tables, columns, closed sets and sequences as the
DuckDB migrations, recorded under the same migration names.

One PostgreSQL schema holds one project (``_foundations.store_url.project_schema``). The DuckDB
store builds its schema step by step (``migrations``); here the first step builds the
schema as those steps left it at ``m012`` and records all twelve names, so both
backends list the same migrations. Every later DuckDB migration needs its PostgreSQL
twin under the same name (``@pg_migration("m013_...")``): ``tests/test_pg_store.py``
fails until it exists and holds the two schemas' tables and columns in step.

Several clients may open a new project at once: migrations run in one transaction
under an advisory lock keyed by the schema's name, waited for at most ``lock_timeout``
seconds (any role can take an advisory lock: one that holds it makes opening fail with
a clear error, never hang), and a client that finds every migration recorded takes no
lock and needs no privilege beyond reading ``_migrations`` (so reviewer and reader roles
never run DDL). The same transaction creates the schema's record of its project
(``pg_project``), or writes it into a schema made before records, when the role may.

The analytical views are not created here: ``%npc_sql`` reads PostgreSQL through
DuckDB, which defines them with the very SQL of the DuckDB migrations
(``server.attach``). The audit log is append-only twice over: the app roles are granted
only SELECT and INSERT on it (docs/lab.md), and a trigger refuses UPDATE, DELETE and
TRUNCATE for everybody, the owner included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._foundations.settings import Settings
from ..._foundations.utc import utc_now
from ...errors import StoreError
from ...vocabulary import (
    CATEGORIES,
    EVENT_ACTIONS,
    IMPORT_OUTCOMES,
    IMPORT_SOURCES,
    SCOPES,
    STATUSES,
)
from .chains import CHAIN_KEYS, CHAINED, add_chain_columns, chain_links
from .experiment_tables import EXPERIMENT_TABLES
from .matching_columns import JUDGING_COLUMNS
from .migrations import MIGRATIONS
from .pg_project import (
    claim_schema,
    record_settled,
    refuse_legacy_twin,
    refuse_unknown_project,
    schema_exists,
)
from .rewrites import REHASHED_COLUMNS, endpoint_without_credentials, rehashed_rows
from .runs_tables import RUNS_TABLES, SNAPSHOT_FLOOR
from .votes_table import (
    PG_BLIND_VOTES_M026,
    PG_REVIEWER_ROLE,
    PG_REVIEWER_ROLE_TRIGGERS,
    POLICY_TABLE,
    REVIEWER_ROLE_COLUMNS,
    VOTES_TABLE,
    pg_policy_guards,
)

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "LOCK_NOT_AVAILABLE",
    "PG_MIGRATIONS",
    "apply_pg_migrations",
    "lock_timeout_setting",
    "pg_migration",
]

#: Seconds a client waits for the migration lock when no setting says (``lock_timeout``).
DEFAULT_LOCK_TIMEOUT = float(Settings.model_fields["lock_timeout"].default)

#: The SQLSTATE of a lock wait that ran out of ``lock_timeout`` (``lock_not_available``).
LOCK_NOT_AVAILABLE = "55P03"


def lock_timeout_setting(seconds: float) -> str:
    """``seconds`` as a value of PostgreSQL's ``lock_timeout``: whole milliseconds, at
    least one (zero there means to wait for ever). The migrations wait this long for
    their lock; the server store sets it on every session."""
    return f"{max(1, round(seconds * 1000))}ms"


PgMigration = Callable[[Any], None]
#: (the DuckDB migration names a step stands for, the step), in order.
PG_MIGRATIONS: list[tuple[tuple[str, ...], PgMigration]] = []


def pg_migration(*names: str) -> Callable[[PgMigration], PgMigration]:
    """Register the PostgreSQL step for these DuckDB migrations (by name)."""

    def register(fn: PgMigration) -> PgMigration:
        PG_MIGRATIONS.append((names, fn))
        return fn

    return register


def apply_pg_migrations(
    con: Any,
    schema: str,
    *,
    project: str | None = None,
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
    create: bool = True,
    where: str = "this server",
) -> list[str]:
    """Bring ``schema`` up to date on a psycopg connection (autocommit); return the
    migration names applied now. ``schema`` is a safe identifier (``project_schema``).
    With ``project`` (its name, as ``project_name`` gives it) the schema records the
    project it holds and is refused if it records another (``pg_project``). Unless
    ``create``, a schema that does not exist is never created: a StoreError lists the
    projects ``where`` (the server, as shown) holds."""
    if project is not None:
        refuse_legacy_twin(con, schema, project)
    if not create:
        refuse_unknown_project(con, schema, project or schema, where)
    if _recorded(con, schema) >= {m.__name__ for m in MIGRATIONS} and (
        project is None or record_settled(con, schema, project)
    ):
        return []  # the common case: no lock, no DDL
    try:
        with con.transaction():
            return _migrate(con, schema, project, lock_timeout, None if create else where)
    except Exception as exc:
        if getattr(exc, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            raise StoreError(
                f"Could not take the lock that guards creating and migrating the schema "
                f"{schema} within {lock_timeout:g} s (the lock_timeout setting): another "
                "session holds it, or holds one of the schema's tables. Nothing was "
                "changed. Open the project again; if this persists, find that session "
                "in pg_stat_activity and end it."
            ) from None
        raise


def _migrate(
    con: Any, schema: str, project: str | None, lock_timeout: float, existing_at: str | None
) -> list[str]:
    """The migrations ``schema`` lacks, in the caller's transaction, under the lock;
    with ``existing_at`` (the server, as shown) a schema dropped meanwhile is refused."""
    con.execute("SELECT set_config('lock_timeout', %s, true)", [lock_timeout_setting(lock_timeout)])
    con.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ["npc_nb:" + schema])
    if existing_at is not None:
        refuse_unknown_project(con, schema, project or schema, existing_at)
    if not schema_exists(con, schema):  # IF NOT EXISTS would still need CREATE on the database
        con.execute(f"CREATE SCHEMA {schema}")
    con.execute(f"SET LOCAL search_path TO {schema}")
    if project is not None:
        claim_schema(con, schema, project)
    con.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)"
    )
    recorded = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    known = {m.__name__ for m in MIGRATIONS}
    if unknown := sorted(recorded - known):
        raise StoreError(
            f"This store was written by a newer npc_nb (migrations {', '.join(unknown)}). "
            "Upgrade npc_nb to open it."
        )
    applied: list[str] = []
    for names, step in PG_MIGRATIONS:
        if set(names) <= recorded:
            continue
        step(con)
        for name in names:
            con.execute("INSERT INTO _migrations VALUES (%s, %s)", [name, utc_now()])
        applied += names
    return applied


def _recorded(con: Any, schema: str) -> set[str]:
    exists = con.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
        "AND table_name = '_migrations'",
        [schema],
    ).fetchone()
    if exists is None:
        return set()
    return {row[0] for row in con.execute(f"SELECT name FROM {schema}._migrations").fetchall()}


def _one_of(column: str, values: tuple[str, ...]) -> str:
    # Built from the vocabulary constants only, never from user input.
    listed = ", ".join(f"'{v}'" for v in values)
    return f"CHECK ({column} IN ({listed}))"


_M001_TO_M012 = tuple(m.__name__ for m in MIGRATIONS if m.__name__ < "m013")


@pg_migration(*_M001_TO_M012)
def p012_schema(con: Any) -> None:
    """The schema as the DuckDB migrations m001 to m012 leave it (same column order)."""
    for statement in _SCHEMA:
        con.execute(statement)


@pg_migration("m013_match_terms_as_text")
def p013_match_terms_as_text(con: Any) -> None:
    """The terms as text, as on DuckDB (match_terms stays, always NULL, in both)."""
    con.execute("ALTER TABLE memories ADD COLUMN match_text VARCHAR")
    con.execute(
        "UPDATE memories SET match_terms = NULL, "
        "match_text = nullif(array_to_string(match_terms, ' '), '') "
        "WHERE match_terms IS NOT NULL"
    )


@pg_migration("m014_endpoints_without_credentials")
def p014_endpoints_without_credentials(con: Any) -> None:
    """A job's endpoint URL without its credentials, as on DuckDB."""
    found = con.execute(
        "SELECT id, endpoint, secret_options FROM extraction_jobs WHERE endpoint LIKE '%%://%%'"
    ).fetchall()
    for job_id, endpoint, names in found:
        if changed := endpoint_without_credentials(endpoint, names):
            con.execute(
                "UPDATE extraction_jobs SET endpoint = %s, secret_options = %s WHERE id = %s",
                [*changed, job_id],
            )


@pg_migration("m015_proposal_locks")
def p015_proposal_locks(con: Any) -> None:
    """The rows proposals of one text lock (``PostgresStore.lock_text``)."""
    con.execute("CREATE TABLE proposal_locks (text_hash VARCHAR PRIMARY KEY)")


_SCHEMA = [
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
        latency_ms DOUBLE PRECISION,
        created_at TIMESTAMP NOT NULL
    )""",
    "CREATE INDEX messages_conversation ON messages (conversation_id)",
    "CREATE SEQUENCE memory_insert_seq START 1",
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
        confidence DOUBLE PRECISION
            CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
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
        text_change DOUBLE PRECISION,
        insert_seq BIGINT,
        match_terms VARCHAR[],
        updates VARCHAR,
        differs VARCHAR,
        match_error VARCHAR,
        CHECK (scope <> 'npc' OR npc IS NOT NULL),
        CHECK (scope <> 'team' OR team IS NOT NULL),
        CHECK (valid_from IS NULL OR valid_to IS NULL OR valid_from < valid_to)
    )""",
    "CREATE INDEX memories_final_hash ON memories (final_hash)",
    "CREATE INDEX memories_initial_hash ON memories (initial_hash)",
    "CREATE INDEX memories_insert_seq ON memories (insert_seq)",
    "CREATE INDEX memories_open ON memories (status)",
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
    "CREATE INDEX memory_events_undoes ON memory_events (undoes)",
    # Append-only for every role, the owner included (the grants keep app roles out too).
    """CREATE FUNCTION memory_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'memory_events is append-only: % is refused', TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END $$""",
    """CREATE TRIGGER memory_events_no_change BEFORE UPDATE OR DELETE ON memory_events
        FOR EACH ROW EXECUTE FUNCTION memory_events_append_only()""",
    """CREATE TRIGGER memory_events_no_truncate BEFORE TRUNCATE ON memory_events
        FOR EACH STATEMENT EXECUTE FUNCTION memory_events_append_only()""",
    """CREATE TABLE reproposals (
        id VARCHAR PRIMARY KEY,
        recorded_at TIMESTAMP NOT NULL,
        memory_id VARCHAR NOT NULL,
        match_kind VARCHAR NOT NULL
            CHECK (match_kind IN ('rejected', 'approved', 'pending', 'superseded')),
        match_type VARCHAR NOT NULL CHECK (match_type IN ('exact', 'near')),
        similarity DOUBLE PRECISION NOT NULL,
        proposed_text VARCHAR NOT NULL,
        category VARCHAR,
        scope VARCHAR,
        npc VARCHAR,
        team VARCHAR,
        conversation_id VARCHAR,
        source_message_id VARCHAR,
        extractor_model VARCHAR,
        provider VARCHAR,
        prompt_version VARCHAR,
        verdict VARCHAR,
        matcher VARCHAR,
        outcome VARCHAR,
        evidence VARCHAR,
        flags VARCHAR[],
        confidence DOUBLE PRECISION,
        listed_at TIMESTAMP
    )""",
    "CREATE INDEX reproposals_memory ON reproposals (memory_id)",
    """CREATE TABLE context_injections (
        message_id VARCHAR NOT NULL,
        memory_id VARCHAR NOT NULL,
        position INTEGER NOT NULL,
        memory_hash VARCHAR NOT NULL,
        injected_at TIMESTAMP NOT NULL
    )""",
    "CREATE INDEX context_injections_message ON context_injections (message_id)",
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
        finished_at TIMESTAMP,
        user_message_id VARCHAR,
        npc VARCHAR,
        team VARCHAR,
        claimed_by VARCHAR,
        candidates INTEGER,
        endpoint VARCHAR,
        secret_options VARCHAR[]
    )""",
    "CREATE TABLE store_state (key VARCHAR PRIMARY KEY, value BIGINT NOT NULL)",
    "INSERT INTO store_state VALUES ('decision_generation', 0)",
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
    """CREATE TABLE match_labels (
        reproposal_id VARCHAR PRIMARY KEY,
        label VARCHAR NOT NULL CHECK (label IN ('split', 'requeued')),
        new_memory_id VARCHAR NOT NULL,
        labelled_by VARCHAR NOT NULL,
        labelled_at TIMESTAMP NOT NULL
    )""",
]


@pg_migration("m016_approved_wording")
def p016_approved_wording(con: Any) -> None:
    """The event's approved wording, as on DuckDB (the views are DuckDB's, see above)."""
    con.execute("ALTER TABLE memory_events ADD COLUMN wording VARCHAR")


@pg_migration("m017_imported_records")
def p017_imported_records(con: Any) -> None:
    """Where imported memories came from, as on DuckDB."""
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


@pg_migration("m018_reproducible_runs")
def p018_reproducible_runs(con: Any) -> None:
    """Snapshots and recorded model replies, as on DuckDB (the same statements), and
    append-only like the audit log, for every role."""
    for statement in RUNS_TABLES:
        con.execute(statement)
    con.execute(_APPEND_ONLY)
    for table in ("snapshots", "model_recordings"):
        con.execute(
            f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION npc_nb_append_only()"
        )
        con.execute(
            f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION npc_nb_append_only()"
        )


_APPEND_ONLY = """CREATE FUNCTION npc_nb_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% is append-only: % is refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END $$"""


@pg_migration("m019_rehash_values")
def p019_rehash_values(con: Any) -> None:
    """Hashes, normalised texts and terms recomputed as on DuckDB (values kept)."""
    rows = con.execute(
        "SELECT id, initial_text, final_text, initial_hash, final_hash, norm_text, match_text "
        "FROM memories"
    ).fetchall()
    changed = rehashed_rows(rows)
    if not changed:
        return
    con.execute(
        "CREATE TEMP TABLE rehashed (id VARCHAR, old_final VARCHAR, new_initial VARCHAR, "
        "new_final VARCHAR, new_norm VARCHAR, new_terms VARCHAR) ON COMMIT DROP"
    )
    with con.cursor().copy(f"COPY rehashed ({', '.join(REHASHED_COLUMNS)}) FROM STDIN") as copy:
        for row in changed:
            copy.write_row(row)
    con.execute(
        "UPDATE memories SET initial_hash = r.new_initial, final_hash = r.new_final, "
        "norm_text = r.new_norm, match_text = r.new_terms FROM rehashed r WHERE memories.id = r.id"
    )
    for table in ("context_injections", "concept_extractions", "memory_concepts",
                  "concept_relations"):  # fmt: skip
        con.execute(
            f"UPDATE {table} SET memory_hash = r.new_final FROM rehashed r "
            f"WHERE {table}.memory_id = r.id AND {table}.memory_hash = r.old_final"
        )


@pg_migration("m020_judged_neighbours")
def p020_judged_neighbours(con: Any) -> None:
    """What matching records of a candidate, as on DuckDB (vectors as bytea)."""
    for statement in (
        "ALTER TABLE memories ADD COLUMN match_vector BYTEA",
        "ALTER TABLE memories ADD COLUMN matcher VARCHAR",
        "ALTER TABLE memories ADD COLUMN verdict VARCHAR",
        *JUDGING_COLUMNS.format(table="memories").split(";"),
        *JUDGING_COLUMNS.format(table="reproposals").split(";"),
        "ALTER TABLE reproposals ADD COLUMN match_error VARCHAR",
    ):
        con.execute(statement.replace(" DOUBLE", " DOUBLE PRECISION"))


@pg_migration("m021_votes")
def p021_votes(con: Any) -> None:
    """The votes of independent review, the audit log's vote actions and the vote an
    event records, as on DuckDB (here the CHECK is replaced in place: no copy)."""
    con.execute(VOTES_TABLE)
    con.execute("CREATE INDEX votes_memory ON votes (memory_id)")
    con.execute("ALTER TABLE memory_events DROP CONSTRAINT IF EXISTS memory_events_action_check")
    con.execute(
        f"ALTER TABLE memory_events ADD CONSTRAINT memory_events_action_check "
        f"{_one_of('action', EVENT_ACTIONS)}"
    )
    con.execute("ALTER TABLE memory_events ADD COLUMN vote_id VARCHAR")


@pg_migration("m022_snapshot_event_floor")
def p022_snapshot_event_floor(con: Any) -> None:
    """The snapshots' ``event_floor``, as on DuckDB (adding a column fires no trigger)."""
    con.execute(SNAPSHOT_FLOOR)


@pg_migration("m023_experiments")
def p023_experiments(con: Any) -> None:
    """Extraction experiments' tables and the arm mark on memories, as on DuckDB (the
    views are DuckDB's)."""
    for statement in EXPERIMENT_TABLES:
        con.execute(statement)


@pg_migration("m024_reviewer_identity")
def p024_reviewer_identity(con: Any) -> None:
    """``reviewer_role`` as on DuckDB, written by the server: the connected role
    (``votes_table``); earlier rows keep NULL."""
    for statement in (*REVIEWER_ROLE_COLUMNS, PG_REVIEWER_ROLE, *PG_REVIEWER_ROLE_TRIGGERS):
        con.execute(statement)
    for table in ("votes", "memory_events"):
        con.execute(f"ALTER TABLE {table} ALTER COLUMN reviewer_role SET DEFAULT session_user")


@pg_migration("m025_review_policy")
def p025_review_policy(con: Any) -> None:
    """The review policy as on DuckDB; only the owner inserts, nobody changes a row."""
    for statement in (POLICY_TABLE, *pg_policy_guards()):
        con.execute(statement)


@pg_migration("m026_blind_votes")
def p026_blind_votes(con: Any) -> None:
    """The votes' columns as on DuckDB; here also append-only for every role (a
    trigger), attributed to the connected role, and blind by row-level security
    (``votes_table.PG_BLIND_VOTES_M026``)."""
    schema = con.execute("SELECT current_schema()").fetchone()[0]
    for statement in PG_BLIND_VOTES_M026:
        con.execute(statement.replace("{schema}", schema))


@pg_migration("m027_hash_chains")
def p027_hash_chains(con: Any) -> None:
    """The hash chains, as on DuckDB (``chains``). The append-only tables' triggers now
    let one change through: a row with no link yet gets one (its other columns as they
    were), which the backfill here and a bundle merge's linking need."""
    con.execute(_LINK_ONLY)
    schema = con.execute("SELECT current_schema()").fetchone()[0]
    con.execute(_CHAIN_HEAD.replace("{schema}", schema))
    for table in ("memory_events", "model_recordings", "votes"):
        con.execute(f"DROP TRIGGER {table}_no_change ON {table}")
        con.execute(
            f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION npc_nb_append_only_but_link()"
        )
    for table in CHAINED:
        add_chain_columns(con, table)
        links = chain_links(con, table, CHAIN_KEYS[table])
        if links:
            key_type = "BIGINT" if table == "memory_events" else "VARCHAR"
            con.execute(
                f"CREATE TEMP TABLE chain_links (k {key_type}, s BIGINT, h VARCHAR) ON COMMIT DROP"
            )
            with con.cursor().copy("COPY chain_links (k, s, h) FROM STDIN") as copy:
                for row in links:
                    copy.write_row(row)
            con.execute(
                f"UPDATE {table} SET chain_seq = l.s, chain_hash = l.h FROM chain_links l "
                f"WHERE {table}.{CHAIN_KEYS[table]} = l.k"
            )
            con.execute("DROP TABLE chain_links")
        con.execute(f"CREATE UNIQUE INDEX {table}_chain ON {table} (chain_seq)")


#: A chain's head, read as the owner: a reviewer appending a vote cannot read every vote
#: (row-level security), yet must link after the chain's last row. It returns a position
#: and a hash, nothing of any row's content.
_CHAIN_HEAD = """CREATE FUNCTION npc_nb_chain_head(p_table VARCHAR)
    RETURNS TABLE (chain_seq BIGINT, chain_hash VARCHAR)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema} AS $$
    BEGIN
        IF p_table NOT IN ('memory_events', 'votes', 'model_recordings') THEN
            RAISE EXCEPTION 'not a chained table: %', p_table;
        END IF;
        RETURN QUERY EXECUTE format(
            'SELECT chain_seq, chain_hash FROM %I WHERE chain_seq IS NOT NULL '
            'ORDER BY chain_seq DESC LIMIT 1', p_table);
    END $$"""

_LINK_ONLY = """CREATE FUNCTION npc_nb_append_only_but_link() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.chain_hash IS NULL
            AND to_jsonb(OLD) - 'chain_seq' - 'chain_hash'
                = to_jsonb(NEW) - 'chain_seq' - 'chain_hash' THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION '% is append-only: % is refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END $$"""
