"""Benchmark the store's hot paths at 1k, 10k and 100k memories (run by hand).

    .venv/bin/python bench/bench_store.py [--sizes 1000 10000 100000] [--repeat 200]

For each size it builds a project store with a realistic mix (10 personas; npc, team and
project scopes; pending, approved, edited, rejected and superseded memories with their
audit events), generated set-wise in DuckDB rather than row by row, then prints p50 and
p95 in milliseconds of:

- add_candidate   a new candidate worded like the stored ones, queued (a real insert):
                  "(exact)" with matcher=None (the exact-repeat check only), "(offline)"
                  with the default matcher (exact check, neighbour index, the offline
                  matcher on its nearest memories)
- insert (raw)    the floor under both: a memory row (its terms and sentence vector
                  included) and its audit event inserted and committed on a raw, held
                  DuckDB connection, on a copy of the file
                  add_candidate (exact) starts from, each called in turn with it
- decision        approve() of a pending candidate (lookup, check, update, audit event)
- context         context(npc, query=...) through the Project, warm (no decision since
                  the last call: one generation check, then selection in memory)
- context (cold)  the same right after a real decision (approve one more memory first)
- context (raw)   the same selection as one SQL query on a raw, held DuckDB connection

Targets on a 2-core machine at 100k memories: every p50 <= 5 ms (add_candidate (offline)
<= 10 ms), context <= 2x raw; "insert (raw)" is the disk's floor under add_candidate.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import paired, percentiles

import npc_nb
from npc_nb._foundations.terms import content_terms, joined_terms
from npc_nb.memory.block import query_terms
from npc_nb.memory.lookup.embedding import DIMENSIONS, embed

PERSONAS = 10
LINE_OVERHEAD = 24  # "- [scope/category] " and the newline, roughly

# The baseline: the block's whole selection (visibility, approval, relevance to the
# query, priority, the running length under the cap) as one SQL query, the best a
# raw held connection does without npc_nb's per-process cache.
RAW_CONTEXT_SQL = """
    WITH visible AS (
        SELECT id, final_text, final_hash, scope, category, valid_from, valid_to, decided_at,
               CASE scope WHEN 'npc' THEN 0 WHEN 'team' THEN 1 WHEN 'project' THEN 2
                          ELSE 3 END AS scope_rank,
               list_count(list_filter($terms::VARCHAR[],
                                      lambda t: contains(norm_text, t))) AS relevance
        FROM approved_memories
        WHERE (scope = 'npc' AND npc = $npc) OR (scope = 'team' AND team = $team)
              OR scope IN ('project', 'global')
    ), ranked AS (
        SELECT *, sum(length(final_text) + $overhead) OVER (
                   ORDER BY relevance DESC, scope_rank, decided_at DESC, id
                   ROWS UNBOUNDED PRECEDING) AS running
        FROM visible
    )
    SELECT * FROM ranked WHERE running <= $budget
