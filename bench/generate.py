"""Generate a realistic npc_nb store of 1k to 1M memories, set-wise in DuckDB.

    .venv/bin/python bench/generate.py FOLDER [--memories 100000] [--approved N] [--pending N]

The store is created with ``npc_nb.open`` (so every migration runs), then filled by a
handful of ``INSERT ... SELECT`` statements over ``range()``, never row by row:

- memories: statements built from word lists (subject, verb, object, qualifier and a
  reason, 19.2 million distinct combinations, 60 to 160 characters), 8
  personas in 3 teams, npc, team and global scopes, 6 categories, 4 extractor models and
  3 prompt versions over a year. Statuses: ``approved`` approved (every seventh of them
  edited by the reviewer), ``pending`` pending (the newest), and the rest rejected,
  superseded (each by an approved memory) or deferred. ``norm_text``, the hashes and
  ``match_text`` are computed in SQL exactly as ``npc_nb._text`` and ``npc_nb._terms``
  compute them (the word lists' terms are stemmed in Python once);
  ``tests/test_benchmarks_run.py`` checks that on a sample.
- their audit events, about three a memory: the proposal, the decision, and skips,
  deferrals and supersessions on the way;
- conversations and user messages the memories quote as evidence, re-proposals (one per
  five memories) and context injections (one per memory);
- concepts and relations for every memory's text (``memory_concepts``,
  ``concept_relations``), so the knowledge graph needs no extraction.

A million memories and three million events take about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import _OBJECTS, _QUALIFIERS, _SUBJECTS, _VERBS

import npc_nb
from npc_nb._foundations.terms import content_terms
from npc_nb.graph.concepts import concept_key
from npc_nb.store.generation import rewrite_sql

PERSONAS = (
    "analyst",
    "archivist",
    "coder",
    "editor",
    "field-lead",
    "mentor",
    "reviewer",
    "statistician",
)
TEAMS = ("methods", "fieldwork", "writing")
REVIEWERS = ("ada", "grace", "linus", "maria", "priya")
MODELS = ("npc_nb/offline", "openai/gpt-4o-mini", "anthropic/claude-haiku", "ollama/llama3")
#: Why: every statement ends with one, so texts run from about 60 to 160 characters.
REASONS = [
    "because the old pipeline kept failing",
    "since the reviewers asked for it",
    "to save a week of cleaning",
    "so that the numbers can be checked",
    "after the last two runs disagreed",
    "because storage costs doubled",
    "as the funder requires it",
    "to keep the interviews confidential",
    "because the students struggle with it",
    "so the lab can reuse it next year",
    "after the server outage in May",
    "because the licence changed",
    "to match the partner lab's setup",
    "since the sample size went up",
    "because it halves the runtime",
    "so that the figures stay consistent",
    "after a long discussion with Omar",
    "because the journal asked for open data",
    "to avoid double counting participants",
    "because the old results did not replicate",
    "for now",
    "as agreed",
    "until further notice",
    "to stay within budget",
    "because two coders disagreed on it",
    "since the deadline moved to June",
    "after the ethics board replied",
    "to make onboarding easier",
    "because the data manager insisted",
    "so nobody has to redo the merge by hand",
]
#: An edit: another qualifier and this closing phrase (so an edited text is unique).
EDIT_SUFFIX = ", per the revised plan"
#: The number of distinct statements, and a multiplier coprime to it that spreads
#: consecutive rows over the combinations (a bijection of 0..COMBINATIONS-1). Its
#: mixed-radix digits (9, 13, 29, 17, 11) are all non-zero, so neighbouring rows differ
#: in every part of the statement.
COMBINATIONS = len(_SUBJECTS) * len(_VERBS) * len(_OBJECTS) * len(_QUALIFIERS) * len(REASONS)
SPREAD = 9 + 20 * (13 + 20 * (29 + 40 * (17 + 40 * 11)))


@dataclass(frozen=True)
class Plan:
    """How many memories of each kind a generated store holds."""

    memories: int
    approved: int
    pending: int

    @classmethod
    def of(cls, memories: int, approved: int | None = None, pending: int | None = None) -> Plan:
        approved = memories * 6 // 10 if approved is None else approved
        pending = memories // 10 if pending is None else pending
        if not 1 <= memories <= COMBINATIONS:
            raise ValueError(f"memories must be from 1 to {COMBINATIONS:,}, not {memories:,}")
        if approved < 1 or pending < 0 or approved + pending > memories:
            raise ValueError(
                f"approved ({approved:,}, at least 1) and pending ({pending:,}) must add up "
                f"to at most memories ({memories:,})"
            )
        return cls(memories, approved, pending)

    @property
    def decided(self) -> int:
        return self.memories - self.pending


def _literal(values: list[str] | tuple[str, ...]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


def _terms_literal(fragments: list[str]) -> str:
    """Each fragment's content terms, as a SQL list of lists (index 1 + position)."""
    listed = [_literal(sorted(content_terms(f))) + "::VARCHAR[]" for f in fragments]
    return "[" + ", ".join(listed) + "]"


