"""Where queueing a candidate spends its time inside DuckDB (run by hand).

    .venv/bin/python bench/bench_insert_floor.py [--memories 100000] [--repeat 150]

``add_candidate`` with ``matcher=None`` is, in the store, five statements: BEGIN, the
exact-repeat lookup (two hash-index probes), the memory INSERT, the proposal's audit
event INSERT and COMMIT. This script times each of them on a raw DuckDB connection (no
npc_nb code between the statements), on copies of one store made by ``generate.py``, and
prints their p50 in ms under three schemas and two states of the file:

- schemas: ``as built`` (the store's own tables and indexes); ``no event`` (the memory
  row alone: what is left if the proposal were not its own audit row); ``no indexes``
  (both tables copied without their primary key and secondary indexes)
- states: ``after a checkpoint`` (the file as a closed store leaves it: how every burst
  of writes after an idle release starts) and ``vector filled`` (after enough rows that
  each table's last, partly filled vector of 2,048 rows is full)

It is the evidence behind the README's statement of the floor under ``add_candidate``:
how much of it the engine spends per table and per index, and what no code of ours
between the statements can remove. A last table times the two reads the indexes serve
(the exact-repeat lookup, a memory by id) with and without them: what dropping the
indexes would cost every read (it grows with the store).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import new_statement
from generate import generate

import npc_nb
from npc_nb._foundations.terms import content_terms, joined_terms
from npc_nb._foundations.text import content_hash, normalise

VECTOR = 2_048
STEPS = ("begin", "lookup", "memory", "event", "commit", "total")

LOOKUP = (
    "SELECT id, status FROM {memories} WHERE final_hash = $hash UNION ALL "
    "SELECT id, status FROM {memories} WHERE initial_hash = $hash"
)
MEMORY = (
    "INSERT INTO {memories} (insert_seq, id, initial_text, final_text, initial_hash, "
    "final_hash, norm_text, category, status, scope, npc, project, flags, recorded_at, "
    "match_text) VALUES (nextval('memory_insert_seq'), $id, $text, $text, $hash, $hash, "
    "$norm, 'fact', 'pending_approval', 'npc', 'analyst', 'bench', [], now(), $terms)"
)
EVENT = (
    "INSERT INTO {events} (seq, memory_id, occurred_at, actor, action, to_status, "
    "text_after, lead_time_ms) VALUES (nextval('memory_event_seq'), $id, now(), "
    "'model:bench', 'propose', 'pending_approval', $text, 0)"
)
#: Each schema: (memory table, event table or None, statements run once to make it).
SCHEMAS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "as built": ("memories", "memory_events", ()),
    "no event": ("memories", None, ()),
    "no indexes": (
        "plain_memories",
        "plain_events",
        (
            "CREATE TABLE plain_memories AS SELECT * FROM memories",
            "CREATE TABLE plain_events AS SELECT * FROM memory_events",
        ),
    ),
}


def candidate(i: int) -> dict[str, str]:
    """The parameters of one new candidate, computed as ``add_candidate`` computes them."""
    text = new_statement(2_000_000 + i)
    return {
        "id": f"floor-{i}",
        "text": text,
        "hash": content_hash(text),
        "norm": normalise(text),
        "terms": joined_terms(content_terms(text)),
    }


def write_one(con: duckdb.DuckDBPyConnection, sql: dict[str, str], i: int) -> list[float]:
    """Queue candidate ``i`` statement by statement; each step's ms, then the total."""
    params = candidate(i)
    marks = [time.perf_counter()]
    con.execute("BEGIN TRANSACTION")
    marks.append(time.perf_counter())
    con.execute(sql["lookup"], {"hash": params["hash"]}).fetchall()
    marks.append(time.perf_counter())
    con.execute(sql["memory"], params)
    marks.append(time.perf_counter())
    if sql["event"]:
        con.execute(sql["event"], {"id": params["id"], "text": params["text"]})
    marks.append(time.perf_counter())
    con.execute("COMMIT")
    marks.append(time.perf_counter())
    steps = [(after - before) * 1000 for before, after in itertools.pairwise(marks)]
    return [*steps, (marks[-1] - marks[0]) * 1000]