"""
QUERY = "What did we decide about the survey data and the March deadline?"

#: Realistic, varied statements: a subject, a verb phrase, an object and a qualifier
#: chosen by different hashes of the row number (640,000 combinations), so neighbours
#: share some words and differ in others, as real memories do.
_SUBJECTS = [
    "We",
    "The team",
    "Ada",
    "Grace",
    "Linus",
    "The lab",
    "Our group",
    "The reviewer",
    "Maria",
    "The analyst",
    "Tomas",
    "The PI",
    "Priya",
    "The student",
    "Kenji",
    "The client",
    "Amara",
    "The board",
    "Omar",
    "The editor",
]
_VERBS = [
    "decided to use",
    "prefers",
    "plans to migrate",
    "will publish",
    "must not share",
    "agreed to drop",
    "keeps",
    "needs",
    "reviewed",
    "scheduled",
    "wants to revisit",
    "rejected",
    "approved",
    "is rewriting",
    "asked about",
    "will archive",
    "trusts",
    "stopped using",
    "is testing",
    "documented",
]
_OBJECTS = [
    "DuckDB",
    "the survey data",
    "a new baseline model",
    "the field notes",
    "weekly plots",
    "the 2025 cohort",
    "Parquet exports",
    "the interview transcripts",
    "a shared notebook",
    "the grant budget",
    "the annotation guide",
    "a pilot study",
    "the ethics protocol",
    "the regression tables",
    "a cleaned dataset",
    "the sampling plan",
    "the lab wiki",
    "a preprint",
    "the evaluation script",
    "the codebook",
    "the consent forms",
    "a GPU cluster",
    "the literature review",
    "a dashboard",
    "the raw audio",
    "the coding scheme",
    "a power analysis",
    "the figures",
    "the appendix",
    "a data paper",
    "the replication package",
    "the poster",
    "the slide deck",
    "a holdout set",
    "the error analysis",
    "the API keys",
    "the backup drive",
    "the survey weights",
    "a style guide",
    "the timeline",
]
_QUALIFIERS = [
    "for the pilot study",
    "before the March deadline",
    "in the methods section",
    "with the ethics board",
    "on Fridays",
    "for reproducibility",
    "after the workshop",
    "in the shared drive",
    "for the second paper",
    "until the audit",
    "during fieldwork",
    "for the journal resubmission",
    "with the partner lab",
    "in Python 3.12",
    "for the conference talk",
    "every quarter",
    "at the retreat",
    "for external reviewers",
    "in the final report",
    "with version control",
    "for the thesis chapter",
    "on the lab server",
    "for the grant renewal",
    "in the appendix tables",
    "before data collection",
    "with anonymised ids",
    "for the teaching module",
    "in the next sprint",
    "for the press release",
    "under the new licence",
    "with two coders",
    "for the baseline comparison",
    "in the weekly meeting",
    "for the open data release",
    "with the statistician",
    "for the summer school",
    "in German and English",
    "for the replication",
    "on the cloud bucket",
    "for the annual review",
]


def _choice(words: list[str], multiplier: int) -> str:
    listed = ", ".join("'" + w.replace("'", "''") + "'" for w in words)
    return f"[{listed}][1 + (hash(i * {multiplier}) % {len(words)})::BIGINT]"


#: The columns a seed fills by position: every memory column up to ``text_change`` (the
#: ones added later, for matching, are filled by ``index_terms`` or stay NULL).
MEMORY_COLUMNS = """(id, initial_text, final_text, initial_hash, final_hash, norm_text,
    category, status, scope, npc, team, project, conversation_id, source_message_id,
    evidence, evidence_verified, extractor_model, provider, prompt_version, flags,
    confidence, recorded_at, decided_at, decided_by, valid_from, valid_to, supersedes,
    superseded_by, superseded_at, defer_until, skipped_at, text_change)"""

SEED_SQL = f"""
INSERT INTO memories BY NAME
SELECT
    printf('00000000-0000-7000-8000-%012d', i) AS id,
    text AS initial_text,
    text AS final_text,
    substr(sha256(lower(text)), 1, 32) AS initial_hash,
    substr(sha256(lower(text)), 1, 32) AS final_hash,
    lower(text) AS norm_text,
    ['decision', 'preference', 'commitment', 'constraint', 'open_loop', 'fact'][1 + i % 6]
        AS category,
    CASE WHEN i % 20 < 8 THEN 'human-approved' WHEN i % 20 < 10 THEN 'human-edited'
         WHEN i % 20 < 14 THEN 'human-rejected' WHEN i % 20 < 19 THEN 'pending_approval'
         ELSE 'superseded' END AS status,
    CASE WHEN i % 10 < 8 THEN 'npc' WHEN i % 10 = 8 THEN 'team' ELSE 'project' END AS scope,
    'npc' || (i % $personas) AS npc,
    'team' || (i % 3) AS team,
    'bench' AS project,
    'conv' || (i // 20) AS conversation_id,
    'bench/model' AS extractor_model, 'bench' AS provider, 'v1' AS prompt_version,
    []::VARCHAR[] AS flags, 0.8 AS confidence,
    TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS recorded_at,
    TIMESTAMP '2026-01-01' + INTERVAL (i + 60) SECOND AS decided_at,
    'bench' AS decided_by,
    CASE WHEN i % 20 = 19 THEN printf('00000000-0000-7000-8000-%012d', i - 1) END
        AS superseded_by
FROM (
    SELECT i, {_choice(_SUBJECTS, 7919)} || ' ' || {_choice(_VERBS, 104729)} || ' ' ||
           {_choice(_OBJECTS, 1299709)} || ' ' || {_choice(_QUALIFIERS, 15485863)} || '.'
           AS text
    FROM range($n) t(i)
)
"""

EVENTS_SQL = """
INSERT INTO memory_events
SELECT nextval('memory_event_seq'), id, recorded_at, 'model:bench', 'propose', NULL,
       'pending_approval', NULL, final_text, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL
FROM memories;
INSERT INTO memory_events
SELECT nextval('memory_event_seq'), id, decided_at, 'bench', 'approve', 'pending_approval',
       status, final_text, final_text, NULL, NULL, NULL, 60000, NULL, NULL, NULL, NULL
FROM memories WHERE status <> 'pending_approval';
"""


def new_statement(i: int) -> str:
    """A realistic candidate, worded like the seeded memories but new (a fresh pairing of
    subject, verb, object and qualifier, and a trailing detail), so the matcher really
    judges its neighbours."""
    pick = random.Random(i)
    parts = (_SUBJECTS, _VERBS, _OBJECTS, _QUALIFIERS)
    subject, verb, thing, qualifier = (pick.choice(words) for words in parts)
    return f"{subject} {verb} {thing} {qualifier}, as agreed in meeting {i}."


def timed(
    fn: Callable[[int], object],
    repeat: int,
    before: Callable[[int], object] | None = None,
) -> tuple[float, float]:
    """p50/p95 ms of ``fn``; ``before`` (untimed) runs ahead of each call."""
    fn(-1)  # warm up: open the connection, fill caches
    samples = []
    for i in range(repeat):
        if before is not None:
            before(i)
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)


def build(n: int, folder: Path) -> npc_nb.Project:
    project = npc_nb.open(folder)
    project.sql(SEED_SQL, {"n": n, "personas": PERSONAS}, allow_write=True)
    project.sql(EVENTS_SQL, allow_write=True)
    project.close()  # closing checkpoints the file
    index_terms(project.store_path)
    return project


def index_terms(path: Path) -> None:
    """What add_candidate stores with each memory for the neighbour index: its content
    terms, sentence vector and insert sequence (seeding in SQL skips add_candidate)."""
    con = duckdb.connect(str(path))
    con.create_function("content_terms", lambda text: joined_terms(content_terms(text)), [str], str)
    con.execute(
        "UPDATE memories SET match_text = content_terms(final_text), "
        "insert_seq = nextval('memory_insert_seq')"
    )
    store_vectors(con)
    con.close()


def store_vectors(con: duckdb.DuckDBPyConnection) -> None:
    """Each memory's sentence vector, as ``add_candidate`` stores it (``match_vector``)."""
    import pandas as pd

    rows = con.execute("SELECT id, initial_text FROM memories").fetchall()
    vectors = embed([text for _, text in rows])
    if vectors is None:
        return  # no embedding installed: BM25 alone
    blobs = [row.astype("<f2").tobytes() for row in vectors]
    con.register("vectors", pd.DataFrame({"id": [i for i, _ in rows], "v": blobs}))
    con.execute(
        "UPDATE memories SET match_vector = v.v::BLOB FROM vectors v WHERE memories.id = v.id"
    )
    con.unregister("vectors")


def raw_insert(con: duckdb.DuckDBPyConnection, i: int) -> None:
    """A new memory row (its content terms included) and its audit event, in one
    committed transaction: what queueing a candidate must write, with nothing else."""
    text = new_statement(1_000_000 + i)
    con.execute("BEGIN TRANSACTION")
    con.execute(
        "INSERT INTO memories (insert_seq, id, initial_text, final_text, initial_hash, "
        "final_hash, norm_text, category, status, scope, npc, project, flags, recorded_at, "
        "match_text, match_vector) VALUES (nextval('memory_insert_seq'), $id, $text, $text, "
        "$hash, $hash, lower($text), 'fact', 'pending_approval', 'npc', 'npc3', 'bench', [], "
        "now(), $terms, $vector)",
        {
            "id": f"raw-{i}",
            "text": text,
            "hash": f"raw-{i}",
            "terms": joined_terms(content_terms(text)),
            "vector": _RAW_VECTOR,
        },
    )
    con.execute(
        "INSERT INTO memory_events (seq, memory_id, occurred_at, actor, action, to_status, "
        "text_after, lead_time_ms) VALUES (nextval('memory_event_seq'), $id, now(), "
        "'model:bench', 'propose', 'pending_approval', $text, 0)",
        {"id": f"raw-{i}", "text": text},
    )
    con.execute("COMMIT")


#: A stored sentence vector's size (what a queued candidate writes beside its text).
_RAW_VECTOR = bytes(2 * DIMENSIONS)


@contextmanager
def raw_copy(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A raw, held DuckDB connection on a copy of the store file at ``path`` (closed, so
    checkpointed): the floor is measured from the very state the measured
    ``add_candidate`` calls start from. It matters: after a checkpoint DuckDB's commit
    into an indexed table re-reads its last, partly filled vector of rows (up to 2,047
    rows, every column decoded) until new rows fill that vector
    (``bench/bench_insert_floor.py``). A baseline taken from another row count would pay a
    different share of that."""
    scratch = Path(tempfile.mkdtemp(prefix="npc-bench-raw-")) / path.name
    shutil.copy(path, scratch)
    wal = path.with_name(path.name + ".wal")  # none once closed, but never lose one
    if wal.exists():
        shutil.copy(wal, scratch.with_name(scratch.name + ".wal"))
    con = duckdb.connect(str(scratch))
    try:
        yield con
    finally:
        con.close()
        shutil.rmtree(scratch.parent, ignore_errors=True)


def candidates_and_floor(
    path: Path, add: Callable[[int], object], repeat: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """p50/p95 of ``add(i)`` (an ``add_candidate`` on the store at ``path``, opened
    already) and of ``raw_insert`` on a copy of the file it started from, called in turn
    (``table.paired``): their ratio holds on a machine whose speed drifts."""
    with raw_copy(path) as con:
        add(-1)  # warm up: opens the connection, fills caches
        raw_insert(con, -1)
        return paired(add, lambda i: raw_insert(con, i), repeat)


def bench_size(n: int, repeat: int) -> dict[str, tuple[float, float]]:
    folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-{n}-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    project = build(n, folder)
    pending = list(
        project.sql(
            "SELECT id FROM memories WHERE status = 'pending_approval' ORDER BY id LIMIT $k",
            {"k": repeat + max(10, repeat // 10) + 2},
        )["id"]
    )
    path = Path(project.store_path)
    exact_only = npc_nb.open(folder, matcher=None)
    results = {}
    results["add_candidate (exact)"], results["insert (raw)"] = candidates_and_floor(
        path,
        lambda i: exact_only.add_candidate(new_statement(i), category="fact", npc="npc3"),
        repeat,
    )
    exact_only.close()  # the next floor starts from the file as the offline calls do
    results["add_candidate (offline)"], _ = candidates_and_floor(
        path,
        lambda i: project.add_candidate(new_statement(repeat + 2 + i), category="fact", npc="npc3"),
        repeat,
    )
    results["decision"] = timed(lambda i: project.approve(pending[i + 1], by="bench"), repeat)
    block = project.context_block("npc3", team="team0", query=QUERY)
    results["context"] = timed(lambda i: project.context("npc3", team="team0", query=QUERY), repeat)

    # A real decision before each call (untimed): what a reviewer's approval costs the
    # next prompt, not an imitation of a cold cache.
    results["context (cold)"] = timed(
        lambda i: project.context("npc3", team="team0", query=QUERY),
        max(10, repeat // 10),
        before=lambda i: project.approve(pending[repeat + 1 + i], by="bench"),
    )
    project.close()
    exact_only.close()
    con = duckdb.connect(str(project.store_path))
    params = {
        "npc": "npc3",
        "team": "team0",
        "budget": project.settings.context_max_chars,
        "overhead": LINE_OVERHEAD,
        "terms": query_terms(QUERY),
    }
    results["context (raw)"] = timed(
        lambda i: con.execute(RAW_CONTEXT_SQL, params).fetchall(), repeat
    )
    con.close()
    print(
        f"  [{n:,} memories: block holds {len(block.memory_ids)} of {block.available} "
        f"approved visible memories, {len(block.text):,} chars]"
    )
    return results


OPERATIONS = (
    "add_candidate (exact)",
    "add_candidate (offline)",
    "insert (raw)",
    "decision",
    "context",
    "context (cold)",
    "context (raw)",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, duckdb {duckdb.__version__}, {os.cpu_count()} cores")
    table = {n: bench_size(n, args.repeat) for n in args.sizes}
    width = max(map(len, OPERATIONS)) + 1
    print(
        f"\n{'operation':<{width}}" + "".join(f"{f'{n:,}: p50 / p95 ms':>26}" for n in args.sizes)
    )
    for op in OPERATIONS:
        cells = "".join(f"{table[n][op][0]:>14.2f} / {table[n][op][1]:>8.2f}" for n in args.sizes)
        print(f"{op:<{width}}{cells}")
    for n in args.sizes:
        ratio = table[n]["context"][0] / table[n]["context (raw)"][0]
        print(f"context / raw at {n:,}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