def _label(fragment: str) -> str:
    """A concept's label as an extractor names it: no leading article."""
    for article in ("The ", "the ", "a ", "an ", "A ", "An "):
        if fragment.startswith(article):
            return fragment[len(article) :]
    return fragment


def _words_sql() -> str:
    """A one-row table of the word lists and their terms, concept labels and keys."""
    subjects = [_label(s) for s in _SUBJECTS]
    objects = [_label(o) for o in _OBJECTS]
    return f"""CREATE TEMP TABLE words AS SELECT
        {_literal(_SUBJECTS)} AS subj, {_literal(_VERBS)} AS verb,
        {_literal(_OBJECTS)} AS obj, {_literal(_QUALIFIERS)} AS qual,
        {_literal(REASONS)} AS reason,
        {_terms_literal(_SUBJECTS)} AS subj_t, {_terms_literal(_VERBS)} AS verb_t,
        {_terms_literal(_OBJECTS)} AS obj_t, {_terms_literal(_QUALIFIERS)} AS qual_t,
        {_terms_literal(REASONS)} AS reason_t,
        {_literal(sorted(content_terms(EDIT_SUFFIX)))}::VARCHAR[] AS edit_t,
        {_literal(subjects)} AS subj_label, {_literal([concept_key(s) for s in subjects])}
            AS subj_key,
        {_literal(objects)} AS obj_label, {_literal([concept_key(o) for o in objects])}
            AS obj_key"""


# Which kind each row is: the newest ``pending`` rows wait for review; the decided ones
# are spread by a bijection so approvals, rejections and the rest interleave over time.
PLAN_SQL = """
CREATE TEMP TABLE plan AS
WITH kinds AS (
    SELECT i,
        CASE WHEN i >= $decided THEN 'pending_approval'
             WHEN (i * $spread) % $decided < $approved THEN
                 CASE WHEN ((i * $spread) % $decided) % 7 = 3 THEN 'human-edited'
                      ELSE 'human-approved' END
             WHEN ((i * $spread) % $decided) % 10 < 6 THEN 'human-rejected'
             WHEN ((i * $spread) % $decided) % 10 < 8 THEN 'superseded'
             ELSE 'deferred' END AS status
    FROM range($n) t(i)
)
SELECT i, status,
    row_number() OVER (PARTITION BY status IN ('human-approved', 'human-edited') ORDER BY i)
        AS k
FROM kinds
"""

SUPERSESSIONS_SQL = """
CREATE TEMP TABLE supersessions AS  -- each superseded memory and the approved one after it
SELECT s.i, a.i AS by_i
FROM plan s JOIN plan a ON a.k = 1 + (s.k - 1) % $approved
WHERE s.status = 'superseded' AND a.status IN ('human-approved', 'human-edited')
"""

