"""Moving a project: rows per second of ``migrate-store`` from a file to PostgreSQL and
back.

    .venv/bin/python bench/bench_move_store.py [--store postgresql://...] [--memories 10000]

Builds a project file of 1,000 memories through the API's own write path (each
proposed, one in two approved), copies its memories and audit events in SQL under new
ids up to ``--memories`` (the API alone would take many minutes), then times the move
into PostgreSQL and back into a new folder, and prints rows per second of each.
Without ``--store`` it starts a throwaway PostgreSQL server (as the tests do).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

import npc_nb  # noqa: E402
from npc_nb.store.moving.move import migrate_store  # noqa: E402


def build(folder: Path, memories: int) -> None:
    """A project with ``memories`` distinct memories, one in two approved."""
    base = min(memories, 1000)
    _propose(folder, base)
    copies = -(-memories // base) - 1
    con = duckdb.connect(str(folder / ".npc_nb" / "memory.duckdb"))
    for copy in range(1, copies + 1):
        con.execute(
            "INSERT INTO memories SELECT * REPLACE (id || '~' || $n AS id, "
            "insert_seq + $n * $base AS insert_seq) FROM memories WHERE id NOT LIKE '%~%' "
            "LIMIT $limit",
            {"n": copy, "base": base, "limit": memories - copy * base},
        )
        con.execute(
            "INSERT INTO memory_events SELECT * REPLACE (memory_id || '~' || $n AS memory_id, "
            "seq + $n * $events AS seq) FROM memory_events WHERE memory_id NOT LIKE '%~%' "
            "AND memory_id || '~' || $n IN (SELECT id FROM memories)",
            {"n": copy, "events": 2 * base},
        )
    con.close()


def _propose(folder: Path, memories: int) -> None:
    (folder / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    nb = npc_nb.open(folder)
    for number in range(memories):
        outcome = nb.add_candidate(
            f"Fact {number}: sample {number * 7919 % 100003} uses protocol P{number}",
            category="fact",
            npc=f"npc{number % 5}",
        )
        if number % 2 == 0 and outcome.memory_id:
            nb.approve(outcome.memory_id)
    nb.close()


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from tests.postgres import start_postgres

    with start_postgres() as started:
        yield started.new_database("bench")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", help="a PostgreSQL URL (default: a throwaway server)")
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, server(args.store) as url:
        project = Path(tmp) / "project"
        project.mkdir()
        started = time.perf_counter()
        build(project, args.memories)
        print(f"built {args.memories} memories in {time.perf_counter() - started:.1f} s")
        there = migrate_store(project, url, project="bench_move", force=True)
        back = migrate_store(url, Path(tmp) / "back", project="bench_move")
        for label, moved in (("file -> PostgreSQL", there), ("PostgreSQL -> file", back)):
            rows = sum(moved.rows.values())
            print(
                f"{label}: {rows} rows in {moved.seconds:.2f} s = "
                f"{rows / moved.seconds:,.0f} rows/s"
            )


if __name__ == "__main__":
    main()
