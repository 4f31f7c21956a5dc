"""Load: 4 processes x 500 mixed operations (add a candidate, decide, read a context)
against one embedded DuckDB file and against PostgreSQL. Every write is present after,
the audit log complete, the invariants hold; throughput and p95 per operation for both
backends are printed side by side (``pytest -s`` shows them; ``bench/`` has the script).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.helpers import REPO

_spec = importlib.util.spec_from_file_location(
    "bench_shared_store", REPO / "bench" / "bench_shared_store.py"
)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.slow
def test_four_kernels_lose_nothing_on_either_backend(tmp_path: Path, postgres_url: str) -> None:
    outcomes, problems = bench.compare(postgres_url, 500, tmp_path)
    print("\n" + bench.render(outcomes))
    assert problems == {name: [] for name in outcomes}
    for outcome in outcomes.values():
        assert outcome["ops"] == 4 * 500
        assert sum(len(r["added"]) for r in outcome["results"]) > 0
        assert sum(len(r["decided"]) for r in outcome["results"]) > 0