MEMORIES_SQL = """
CREATE TEMP TABLE generated AS
WITH parts AS (
    SELECT p.i, p.status, p.k, (p.i * $spread) % $combinations AS x
    FROM plan p
), picked AS (
    SELECT i, status, k,
        1 + x % 20 AS s, 1 + (x // 20) % 20 AS v, 1 + (x // 400) % 40 AS o,
        1 + (x // 16000) % 40 AS q, 1 + (x // 640000) % 30 AS r,
        1 + ((x // 16000) % 40 + 17) % 40 AS q2
    FROM parts
), texts AS (
    SELECT p.*,
        w.subj[s] || ' ' || w.verb[v] || ' ' || w.obj[o] || ' ' || w.qual[q]
            || ' ' || w.reason[r] || '.' AS initial_text,
        w.subj[s] || ' ' || w.verb[v] || ' ' || w.obj[o] || ' ' || w.qual[q2]
            || ' ' || w.reason[r] || $edit_suffix || '.' AS edited_text,
        list_concat(w.subj_t[s], w.verb_t[v], w.obj_t[o], w.qual_t[q], w.reason_t[r])
            AS initial_terms,
        list_concat(w.qual_t[q2], w.edit_t) AS edit_terms,
        w.obj[o] || ' ' || w.qual[q] AS evidence,
        w.subj_label[s] AS subj_label, w.subj_key[s] AS subj_key,
        w.obj_label[o] AS obj_label, w.obj_key[o] AS obj_key, w.verb[v] AS verb
    FROM picked p, words w
)
SELECT *, CASE WHEN status = 'human-edited' THEN edited_text ELSE initial_text END
    AS final_text
FROM texts
"""

INSERT_MEMORIES_SQL = """
INSERT INTO memories BY NAME
SELECT
    printf('00000000-0000-7000-8000-%012d', g.i) AS id,
    g.initial_text, g.final_text,
    substr(sha256(rtrim(lower(g.initial_text), '.')), 1, 32) AS initial_hash,
    substr(sha256(rtrim(lower(g.final_text), '.')), 1, 32) AS final_hash,
    rtrim(lower(g.final_text), '.') AS norm_text,
    $categories[1 + g.i % 6] AS category,
    g.status,
    CASE WHEN g.i % 10 < 7 THEN 'npc' WHEN g.i % 10 < 9 THEN 'team' ELSE 'global' END AS scope,
    $personas[1 + g.i % 8] AS npc,
    $teams[1 + (g.i % 8) % 3] AS team,
    'bench' AS project,
    printf('conv-%08d', g.i // 20) AS conversation_id,
    printf('msg-%09d', g.i // 5) AS source_message_id,
    g.evidence, TRUE AS evidence_verified,
    $models[1 + g.i % 4] AS extractor_model,
    split_part($models[1 + g.i % 4], '/', 1) AS provider,
    'v' || (1 + g.i % 3) AS prompt_version,
    []::VARCHAR[] AS flags,
    0.5 + (g.i % 50) / 100 AS confidence,
    TIMESTAMP '2025-12-01' + to_microseconds((g.i * $step)::BIGINT) AS recorded_at,
    CASE WHEN g.status <> 'pending_approval' THEN TIMESTAMP '2025-12-01'
        + to_microseconds((g.i * $step)::BIGINT) + to_seconds((600 + hash(g.i) % 604800)::BIGINT)
    END AS decided_at,
    CASE WHEN g.status <> 'pending_approval' THEN $reviewers[(1 + hash(g.i) % 5)::BIGINT] END
        AS decided_by,
    CASE WHEN g.status = 'superseded' THEN printf('00000000-0000-7000-8000-%012d', s.by_i) END
        AS superseded_by,
    CASE WHEN g.status = 'superseded' THEN TIMESTAMP '2025-12-01'
        + to_microseconds((g.i * $step)::BIGINT) + INTERVAL 8 DAY END AS superseded_at,
    CASE WHEN g.status = 'deferred' THEN TIMESTAMP '2025-12-01'
        + to_microseconds((g.i * $step)::BIGINT) + INTERVAL 30 DAY END AS defer_until,
    CASE WHEN g.status = 'human-edited'
        THEN levenshtein(g.initial_text, g.final_text)
            / greatest(length(g.initial_text), length(g.final_text))
    END AS text_change,
    g.i + 1 AS insert_seq,
    nullif(array_to_string(list_sort(list_distinct(CASE WHEN g.status = 'human-edited'
        THEN list_concat(g.initial_terms, g.edit_terms) ELSE g.initial_terms END)), ' '), '')
        AS match_text
FROM generated g LEFT JOIN supersessions s ON s.i = g.i
ORDER BY g.i
"""

