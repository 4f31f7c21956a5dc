"""Four kernels at once: the embedded DuckDB file against a shared PostgreSQL store.

    .venv/bin/python bench/bench_shared_store.py [--store postgresql://...] [--ops 500]

Starts 4 worker processes (``tests/store_worker.py``) on one project, releases them at
the same moment, and each does ``--ops`` mixed operations: add a candidate (2 in 5),
decide one of its own pending candidates (1 in 5), read a persona's context (2 in 5).
Then it checks that every write is present and the audit log complete, and prints the
throughput and the p50/p95 latency of each operation, per backend, side by side.
Without ``--store`` it starts a throwaway PostgreSQL server (as the tests do).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import npc_nb  # noqa: E402
from tests.store_worker import run_together  # noqa: E402

WORKERS = 4
KINDS = ("add", "decide", "context")


def run(project_dir: Path, store: str, ops: int, workers: int = WORKERS) -> dict:
    """Run the workers against ``store`` ("embedded" for the DuckDB file); return the
    merged worker results and the wall time (seconds)."""
    results, wall = run_together(
        *(["mixed", str(project_dir), store, str(seed), str(ops)] for seed in range(workers))
    )
    return {"results": results, "wall": wall, "ops": ops * workers}


def check(nb: npc_nb.Project, outcome: dict) -> list[str]:
    """What is wrong with the store after a run (empty: every write present, the audit
    log complete, the invariants held)."""
    problems = []
    memories = nb.memories()
    status = dict(zip(memories["id"], memories["status"], strict=True))
    events = nb.decisions()
    proposed = set(events.loc[events["action"] == "propose", "memory_id"])
    decided = events[events["action"].isin(["approve", "reject"])]
    added = [i for r in outcome["results"] for i in r["added"]]
    won = [i for r in outcome["results"] for i in r["decided"]]
    if missing := [i for i in added if i not in status]:
        problems.append(f"{len(missing)} added candidate(s) missing")
    if unaudited := [i for i in added if i not in proposed]:
        problems.append(f"{len(unaudited)} candidate(s) without a propose event")
    if sorted(decided["memory_id"]) != sorted(won):
        problems.append("decision events differ from the decisions made")
    # An approved update of an approved memory supersedes it: decided either way.
    decided_statuses = ("human-approved", "human-rejected", "superseded")
    if wrong := [i for i in won if status.get(i) not in decided_statuses]:
        problems.append(f"{len(wrong)} decided memories not decided in the store")
    if len(decided) != decided["memory_id"].nunique():
        problems.append("a memory was decided twice")
    return problems


def summary(outcome: dict) -> dict[str, tuple[float, float, int]]:
    """{operation: (p50 ms, p95 ms, count)} over every worker."""
    table = {}
    for kind in KINDS:
        samples = sorted(t for r in outcome["results"] for t in r["timings"][kind])
        if samples:
            table[kind] = (
                1000 * samples[len(samples) // 2],
                1000 * samples[min(len(samples) - 1, int(0.95 * len(samples)))],
                len(samples),
            )
    return table


def render(outcomes: dict[str, dict]) -> str:
    """The closing note: throughput and p50/p95 per operation, the backends side by side."""
    names = list(outcomes)
    lines = [
        f"{WORKERS} processes x {next(iter(outcomes.values()))['ops'] // WORKERS} mixed operations",
        f"{'':18}" + "".join(f"{name:>24}" for name in names),
        f"{'throughput (op/s)':18}"
        + "".join(f"{o['ops'] / o['wall']:>24.0f}" for o in outcomes.values()),
    ]
    tables = {name: summary(o) for name, o in outcomes.items()}
    for kind in KINDS:
        cells = []
        for name in names:
            p50, p95, _ = tables[name].get(kind, (0.0, 0.0, 0))
            cells.append(f"{f'p50 {p50:.1f} / p95 {p95:.1f} ms':>24}")
        lines.append(f"{kind:18}" + "".join(cells))
    return "\n".join(lines)


def compare(store_url: str, ops: int, root: Path) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Run both backends; return their outcomes and each one's problems."""
    outcomes, problems = {}, {}
    for name, store in (("DuckDB (embedded)", "embedded"), ("PostgreSQL", store_url)):
        folder = root / name.split()[0].lower()
        (folder / ".git").mkdir(parents=True)
        outcomes[name] = run(folder, store, ops)
        nb = npc_nb.open(folder, **({"store": store} if store != "embedded" else {}))
        try:
            problems[name] = check(nb, outcomes[name])
        finally:
            nb.close()
    return outcomes, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="a PostgreSQL URL (default: a throwaway server)")
    parser.add_argument("--ops", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("NPC_NB_HOME", str(Path(tmp) / "home"))
        if args.store:
            outcomes, problems = compare(args.store, args.ops, Path(tmp))
        else:
            from tests.postgres import start_postgres

            with start_postgres() as server:
                outcomes, problems = compare(server.new_database("bench"), args.ops, Path(tmp))
    print(render(outcomes))
    for name, found in problems.items():
        print(f"{name}: {'; '.join(found) if found else 'every write present, audit complete'}")


if __name__ == "__main__":
    main()
