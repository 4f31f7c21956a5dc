"""Benchmark how the hot paths grow with the store, from 1k to 1M memories.

    .venv/bin/python bench/bench_scale.py [--sizes 1000 10000 100000 1000000] [--repeat 30]
                                          [--json rows.json]

Each size is a store made by ``bench/generate.py`` (60% approved, 10% pending, the rest
rejected, superseded or deferred; about three audit events a memory). With real
decisions throughout (never an imitation of a cold cache), it times p50 and p95 in ms:

- context warm          ``context(npc, team=, query=)`` with no decision since the last
- context after approve a pending memory approved (untimed), then ``context()``
- approve               ``approve()`` of a pending memory
- undo                  a memory approved (untimed), then ``undo()``
- next card             the review session decides its card (untimed), then ``card()``
- review open           ``review_session()`` and its first ``card()``
- add_candidate         a new candidate queued (a real insert), with ``matcher=None``
                        (exact repeats only) and with the default offline matcher; its
                        baseline is a memory row and its audit event inserted and committed
                        on a raw, held DuckDB connection (the engine's floor), on a copy of
                        the file the calls start from, called in turn with them
- metrics.<name>()      every metric of ``nb.metrics`` with its default arguments
- graph build           ``graph()``: the networkx graph of every approved memory, which
                        ``%npc_graph`` builds before cutting it to the nodes it draws
- %npc_graph            ``nb.graph.show()`` and its output (renderer data and picture)
- raw query (baseline)  the context selection as one SQL query on a raw, held DuckDB
                        connection, the best a program does without npc_nb's cache

then prints one table (each figure next to the raw query of the same size) and how each
operation's p50 grows from the smallest size.
"""

from __future__ import annotations

import argparse
import inspect
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import (
    LINE_OVERHEAD,
    QUERY,
    RAW_CONTEXT_SQL,
    candidates_and_floor,
    new_statement,
)
from generate import generate
from table import Row, print_table, size_label, timed, write_rows

import npc_nb
from npc_nb.memory.block import query_terms

NPC, TEAM = "analyst", "methods"
BASELINE = "raw query"
RAW_INSERT = "raw insert + commit"
#: Slow operations (whole-store reads) are repeated fewer times.
HEAVY_REPEAT = 3


def metric_calls(nb: npc_nb.Project) -> dict[str, Callable[[], Any]]:
    """Every public metric of ``nb.metrics`` (plots and deprecated names left out),
    called with its defaults."""
    metrics = nb.metrics
    return {
        f"metrics.{name}()": getattr(metrics, name)
        for name, method in inspect.getmembers(type(metrics), inspect.isfunction)
        if not name.startswith(("_", "plot"))
        and not (method.__doc__ or "").startswith("Deprecated")
    }


