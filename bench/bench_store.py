"""Benchmark the store's hot paths at 1k, 10k and 100k memories (run by hand).

    .venv/bin/python bench/bench_store.py [--sizes 1000 10000 100000] [--repeat 200]

For each size it builds a project store with a realistic mix (10 personas; npc, team and
project scopes; pending, approved, edited, rejected and superseded memories with their
audit events), generated set-wise in DuckDB rather than row by row, then prints p50 and
p95 in milliseconds of:

- add_candidate   a new, unique candidate (exact and near-duplicate checks included)
- decision        approve() of a pending candidate (lookup, check, update, audit event)
- context         context(npc, query=...) through the Project, warm (no decision since
                  the last call: one generation check, then selection in memory)
- context (cold)  the same right after a real decision (approve one more memory first)
- context (raw)   the same selection as one SQL query on a raw, held DuckDB connection

Targets on a 2-core machine at 100k memories: every p50 <= 5 ms, context <= 2x raw.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import npc_nb
from npc_nb.memory.block import query_terms

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
QUERY = "What did we decide about topic 42 and the analysis deadline?"

SEED_SQL = """
INSERT INTO memories
SELECT
    printf('00000000-0000-7000-8000-%012d', i) AS id,
    text AS initial_text,
    text AS final_text,
    substr(sha256(lower(text)), 1, 32) AS initial_hash,
    substr(sha256(lower(text)), 1, 32) AS final_hash,
    lower(text) AS norm_text,
    ['decision', 'preference', 'commitment', 'constraint', 'open_loop', 'fact'][1 + i % 6],
    CASE WHEN i % 20 < 8 THEN 'human-approved' WHEN i % 20 < 10 THEN 'human-edited'
         WHEN i % 20 < 14 THEN 'human-rejected' WHEN i % 20 < 19 THEN 'pending_approval'
         ELSE 'superseded' END AS status,
    CASE WHEN i % 10 < 8 THEN 'npc' WHEN i % 10 = 8 THEN 'team' ELSE 'project' END AS scope,
    'npc' || (i % $personas) AS npc,
    'team' || (i % 3) AS team,
    'bench' AS project,
    'conv' || (i // 20) AS conversation_id,
    NULL, NULL, NULL, 'bench/model', 'bench', 'v1', [], 0.8,
    TIMESTAMP '2026-01-01' + INTERVAL (i) SECOND AS recorded_at,
    TIMESTAMP '2026-01-01' + INTERVAL (i + 60) SECOND AS decided_at,
    'bench', NULL, NULL, NULL,
    CASE WHEN i % 20 = 19 THEN printf('00000000-0000-7000-8000-%012d', i - 1) END,
    NULL, NULL, NULL, NULL  -- ..., skipped_at, text_change
FROM (
    SELECT i, 'memory ' || i || ' about topic ' || (i % 97) || ' from the ' ||
           ['analysis', 'deadline', 'dataset', 'review', 'budget'][1 + i % 5] ||
           ' thread, noted for later reference' AS text
    FROM range($n) t(i)
)
"""

EVENTS_SQL = """
INSERT INTO memory_events
SELECT nextval('memory_event_seq'), id, recorded_at, 'model:bench', 'propose', NULL,
       'pending_approval', NULL, final_text, NULL, NULL, NULL, 0, NULL, NULL, NULL
FROM memories;
INSERT INTO memory_events
SELECT nextval('memory_event_seq'), id, decided_at, 'bench', 'approve', 'pending_approval',
       status, final_text, final_text, NULL, NULL, NULL, 60000, NULL, NULL, NULL
FROM memories WHERE status <> 'pending_approval';
"""


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


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
    return project


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
    results = {}
    results["add_candidate"] = timed(
        lambda i: project.add_candidate(
            f"benchmark candidate {i} says the analysis of topic {i % 97} is done",
            category="fact",
            npc="npc3",
        ),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, duckdb {duckdb.__version__}, {os.cpu_count()} cores")
    table = {n: bench_size(n, args.repeat) for n in args.sizes}
    print(f"\n{'operation':<16}" + "".join(f"{f'{n:,}: p50 / p95 ms':>26}" for n in args.sizes))
    for op in ("add_candidate", "decision", "context", "context (cold)", "context (raw)"):
        cells = "".join(f"{table[n][op][0]:>14.2f} / {table[n][op][1]:>8.2f}" for n in args.sizes)
        print(f"{op:<16}{cells}")
    for n in args.sizes:
        ratio = table[n]["context"][0] / table[n]["context (raw)"][0]
        print(f"context / raw at {n:,}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