def fill_last_vectors(con: duckdb.DuckDBPyConnection, tables: list[str]) -> None:
    """Append copies of existing rows (untimed, one transaction) until each table's row
    count is a multiple of ``VECTOR``: its last vector is then full and in memory."""
    for table in tables:
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]
        missing = -count % VECTOR
        if not missing:
            continue
        key = "id" if "memories" in table else "seq"
        fresh = "'fill-' || uuid()" if key == "id" else "nextval('memory_event_seq')"
        con.execute(
            f"INSERT INTO {table} SELECT * REPLACE ({fresh} AS {key}) FROM {table} LIMIT {missing}"
        )


def measure(store: Path, schema: str, filled: bool, repeat: int) -> tuple[dict[str, float], float]:
    """Step p50s for ``repeat`` candidates on a fresh copy of ``store`` in one state,
    and the p50 of the hash lookup alone on the unindexed copy of the table."""
    memories, events, setup = SCHEMAS[schema]
    scratch = Path(tempfile.mkdtemp(prefix="npc-floor-")) / store.name
    shutil.copy(store, scratch)
    try:
        with duckdb.connect(str(scratch)) as con:
            for statement in setup:
                con.execute(statement)
        # Reopened: the copy is in the state a closed store leaves (checkpointed).
        with duckdb.connect(str(scratch)) as con:
            if filled:
                fill_last_vectors(con, [memories, *([events] if events else [])])
            sql = {
                "lookup": LOOKUP.format(memories=memories),
                "memory": MEMORY.format(memories=memories),
                "event": EVENT.format(events=events) if events else "",
            }
            samples = [write_one(con, sql, i) for i in range(repeat)]
    finally:
        shutil.rmtree(scratch.parent, ignore_errors=True)
    columns = zip(*samples, strict=True)
    return {step: statistics.median(column) for step, column in zip(STEPS, columns, strict=True)}


def lookups(store: Path, repeat: int) -> dict[str, tuple[float, float]]:
    """p50 ms of the reads the indexes serve, (with them, without them): the exact-repeat
    lookup of a new text's hash, and one memory read by id."""
    scratch = Path(tempfile.mkdtemp(prefix="npc-floor-")) / store.name
    shutil.copy(store, scratch)
    try:
        with duckdb.connect(str(scratch)) as con:
            con.execute(SCHEMAS["no indexes"][2][0])
            sample = f"SELECT id FROM memories USING SAMPLE {repeat}"
            ids = [row[0] for row in con.execute(sample).fetchall()]
            found = {}
            for name, table in (("with", "memories"), ("without", "plain_memories")):
                by_hash = LOOKUP.format(memories=table)
                by_id = f"SELECT * FROM {table} WHERE id = ?"
                found[name] = (
                    _median_ms(lambda i, sql=by_hash: con.execute(sql, {"hash": str(i)}), repeat),
                    _median_ms(lambda i, sql=by_id: con.execute(sql, [ids[i]]), repeat),
                )
    finally:
        shutil.rmtree(scratch.parent, ignore_errors=True)
    return {
        "exact-repeat lookup": (found["with"][0], found["without"][0]),
        "one memory by id": (found["with"][1], found["without"][1]),
    }


def _median_ms(run: Callable[[int], duckdb.DuckDBPyConnection], repeat: int) -> float:
    times = []
    for i in range(repeat):
        started = time.perf_counter()
        run(i).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def print_rows(rows: list[tuple[str, str, dict[str, float]]]) -> None:
    print(f"{'schema':<12} {'state':<20}" + "".join(f"{step:>9}" for step in STEPS))
    for schema, state, steps in rows:
        print(f"{schema:<12} {state:<20}" + "".join(f"{steps[s]:>9.2f}" for s in STEPS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=150)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="npc-floor-store-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    store = generate(folder, args.memories)
    print(
        f"npc_nb {npc_nb.__version__}, duckdb {duckdb.__version__}, {os.cpu_count()} cores: "
        f"{args.memories:,} memories; p50 ms of {args.repeat} candidates each"
    )
    rows = [
        (schema, "vector filled" if filled else "after a checkpoint", steps)
        for schema in SCHEMAS
        for filled in (False, True)
        for steps in [measure(store, schema, filled, args.repeat)]
    ]
    print_rows(rows)
    print(f"\n{'read (p50 ms)':<24}{'indexed':>10}{'no indexes':>12}")
    for read, (indexed, plain) in lookups(store, args.repeat).items():
        print(f"{read:<24}{indexed:>10.2f}{plain:>12.2f}")
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
