"""Benchmark ``nb.verify()``: every hash chain, every memory against its audit events,
and every snapshot's hash recomputed.

    .venv/bin/python bench/bench_verify.py [--memories 100000] [--votes 100000]
                                           [--snapshots 3] [--repeat 3] [--json rows.json]

The store is made by ``bench/generate.py`` (its memories and ~3 audit events each),
with ``--votes`` votes added by SQL (and the text each decision event leaves filled
in, as npc_nb writes it), every chained table then chained as migration
``m027`` chains rows written before it, and ``--snapshots`` snapshots taken. It prints
the rows of each chain and the p50 and p95 in ms of ``nb.verify()`` (the target: 5 s
at 100,000 memories) and of its parts. No assertion: the numbers are the output.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb
import pandas as pd
from generate import generate
from table import Row, print_table, size_label, timed, write_rows

import npc_nb
from npc_nb.store.chain import first_break
from npc_nb.store.memories.consistency import disagreeing_memories
from npc_nb.store.schema.chains import CHAIN_KEYS, CHAINED, chain_links

VOTES_SQL = """
INSERT INTO votes (id, memory_id, round, reviewer, decision, final_text, final_hash,
    voted_at, event_seq)
SELECT 'vote-' || insert_seq, id, 1, decided_by, 'approve', final_text, final_hash,
    decided_at, insert_seq
FROM memories WHERE decided_at IS NOT NULL AND status IN ('human-approved', 'human-edited')
ORDER BY insert_seq LIMIT ?
"""


def chain_everything(path: Path, votes: int) -> dict[str, int]:
    """Add the votes, then chain every chained table as ``m027`` does; rows per chain."""
    con = duckdb.connect(str(path))
    try:
        con.execute(VOTES_SQL, [votes])
        # The generator's decision events leave text_after empty; npc_nb's always hold
        # the text the decision leaves (what verify holds memories against).
        con.execute(
            "UPDATE memory_events SET text_after = m.final_text FROM memories m "
            "WHERE m.id = memory_events.memory_id AND memory_events.to_status = m.status "
            "AND memory_events.text_after IS NULL"
        )
        counts = {}
        for table in CHAINED:
            links = chain_links(con, table, CHAIN_KEYS[table])
            counts[table] = len(links)
            if links:
                con.register("links", pd.DataFrame(links, columns=["k", "s", "h"]))
                con.execute(
                    f"UPDATE {table} SET chain_seq = l.s, chain_hash = l.h FROM links l "
                    f"WHERE {table}.{CHAIN_KEYS[table]} = l.k"
                )
                con.unregister("links")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return counts


def bench(memories: int, votes: int, snapshots: int, repeat: int) -> list[Row]:
    folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-verify-{memories}-"))
    os.environ["NPC_NB_HOME"] = str(folder / ".npc-home")
    path = generate(folder, memories)
    counts = chain_everything(path, votes)
    nb = npc_nb.open(folder)
    for i in range(snapshots):
        nb.snapshot(f"bench-{i}")
    label = size_label(memories)
    print(f"  [{label}: chained rows {counts}, {snapshots} snapshot(s)]")
    store = nb._stores.project
    times: dict[str, tuple[float, float]] = {}
    found: list[npc_nb.Project] = []
    times["nb.verify()"] = timed(lambda _: found.append(nb.verify()), repeat)
    for table in CHAINED:

        def chain(_: int, table: str = table) -> object:
            with store.read() as con:
                return first_break(con, table)

        times[f"  chain {table}"] = timed(chain, repeat)

    def agreement(_: int) -> object:
        with store.read() as con:
            return disagreeing_memories(con)

    times["  memories against events"] = timed(agreement, repeat)
    snapshot = nb.snapshots()["id"].iloc[0]
    times["  one snapshot's hash"] = timed(
        lambda _: nb._memory.snapshots.recomputed_hash(nb._memory.snapshots.find(snapshot)),
        repeat,
    )
    print(f"  [verify says: {str(found[-1]).splitlines()[0]}]")
    nb.close()
    shutil.rmtree(folder, ignore_errors=True)
    return [Row(op, label, p50, p95, "", None, None) for op, (p50, p95) in times.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--snapshots", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores")
    rows = bench(args.memories, args.votes, args.snapshots, args.repeat)
    print_table(rows)
    if args.json:
        write_rows(rows, args.json)


if __name__ == "__main__":
    main()
