"""Numbered schema migrations, applied on open, each in one transaction with its record.

A migration is a function named ``mNNN_description`` registered with ``@migration``;
duplicate names are refused at import time. ``apply_migrations`` runs, in order, every
migration the ``_migrations`` table does not list, each inside its own transaction
together with the row that records it, so a crash leaves either both or neither. A
store that lists a migration this code does not know was written by a newer npc_nb and
is refused rather than guessed at.

The CHECK constraints are generated from ``npc_nb.vocabulary`` so Python and the
database enforce the very same closed sets. The functions here are the history, in
order; their longer SQL lives in the modules beside this one (``initial_tables``,
``view_sql``, ...), each statement byte for byte as it ran, never edited afterwards.

A migration that changes memory rows (not just adds columns) must also start a new
epoch of the decision generation (``generation.rewrite_sql()``): caches patch
themselves from the audit log, and a migration writes no events.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import duckdb
import pandas as pd

from ..._foundations.utc import utc_now
from ...errors import StoreError
from .chains import CHAIN_KEYS, CHAINED, add_chain_columns, chain_links
from .experiment_tables import EXPERIMENT_TABLES, EXPERIMENT_VIEWS
from .initial_tables import INITIAL_TABLES
from .later_tables import CONCEPT_TABLES, IMPORTED_RECORDS_TABLE, MATCH_LABELS_TABLE
from .matching_columns import CARD_COLUMNS, JUDGING_COLUMNS, MATCHING_COLUMNS
from .rewrites import REHASHED_COLUMNS, endpoint_without_credentials, rehashed_rows
from .runs_tables import RUNS_TABLES, SNAPSHOT_FLOOR
from .view_sql import (
    ANALYTICS_VIEWS,
    APPROVED_MEMORIES_UTC,
    OTHER_WORDING,
    V_DECISIONS_M016,
    V_MEMORIES_M006,
    V_MEMORIES_M016,
    V_REPROPOSALS_M011,
    V_REPROPOSALS_M012,
)
from .votes_table import (
    BLIND_VOTES_M026,
    EVENT_COLUMNS_M016,
    EVENTS_TABLE_M021,
    POLICY_TABLE,
    REVIEWER_ROLE_COLUMNS,
    VOTES_TABLE,
)

__all__ = [
    "JUDGING_COLUMNS",
    "MIGRATIONS",
    "OTHER_WORDING",
    "REHASHED_COLUMNS",
    "RUNS_TABLES",
    "SNAPSHOT_FLOOR",
    "VOTES_TABLE",
    "apply_migrations",
    "endpoint_without_credentials",
    "migration",
    "rehashed_rows",
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


@migration
def m001_initial(con: duckdb.DuckDBPyConnection) -> None:
    """The first schema: conversations, messages, memories, the audit log, re-proposals,
    context injections, the approval view and the extraction queue."""
    for statement in INITIAL_TABLES:
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
    for statement in ANALYTICS_VIEWS:
        con.execute(statement)


@migration
def m005_concepts(con: duckdb.DuckDBPyConnection) -> None:
    # The knowledge graph is derived at read time from approved memories and these rows,
    # which are keyed by memory id AND text version (hash): a rejected, superseded or
    # undone memory contributes nothing, because it is no longer approved.
    for statement in CONCEPT_TABLES:
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
    con.execute(V_MEMORIES_M006)


@migration
def m007_utc_approval(con: duckdb.DuckDBPyConnection) -> None:
    # The approval predicate compared validity windows with now()::TIMESTAMP, which
    # follows the session's TimeZone setting: a query that changed it could re-open an
    # expired window. timezone('UTC', now()) is the UTC wall clock whatever the setting.
    con.execute(APPROVED_MEMORIES_UTC)


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

    for statement in MATCHING_COLUMNS:
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
    con.execute(V_REPROPOSALS_M011)


@migration
def m012_one_card_per_fact(con: duckdb.DuckDBPyConnection) -> None:
    # One card per fact. A re-proposal keeps what its card shows of it (evidence, flags,
    # confidence) and when a reviewer was first shown it as an automatic outcome; a
    # reviewer who says an automatic outcome was wrong (a split off a card, a requeue of
    # a suppressed or reinforced repeat) leaves a label, one per re-proposal, naming the
    # card it became: the lab's own measure of how often its matcher is right.
    for statement in (
        *CARD_COLUMNS,
        MATCH_LABELS_TABLE,
        "CREATE INDEX reproposals_memory ON reproposals (memory_id)",  # a card's wordings
        V_REPROPOSALS_M012,
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


@migration
def m015_proposal_locks(con: duckdb.DuckDBPyConnection) -> None:
    # The rows proposals lock on PostgreSQL, one per text. Proposals of one text take
    # the row of its hash until they commit (an insert, or an update of the row that
    # is there): a row lock needs the UPDATE privilege, which a reader role lacks, so a
    # reader cannot hold a proposal up as it could an advisory lock. The embedded file's
    # lock already serialises writers: DuckDB leaves it empty, and has it so that both
    # backends keep one schema.
    con.execute("CREATE TABLE proposal_locks (text_hash VARCHAR PRIMARY KEY)")


@migration
def m016_approved_wording(con: duckdb.DuckDBPyConnection) -> None:
    # Approving another wording of a card (a merged re-proposal: the model's wording, not
    # the reviewer's) is an approval of that wording: status human-approved, and the
    # event names the wording (its re-proposal id). Earlier ones were recorded as edits;
    # the audit log is append-only and is not rewritten: v_memories tells them by their
    # data (the approved text is a wording merged into the card), old and new alike, so
    # ``edited`` counts only the reviewer's own text. No memory row changes: no new epoch.
    con.execute("ALTER TABLE memory_events ADD COLUMN wording VARCHAR")
    con.execute(V_MEMORIES_M016)
    con.execute(V_DECISIONS_M016)


@migration
def m017_imported_records(con: duckdb.DuckDBPyConnection) -> None:
    # Where imported memories came from: one row per record of another tool (npcpy,
    # mem0, Letta) that was read, keyed by the source and the record's own id, so the
    # same file imported again imports nothing new. It names the memory the record
    # became or matched, what happened to it, and the source's provenance as JSON.
    con.execute(IMPORTED_RECORDS_TABLE)


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
    con.execute(EVENTS_TABLE_M021)
    con.execute(
        f"INSERT INTO memory_events_m021 ({EVENT_COLUMNS_M016}) "
        f"SELECT {EVENT_COLUMNS_M016} FROM memory_events"
    )
    con.execute("DROP TABLE memory_events")
    con.execute("ALTER TABLE memory_events_m021 RENAME TO memory_events")
    con.execute("CREATE INDEX memory_events_memory ON memory_events (memory_id)")


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


@migration
def m024_reviewer_identity(con: duckdb.DuckDBPyConnection) -> None:
    """Who recorded each vote and audit event, beside its display name
    (``reviewer_role``, ``votes_table``); earlier rows keep NULL."""
    for statement in REVIEWER_ROLE_COLUMNS:
        con.execute(statement)


@migration
def m025_review_policy(con: duckdb.DuckDBPyConnection) -> None:
    """The lab's review policy, stored in the project (``review_policy``: its changes,
    append-only; ``votes_table``)."""
    con.execute(POLICY_TABLE)


@migration
def m026_blind_votes(con: duckdb.DuckDBPyConnection) -> None:
    """Votes append-only: a vote row is never changed; whether it was replaced,
    withdrawn or settled is read from later votes and the audit log (the markers
    ``replaced_by``, ``withdrawn_at`` and ``settled_seq`` go). A vote records the
    connected role (``reviewer_role``) and whether it completed its round
    (``closes_round``: from then on its voters may not withdraw or replace it). On
    PostgreSQL row-level security hides other reviewers' open votes."""
    for statement in BLIND_VOTES_M026:
        con.execute(statement)


@migration
def m027_hash_chains(con: duckdb.DuckDBPyConnection) -> None:
    """Tamper-evident history (``chains``): the audit log, the votes and the recorded
    replies each become a hash chain (``chain_seq``, ``chain_hash``), the rows already
    there chained in their order (no index: DuckDB cannot build one in the transaction
    that filled the column, and a chain's head is read by a scan). No memory row
    changes: no new epoch."""
    for table in CHAINED:
        add_chain_columns(con, table)
        links = chain_links(con, table, CHAIN_KEYS[table])
        if links:
            con.register("chain_links_frame", pd.DataFrame(links, columns=["k", "s", "h"]))
            con.execute(
                f"UPDATE {table} SET chain_seq = l.s, chain_hash = l.h "
                f"FROM chain_links_frame l WHERE {table}.{CHAIN_KEYS[table]} = l.k"
            )
            con.unregister("chain_links_frame")