# Columns named, so a later column (NULL for generated events) breaks nothing.
# ~3 events a memory: the proposal; a skip (two thirds of the decided) and a deferral (half)
# before the decision; the decision; for a superseded memory, the supersession.
EVENTS_SQL = """
INSERT INTO memory_events (seq, memory_id, occurred_at, actor, action, from_status,
    to_status, text_before, text_after, reason, batch_id, undoes, lead_time_ms,
    time_spent_ms, review_session, state_before, wording)
SELECT row_number() OVER (ORDER BY occurred_at, memory_id, step) AS seq, memory_id,
    occurred_at, actor, action, from_status, to_status, text_before, text_after, NULL, NULL,
    NULL, lead_time_ms, time_spent_ms, review_session, NULL, NULL
FROM (
    SELECT id AS memory_id, recorded_at AS occurred_at, 0 AS step,
        'model:' || extractor_model AS actor, 'propose' AS action, NULL AS from_status,
        'pending_approval' AS to_status, NULL AS text_before, initial_text AS text_after,
        0 AS lead_time_ms, NULL AS time_spent_ms, NULL AS review_session
    FROM memories
    UNION ALL
    SELECT id, decided_at - INTERVAL 5 MINUTE, 1, decided_by, 'skip', 'pending_approval',
        'pending_approval', NULL, NULL,
        epoch_ms(decided_at - INTERVAL 5 MINUTE) - epoch_ms(recorded_at), 2500,
        'session-' || decided_by || '-' || (insert_seq // 40)
    FROM memories WHERE decided_at IS NOT NULL AND insert_seq % 3 <> 0
    UNION ALL
    SELECT id, decided_at - INTERVAL 2 MINUTE, 2, decided_by, 'defer', 'pending_approval',
        'deferred', NULL, NULL,
        epoch_ms(decided_at - INTERVAL 2 MINUTE) - epoch_ms(recorded_at), 3000,
        'session-' || decided_by || '-' || (insert_seq // 40)
    FROM memories WHERE decided_at IS NOT NULL AND status <> 'deferred' AND insert_seq % 2 = 0
    UNION ALL
    SELECT id, decided_at, 3, decided_by,
        CASE status WHEN 'human-edited' THEN 'edit' WHEN 'human-rejected' THEN 'reject'
                    WHEN 'deferred' THEN 'defer' ELSE 'approve' END,
        CASE WHEN status <> 'deferred' AND insert_seq % 2 = 0 THEN 'deferred'
             ELSE 'pending_approval' END,
        CASE status WHEN 'superseded' THEN 'human-approved' ELSE status END,
        CASE WHEN status IN ('human-edited', 'human-approved', 'superseded')
             THEN initial_text END,
        CASE WHEN status IN ('human-edited', 'human-approved', 'superseded')
             THEN final_text END,
        epoch_ms(decided_at) - epoch_ms(recorded_at), 4000 + insert_seq % 9000,
        'session-' || decided_by || '-' || (insert_seq // 40)
    FROM memories WHERE decided_at IS NOT NULL
    UNION ALL
    SELECT id, superseded_at, 4, decided_by, 'supersede', 'human-approved', 'superseded',
        final_text, NULL, NULL, NULL, NULL
    FROM memories WHERE status = 'superseded'
)
"""