def bench_size(memories: int, repeat: int, graph: bool = True) -> list[Row]:
    """Build a store of ``memories`` memories and time every operation on it."""
    folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-scale-{memories}-"))
    os.environ["NPC_NB_HOME"] = str(folder / ".npc-home")
    pending_needed = 4 * repeat + 10
    path = generate(folder, memories, pending=max(memories // 10, pending_needed))
    nb = npc_nb.open(folder)
    pending = list(
        nb.sql(
            "SELECT id FROM memories WHERE status = 'pending_approval' ORDER BY recorded_at DESC",
        )["id"]
    )
    taken = iter(pending)
    approved = int(nb.sql("SELECT count(*) AS n FROM approved_memories")["n"][0])
    label = f"{size_label(memories)} ({approved:,} approved)"

    def context(_: int) -> str:
        return nb.context(NPC, team=TEAM, query=QUERY)

    def approve_next(_: int) -> object:
        return nb.approve(next(taken), by="bench")

    times: dict[str, tuple[float, float]] = {}
    context(-1)  # open the store, fill the cache
    times["context warm"] = timed(context, 10 * repeat)
    times["context after approve"] = timed(context, repeat, before=approve_next)
    times["approve"] = timed(approve_next, repeat)
    times["undo"] = timed(lambda _: nb.undo(by="bench"), repeat, before=approve_next)

    session = nb.review_session(by="bench")
    session.card()
    times["next card"] = timed(
        lambda _: session.card(),
        repeat,
        before=lambda _: session.decide(npc_nb.Skip(str(session.current))),
    )
    times["review open"] = timed(
        lambda _: nb.review_session(by="bench").card(), max(3, repeat // 10)
    )
    for name, call in metric_calls(nb).items():
        call()  # the first call pays for imports
        times[name] = timed(lambda _, call=call: call(), HEAVY_REPEAT)
    if graph:
        nb.graph.networkx()  # the first call imports networkx
        graph_repeat = 1 if memories > 20_000 else HEAVY_REPEAT
        times["graph build"] = timed(lambda _: nb.graph.networkx(), graph_repeat)
        times["%npc_graph"] = timed(lambda _: nb.graph.show()._repr_mimebundle_(), graph_repeat)
    block = nb.context_block(NPC, team=TEAM, query=QUERY)
    nb.close()
    proposed = candidate_times(folder, path, repeat)

    con = duckdb.connect(str(path))
    params = {
        "npc": NPC,
        "team": TEAM,
        "budget": len(block.text) + 10 * LINE_OVERHEAD,
        "overhead": LINE_OVERHEAD,
        "terms": query_terms(QUERY),
    }
    con.execute(RAW_CONTEXT_SQL, params).fetchall()
    raw = timed(lambda _: con.execute(RAW_CONTEXT_SQL, params).fetchall(), 10 * repeat)
    con.close()
    shutil.rmtree(folder, ignore_errors=True)  # a 1M store is over a gigabyte
    print(
        f"  [{label}: block holds {len(block.memory_ids)} of {block.available} visible "
        f"approved memories, {len(block.text):,} chars]",
        flush=True,
    )
    rows = [Row(op, label, p50, p95, BASELINE, *raw) for op, (p50, p95) in times.items()]
    rows += [
        Row(op, label, p50, p95, RAW_INSERT, *floor) for op, ((p50, p95), floor) in proposed.items()
    ]
    inserted = next(iter(proposed.values()))[1]
    return [*rows, Row(BASELINE, label, *raw), Row(RAW_INSERT, label, *inserted)]


Timing = tuple[float, float]


def candidate_times(folder: Path, path: Path, repeat: int) -> dict[str, tuple[Timing, Timing]]:
    """``add_candidate`` of new, realistic candidates (each a real insert): with exact
    matching only, then with the default offline matcher; each next to its floor, a raw
    insert and commit on a copy of the file the calls start from, called in turn with
    them (``bench_store.candidates_and_floor``)."""
    times: dict[str, tuple[Timing, Timing]] = {}
    for name, matcher in (("matcher=None", None), ("offline matcher", "offline")):
        nb = npc_nb.open(folder, matcher=matcher)
        first = 10_000 * (len(times) + 1)
        times[f"add_candidate ({name})"] = candidates_and_floor(
            path,
            lambda i, nb=nb, first=first: nb.add_candidate(
                new_statement(first + i), category="fact", npc=NPC
            ),
            repeat,
        )
        nb.close()
    return times


def print_growth(rows: list[Row]) -> None:
    """Each operation's p50 at every size, and how much it grew from the smallest."""
    stores = list(dict.fromkeys(row.store for row in rows))
    by_op: dict[str, dict[str, float]] = {}
    for row in rows:
        by_op.setdefault(row.operation, {})[row.store] = row.p50
    print(f"\n{'p50 ms':<34}" + "".join(f"{s.split()[0]:>10}" for s in stores) + "   growth")
    for op, cells in by_op.items():
        first, last = cells[stores[0]], cells[stores[-1]]
        values = "".join(f"{cells.get(s, float('nan')):>10.2f}" for s in stores)
        print(f"{op:<34}{values}   {last / first:6.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--no-graph", action="store_true", help="skip the graph build")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, duckdb {duckdb.__version__}, {os.cpu_count()} cores")
    rows = [row for n in args.sizes for row in bench_size(n, args.repeat, not args.no_graph)]
    print_table(rows)
    print_growth(rows)
    if args.json:
        write_rows(rows, args.json)


if __name__ == "__main__":
    main()
