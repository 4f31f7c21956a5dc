"""Benchmark building and drawing the knowledge graph (run by hand).

    .venv/bin/python bench/bench_graph.py [--sizes 1000 10000 50000]

For each size, a store of that many approved memories (generated set-wise in DuckDB,
naming ~500 distinct datasets, tools and places) is opened and timed:

- extract + build   first ``graph()``: offline concept extraction for every memory
                    (stored), then the networkx graph
- build             a second ``graph()``: concepts already stored
- draw              ``nb.graph.show()`` (default cap of 250 nodes) and its output: the
                    renderer's data and the fallback picture
and the output's size as saved in a notebook.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import MEMORY_COLUMNS

import npc_nb

SEED = f"""
INSERT INTO memories {MEMORY_COLUMNS}
SELECT printf('g%09d', i), text, text, substr(md5(text), 1, 32), substr(md5(text), 1, 32),
    lower(text), ['decision', 'fact', 'constraint'][1 + i % 3], 'human-approved', 'npc',
    'npc' || (i % 6), NULL, 'bench', NULL, NULL, NULL, NULL, 'bench/model', 'bench', 'v1', [],
    0.8, TIMESTAMP '2026-01-01' + to_seconds(i::BIGINT), TIMESTAMP '2026-01-02', 'ada',
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL  -- ..., text_change
FROM (
    SELECT i, 'We store the ' || ['ringing', 'survey', 'nest', 'weather', 'tracking'][1 + i % 5]
        || ' data for Site' || (i % 97) || ' in ' || ['DuckDB', 'Zenodo', 'Postgres',
        'Figshare'][1 + i % 4] || ' with the Lab' || (i % 101) || ' pipeline' AS text
    FROM range($n) t(i)
)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores")
    print(
        f"{'memories':>9} {'extract+build':>14} {'build':>8} {'draw':>8} "
        f"{'nodes':>7} {'edges':>8} {'drawn':>6} {'output':>9}"
    )
    for n in args.sizes:
        folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-graph-{n}-"))
        os.environ["NPC_NB_HOME"] = str(folder / "home")
        nb = npc_nb.open(folder)
        nb.sql(SEED, {"n": n}, allow_write=True)
        started = time.perf_counter()
        graph = nb.graph.networkx()
        first = time.perf_counter() - started
        started = time.perf_counter()
        graph = nb.graph.networkx()
        second = time.perf_counter() - started
        started = time.perf_counter()
        view = nb.graph.show()
        output = json.dumps(view._repr_mimebundle_())
        draw = time.perf_counter() - started
        print(
            f"{n:>9,} {first:>13.2f}s {second:>7.2f}s {draw:>7.2f}s "
            f"{graph.number_of_nodes():>7,} {graph.number_of_edges():>8,} "
            f"{view.graph.number_of_nodes():>6} {len(output) / 1024:>7.0f}KB"
        )
        nb.close()


if __name__ == "__main__":
    main()