CONVERSATIONS_SQL = """
INSERT INTO conversations
SELECT conversation_id, any_value(npc), any_value(team), 'bench', any_value(extractor_model),
    any_value(provider), 'notebooks/analysis.ipynb', min(recorded_at) - INTERVAL 1 MINUTE
FROM memories GROUP BY conversation_id
"""

# One user message per five memories: the statements they were extracted from.
MESSAGES_SQL = """
INSERT INTO messages (id, conversation_id, role, content, npc, model, provider,
    notebook_path, execution_count, created_at)
SELECT source_message_id, any_value(conversation_id), 'user',
    'Notes from today: ' || string_agg(initial_text, ' ' ORDER BY id), any_value(npc),
    any_value(extractor_model), any_value(provider), 'notebooks/analysis.ipynb',
    min(insert_seq)::INTEGER, min(recorded_at) - INTERVAL 30 SECOND
FROM memories GROUP BY source_message_id
"""

# A repeat of one memory in five, kind and outcome as the matcher would have recorded them.
REPROPOSALS_SQL = """
INSERT INTO reproposals (id, recorded_at, memory_id, match_kind, match_type, similarity,
    proposed_text, category, scope, npc, team, conversation_id, source_message_id,
    extractor_model, provider, prompt_version, verdict, matcher, outcome)
SELECT printf('rep-%09d', insert_seq), recorded_at + INTERVAL 3 DAY, id,
    CASE WHEN status IN ('human-approved', 'human-edited') THEN 'approved'
         WHEN status = 'human-rejected' THEN 'rejected' WHEN status = 'superseded'
         THEN 'superseded' ELSE 'pending' END,
    CASE WHEN insert_seq % 4 = 0 THEN 'near' ELSE 'exact' END,
    CASE WHEN insert_seq % 4 = 0 THEN 88 ELSE 100 END,
    'As noted before, ' || lower(initial_text[1:1]) || initial_text[2:],
    category, scope, npc, team, conversation_id, source_message_id, extractor_model,
    provider, prompt_version, 'same',
    CASE WHEN insert_seq % 4 = 0 THEN 'offline' ELSE 'exact' END,
    CASE WHEN status = 'human-rejected' THEN 'suppressed'
         WHEN status IN ('pending_approval', 'deferred') THEN 'merged' ELSE 'reinforced' END
FROM memories WHERE insert_seq % 5 = 0
"""

# Every approved memory reaches a prompt about once (injected into a reply).
INJECTIONS_SQL = """
INSERT INTO context_injections
SELECT printf('reply-%09d', m.insert_seq // 10), m.id, m.insert_seq % 10, m.final_hash,
    m.decided_at + INTERVAL 1 DAY
FROM memories m WHERE status IN ('human-approved', 'human-edited')
"""

# Concepts of every memory's current text: its subject and object, related by its verb.
CONCEPTS_SQL = """
INSERT INTO concept_extractions
SELECT printf('00000000-0000-7000-8000-%012d', g.i), m.final_hash, 'npc_nb/offline',
    m.recorded_at + INTERVAL 1 HOUR, NULL
FROM generated g JOIN memories m ON m.insert_seq = g.i + 1;
INSERT INTO memory_concepts
SELECT m.id, m.final_hash, unnest([g.subj_key, g.obj_key]), unnest([g.subj_label, g.obj_label])
FROM generated g JOIN memories m ON m.insert_seq = g.i + 1;
INSERT INTO concept_relations
SELECT m.id, m.final_hash, g.subj_key, g.verb, g.obj_key
FROM generated g JOIN memories m ON m.insert_seq = g.i + 1
"""


