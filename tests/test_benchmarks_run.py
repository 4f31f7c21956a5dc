"""The benchmark scripts still run (tiny sizes), so they cannot rot unnoticed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments",
    [
        ["bench_store.py", "--sizes", "300", "--repeat", "5"],
        ["bench_metrics.py", "--memories", "3000", "--repeat", "1"],
        ["bench_graph.py", "--sizes", "200"],
        ["bench_chat.py", "--cells", "3"],
        ["bench_review.py", "--size", "200", "--pending", "60", "--presses", "5"],
    ],
)
def test_benchmark_script_runs(arguments: list[str], tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH / arguments[0]), *arguments[1:]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "npc_nb" in result.stdout
