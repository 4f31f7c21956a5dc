"""Benchmark every metric on a store of 1 million memories and 3 million audit events.

    .venv/bin/python bench/bench_metrics.py [--memories 1000000] [--repeat 3]

The store is generated set-wise in DuckDB (not row by row): 1M memories over 8
personas, 4 extractor models and 3 prompt versions across a year; 3M events (a proposal
each, decisions for most, skips, deferrals and undos); 200k re-proposals; 1M context
injections. Each metric's median wall time over ``--repeat`` runs is printed; the
target is under 1 s each on this 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import MEMORY_COLUMNS

import npc_nb

MEMORIES = f"""
INSERT INTO memories {MEMORY_COLUMNS}
SELECT printf('m%09d', i), text, final, substr(md5(text), 1, 32), substr(md5(final), 1, 32),
    lower(final), ['decision','preference','commitment','constraint','open_loop','fact'][1 + i % 6],
    status, 'npc', 'npc' || (i % 8), 'team' || (i % 2), 'bench', 'c' || (i // 10), NULL, NULL,
    NULL, 'model-' || (i % 4), 'provider-' || (i % 2), 'v' || (i % 3), [], 0.5 + (i % 50) / 100,
    recorded, CASE WHEN status <> 'pending_approval' THEN decided END,
    CASE WHEN status <> 'pending_approval' THEN 'reviewer-' || (i % 5) END,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL  -- ..., text_change
FROM (
    SELECT i, 'statement number ' || i || ' about topic ' || (i % 997) AS text,
        CASE WHEN i % 10 = 3 THEN 'edited statement ' || i || ' about topic ' || (i % 997)
             ELSE 'statement number ' || i || ' about topic ' || (i % 997) END AS final,
        CASE WHEN i % 10 IN (0, 1, 2, 4, 5) THEN 'human-approved'
             WHEN i % 10 = 3 THEN 'human-edited'
             WHEN i % 10 IN (6, 7) THEN 'human-rejected' ELSE 'pending_approval' END AS status,
        TIMESTAMP '2026-01-01' + to_seconds((i * 31)::BIGINT) AS recorded,
        TIMESTAMP '2026-01-01' + to_seconds((i * 31 + 600 + (i % 7) * 3600)::BIGINT) AS decided
    FROM range($n) t(i)
)
"""

EVENTS = """
INSERT INTO memory_events
SELECT nextval('memory_event_seq'), id, happened, actor, action, from_status, to_status,
    text_before, text_after, NULL, NULL, NULL, lead, spent, NULL, NULL
FROM (
    SELECT id, recorded_at AS happened, 'model:' || extractor_model AS actor, 'propose' AS action,
        NULL AS from_status, 'pending_approval' AS to_status, NULL AS text_before,
        initial_text AS text_after, 0 AS lead, NULL AS spent
    FROM memories
    UNION ALL
    SELECT id, decided_at - INTERVAL 5 MINUTE, decided_by, 'skip', 'pending_approval',
        'pending_approval', initial_text, initial_text, 1000, 4000
    FROM memories WHERE decided_at IS NOT NULL
    UNION ALL
    SELECT id, decided_at - INTERVAL 2 MINUTE, decided_by, 'defer', 'pending_approval',
        'deferred', initial_text, initial_text, 2000, 3000
    FROM memories WHERE decided_at IS NOT NULL AND hash(id) % 2 = 0
    UNION ALL
    SELECT id, decided_at, decided_by,
        CASE status WHEN 'human-edited' THEN 'edit' WHEN 'human-rejected' THEN 'reject'
                    ELSE 'approve' END,
        'pending_approval', status, initial_text, final_text, 3000, 5000
    FROM memories WHERE decided_at IS NOT NULL
) ORDER BY happened
"""

REPROPOSALS = """
INSERT INTO reproposals (id, recorded_at, memory_id, match_kind, match_type, similarity,
    proposed_text, category, scope, npc, team, conversation_id, source_message_id,
    extractor_model, provider, prompt_version)
SELECT printf('r%09d', i), TIMESTAMP '2026-01-01' + to_seconds((i * 150)::BIGINT),
    printf('m%09d', (i * 5) % $n), ['rejected', 'approved', 'pending'][1 + i % 3],
    CASE WHEN i % 4 = 0 THEN 'near' ELSE 'exact' END, 100 - (i % 4) * 3, 'repeat ' || i,
    'fact', 'npc', 'npc' || (i % 8), NULL, NULL, NULL, 'model-' || (i % 4),
    'provider-' || (i % 2), 'v' || (i % 3)
FROM range($k) t(i)
"""

INJECTIONS = """
INSERT INTO context_injections
SELECT 'msg' || (i // 10), printf('m%09d', (i * 7) % $n), i % 10, 'h',
    TIMESTAMP '2026-01-01' + to_seconds((i * 30)::BIGINT)
FROM range($k) t(i)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="npc-bench-metrics-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    nb = npc_nb.open(folder)
    n = args.memories
    started = time.perf_counter()
    nb.sql(MEMORIES, {"n": n}, allow_write=True)
    nb.sql(EVENTS, allow_write=True)
    nb.sql(REPROPOSALS, {"n": n, "k": n // 5}, allow_write=True)
    nb.sql(INJECTIONS, {"n": n, "k": n}, allow_write=True)
    nb.close()
    counts = nb.sql(
        "SELECT (SELECT count(*) FROM memories) AS memories, "
        "(SELECT count(*) FROM memory_events) AS events"
    ).iloc[0]
    print(
        f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores: {counts['memories']:,} "
        f"memories, {counts['events']:,} events (built in {time.perf_counter() - started:.0f} s)"
    )

    metrics = nb.metrics
    runs = {
        "approval_rate()": lambda: metrics.approval_rate(),
        "approval_rate(by=model)": lambda: metrics.approval_rate(by="model"),
        "approval_rate(by=[model, week])": lambda: metrics.approval_rate(by=["model", "week"]),
        "rejection_rate(by=npc)": lambda: metrics.rejection_rate(by="npc"),
        "edit_rate(by=category)": lambda: metrics.edit_rate(by="category"),
        "reproposal_rate(by=prompt_version)": lambda: metrics.reproposal_rate(by="prompt_version"),
        "backlog(day)": lambda: metrics.backlog("day"),
        "time_to_decision(by=model)": lambda: metrics.time_to_decision(by="model"),
        "reviewer_throughput()": lambda: metrics.reviewer_throughput(),
        "injections_per_memory()": lambda: metrics.injections_per_memory(),
    }
    for label, run in runs.items():
        samples = []
        for _ in range(args.repeat):
            begin = time.perf_counter()
            frame = run()
            samples.append(time.perf_counter() - begin)
        print(f"{label:<36} {statistics.median(samples):6.3f} s   ({len(frame):,} rows)")


if __name__ == "__main__":
    main()