def generate(
    folder: Path, memories: int, *, approved: int | None = None, pending: int | None = None
) -> Path:
    """Create a project store in ``folder`` holding ``memories`` generated memories
    (``approved`` approved, ``pending`` pending, the rest rejected, superseded or
    deferred) with their events, conversations and concepts; return the store's path."""
    plan = Plan.of(memories, approved, pending)
    project = npc_nb.open(folder, create=True)  # runs every migration
    path = Path(project.store_path)
    project.close()
    con = duckdb.connect(str(path))
    try:
        _fill(con, plan)
    finally:
        con.close()
    return path


def _fill(con: duckdb.DuckDBPyConnection, plan: Plan) -> None:
    from npc_nb.vocabulary import CATEGORIES

    decided = max(plan.decided, 1)
    spread = SPREAD
    while math.gcd(spread, decided) != 1:
        spread += 2
    con.execute(_words_sql())
    con.execute(
        PLAN_SQL,
        {"n": plan.memories, "decided": decided, "approved": plan.approved, "spread": spread},
    )
    con.execute(SUPERSESSIONS_SQL, {"approved": plan.approved})
    con.execute(
        MEMORIES_SQL,
        {"spread": SPREAD, "combinations": COMBINATIONS, "edit_suffix": EDIT_SUFFIX},
    )
    # Secondary indexes are dropped for the load and built again after it: one bulk
    # build is several times faster than maintaining them row by row.
    indexes = con.execute(
        "SELECT index_name, sql FROM duckdb_indexes() WHERE database_name = current_database()"
    ).fetchall()
    for name, _ in indexes:
        con.execute(f'DROP INDEX "{name}"')
    con.execute("BEGIN")
    con.execute(
        INSERT_MEMORIES_SQL,
        {
            "categories": list(CATEGORIES),
            "personas": list(PERSONAS),
            "teams": list(TEAMS),
            "models": list(MODELS),
            "reviewers": list(REVIEWERS),
            "step": 365 * 86_400 * 1_000_000 // plan.memories,
        },
    )
    for statement in (EVENTS_SQL, CONVERSATIONS_SQL, MESSAGES_SQL, REPROPOSALS_SQL):
        con.execute(statement)
    con.execute(INJECTIONS_SQL)
    for statement in CONCEPTS_SQL.split(";"):
        con.execute(statement)
    events = con.execute("SELECT count(*) FROM memory_events").fetchone()[0]  # type: ignore[index]
    # The sequences continue after the generated rows, as if the code had drawn them.
    con.execute(f"CREATE OR REPLACE SEQUENCE memory_event_seq START {events + 1}")
    con.execute(f"CREATE OR REPLACE SEQUENCE memory_insert_seq START {plan.memories + 1}")
    # A store with decisions in its log has left epoch 0 (a store never decided in, whose
    # first decision makes every cache reload): so has this one.
    con.execute(rewrite_sql())
    con.execute("COMMIT")
    for _, sql in indexes:
        con.execute(sql)
    con.execute("CHECKPOINT")


def counts(path: Path) -> dict[str, int]:
    """Rows per table of a generated store (read-only)."""
    tables = ("memories", "memory_events", "messages", "reproposals", "memory_concepts")
    with duckdb.connect(str(path), read_only=True) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}  # type: ignore[index]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a new or empty project folder")
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--approved", type=int, help="approved memories (default 60%%)")
    parser.add_argument("--pending", type=int, help="pending candidates (default 10%%)")
    args = parser.parse_args()
    os.environ.setdefault("NPC_NB_HOME", str(args.folder / ".npc-home"))
    started = time.perf_counter()
    path = generate(args.folder, args.memories, approved=args.approved, pending=args.pending)
    took = time.perf_counter() - started
    listed = ", ".join(f"{count:,} {table}" for table, count in counts(path).items())
    print(f"npc_nb {npc_nb.__version__}: {path}: {listed} (built in {took:.1f} s)")


if __name__ == "__main__":
    main()
