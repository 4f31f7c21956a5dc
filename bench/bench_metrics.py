"""Benchmark every metric on a store of 1 million memories and 3 million audit events.

    .venv/bin/python bench/bench_metrics.py [--memories 1000000] [--repeat 3]

The store is made by ``bench/generate.py``, set-wise in DuckDB (not row by row): 1M
memories over 8 personas, 4 extractor models and 3 prompt versions across a year; 3M
events (a proposal each, decisions for most, skips, deferrals and supersessions); 200k
re-proposals; a context injection per approved memory. Each metric's median wall time
over ``--repeat`` runs is printed; the target is under 1 s each on this 2-core machine.
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

from generate import generate

import npc_nb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="npc-bench-metrics-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    started = time.perf_counter()
    generate(folder, args.memories)
    nb = npc_nb.open(folder)
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
        "approval_rate(group_by=model)": lambda: metrics.approval_rate(group_by="model"),
        "approval_rate(group_by=[model, week])": lambda: metrics.approval_rate(
            group_by=["model", "week"]
        ),
        "rejection_rate(group_by=npc)": lambda: metrics.rejection_rate(group_by="npc"),
        "edit_rate(group_by=category)": lambda: metrics.edit_rate(group_by="category"),
        "repeats_per_candidate(group_by=prompt_version)": lambda: metrics.repeats_per_candidate(
            group_by="prompt_version"
        ),
        "backlog(day)": lambda: metrics.backlog(period="day"),
        "time_to_decision(group_by=model)": lambda: metrics.time_to_decision(group_by="model"),
        "reviewer_throughput()": lambda: metrics.reviewer_throughput(),
        "injections_per_memory()": lambda: metrics.injections_per_memory(),
    }
    for label, run in runs.items():
        samples = []
        for _ in range(args.repeat):
            begin = time.perf_counter()
            frame = run()
            samples.append(time.perf_counter() - begin)
        print(f"{label:<42} {statistics.median(samples):6.3f} s   ({len(frame):,} rows)")


if __name__ == "__main__":
    main()
