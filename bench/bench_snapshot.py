"""Benchmark reproducible runs: ``snapshot()`` and a pinned ``context()`` next to today's
warm context.

    .venv/bin/python bench/bench_snapshot.py [--memories 166667] [--repeat 30]
                                             [--json rows.json]

The store is made by ``bench/generate.py`` (60% approved: 166,667 memories hold the
100,000 approved memories the targets name). It times p50 and p95 in ms:

- context warm          ``context(npc, team=, query=)`` with no decision since the last:
                        today's figure, the baseline of every row
- snapshot()            a snapshot taken (the store's time and last event, and the hash
                        of every approved memory), after a decision each time
- pinned read, first    ``context(as_of=snapshot)`` of a snapshot not read before: the
                        approved set rebuilt from the audit log
- pinned context warm   ``context(as_of=snapshot)`` again (a pinned kernel's every turn)
- pinned after approve  a pending memory approved (untimed), then the pinned context:
                        what a pinned kernel pays while others keep deciding
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import QUERY
from generate import generate
from table import Row, print_table, size_label, timed, write_rows

import npc_nb

NPC, TEAM = "analyst", "methods"
BASELINE = "context warm"
#: Whole-store operations (a snapshot hashes every approved memory) are repeated less.
HEAVY_REPEAT = 5


def bench(memories: int, repeat: int) -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-snapshot-{memories}-"))
    os.environ["NPC_NB_HOME"] = str(folder / ".npc-home")
    generate(folder, memories, pending=max(memories // 10, 4 * repeat + 20))
    nb = npc_nb.open(folder)
    pending = iter(
        nb.sql("SELECT id FROM memories WHERE status = 'pending_approval' ORDER BY id")["id"]
    )
    approved = int(nb.sql("SELECT count(*) AS n FROM approved_memories")["n"][0])
    label = f"{size_label(memories)} ({approved:,} approved)"

    def approve_next(_: int) -> object:
        return nb.approve(next(pending), by="bench")

    times: dict[str, tuple[float, float]] = {}
    nb.context(NPC, team=TEAM, query=QUERY)  # open the store, fill the cache
    times[BASELINE] = timed(lambda _: nb.context(NPC, team=TEAM, query=QUERY), 10 * repeat)
    taken: list[npc_nb.Snapshot] = []
    times["snapshot()"] = timed(
        lambda i: taken.append(nb.snapshot(f"bench-{i}")), HEAVY_REPEAT, before=approve_next
    )
    fresh = iter(taken)
    times["pinned read, first"] = timed(
        lambda _: nb.context(NPC, team=TEAM, query=QUERY, as_of=next(fresh)), HEAVY_REPEAT
    )
    pinned = taken[0]

    def pinned_context(_: int) -> str:
        return nb.context(NPC, team=TEAM, query=QUERY, as_of=pinned)

    times["pinned context warm"] = timed(pinned_context, 10 * repeat)
    times["pinned after approve"] = timed(pinned_context, repeat, before=approve_next)
    print(f"  [{label}: the pinned block holds {pinned.memories:,} approved memories in all]")
    nb.close()
    shutil.rmtree(folder, ignore_errors=True)
    base = times[BASELINE]
    return [
        Row(op, label, p50, p95, *(("", None, None) if op == BASELINE else (BASELINE, *base)))
        for op, (p50, p95) in times.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=166_667)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores")
    rows = bench(args.memories, args.repeat)
    print_table(rows)
    if args.json:
        write_rows(rows, args.json)


if __name__ == "__main__":
    main()
