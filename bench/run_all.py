"""Run the benchmarks and print one table: what ``make bench`` runs.

    .venv/bin/python bench/run_all.py [--quick] [--sizes 1000 10000 100000 166667]

Each script runs in a fresh process (printing its own table as it goes) and writes its
rows as JSON; the table at the end gathers them: every operation's p50 and p95 at its
store size, next to the baseline measured in the same run (the raw query on a held
DuckDB connection for the store, the bare model call for a chat turn) and the ratio.

- ``bench_scale.py``   context, decisions, undo, the review queue, add_candidate, every
                       metric and the graph at each ``--sizes`` (memories; 60% approved,
                       so 166,667 holds the 100,000 approved memories the targets name)
- ``bench_review.py``  every key of the review panel at 100k approved and 1k pending
                       memories, against ``approve()`` through the API
- ``bench_chat.py``    a ``%%npc`` turn against the bare offline-model call; import and
                       ``%load_ext`` times
- ``bench_memory.py``  peak RSS of a kernel: ``%load_ext``, a 100-turn conversation, the
                       review panel open on a 100k store
- ``bench_snapshot.py`` ``snapshot()`` and a pinned ``context()`` at 100k approved
                       memories, against today's warm context
- ``bench_audit.py``   ``plan_audit`` for a batch of 1,000 (and, printed above the
                       table, the audit design's simulated and exact chances)

``--quick`` runs tiny sizes (a smoke test for CI, not figures to quote).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import Row, print_table, read_rows

import npc_nb

HERE = Path(__file__).resolve().parent
#: bench_scale's stores: the last holds 100,000 approved memories (60% of 166,667),
#: the size the targets are set at.
DEFAULT_SIZES = [1_000, 10_000, 100_000, 166_667]


def machine() -> str:
    """CPU model, cores and memory of this machine (Linux; elsewhere what is known)."""
    cpu, memory = platform.processor() or platform.machine(), ""
    info = Path("/proc/cpuinfo")
    if info.exists():
        for line in info.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split()[1])
        memory = f", {kib / 1024**2:.0f} GiB"
    return f"{cpu}, {os.cpu_count()} cores{memory}"


def run(script: str, arguments: list[str], folder: Path) -> list[Row]:
    """Run one benchmark script (its own output streams through) and read its rows."""
    rows = folder / f"{Path(script).stem}.json"
    print(f"\n== {script} {' '.join(arguments)}", flush=True)
    subprocess.run(
        [sys.executable, str(HERE / script), *arguments, "--json", str(rows)], check=True
    )
    return read_rows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--sizes", type=int, nargs="+", help="store sizes for bench_scale")
    args = parser.parse_args()
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="npc-bench-run-"))
    if args.quick:
        scale = ["--sizes", *map(str, args.sizes or [1_000]), "--repeat", "3"]
        review = ["--size", "2000", "--pending", "200", "--presses", "3", "--paced", "1"]
        chat, memory = ["--cells", "3"], ["--turns", "3", "--memories", "2000"]
        snapshot = ["--memories", "2000", "--repeat", "3"]
        audit = ["--runs", "300", "--repeat", "3"]
    else:
        scale = ["--sizes", *map(str, args.sizes or DEFAULT_SIZES)]
        review = ["--presses", "15", "--paced", "3"]
        chat, memory, snapshot, audit = [], [], [], []
    rows = run("bench_scale.py", scale, folder)
    rows += run("bench_review.py", review, folder)
    rows += run("bench_chat.py", chat, folder)
    rows += run("bench_memory.py", memory, folder)
    rows += run("bench_snapshot.py", snapshot, folder)
    rows += run("bench_audit.py", audit, folder)
    took = time.perf_counter() - started
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    print(
        f"\nnpc_nb {npc_nb.__version__}, Python {platform.python_version()}, {machine()}, "
        f"{today}; {took / 60:.1f} min{' (--quick)' if args.quick else ''}.\n"
        "Times in ms; memory in MB. Store: memories (approved). Ratio: p50 / baseline p50.\n"
    )
    print_table(rows)


if __name__ == "__main__":
    main()
