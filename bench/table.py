"""The one results table every benchmark script fills: a row is one timed operation at
one store size, next to the baseline measured in the same run.

A script prints its own rows with ``print_table``, and with ``--json PATH`` also writes
them, so ``bench/run_all.py`` can gather every script's rows into one table.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    """One operation's p50 and p95 (``unit``: ms, or MB for memory) and its baseline's."""

    operation: str
    store: str
    p50: float
    p95: float
    baseline: str = ""
    base_p50: float | None = None
    base_p95: float | None = None
    unit: str = "ms"

    @property
    def ratio(self) -> float | None:
        if not self.base_p50:
            return None
        return self.p50 / self.base_p50


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) of the samples (nearest rank for p95)."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def timed(
    action: Callable[[int], object],
    repeat: int,
    before: Callable[[int], object] | None = None,
) -> tuple[float, float]:
    """p50/p95 in ms of ``action(i)`` over ``repeat`` calls; ``before(i)`` runs untimed
    ahead of each call."""
    samples = []
    for i in range(repeat):
        if before is not None:
            before(i)
        started = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def paired(
    action: Callable[[int], object], baseline: Callable[[int], object], repeat: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """p50/p95 in ms of ``action(i)`` and of ``baseline(i)``, called in turn ``repeat``
    times each: a machine that speeds up or slows down meanwhile moves both alike, so
    their ratio holds (the machines this is measured on drift within minutes)."""
    samples: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat):
        for run, kept in ((action, samples[0]), (baseline, samples[1])):
            started = time.perf_counter()
            run(i)
            kept.append((time.perf_counter() - started) * 1000)
    return percentiles(samples[0]), percentiles(samples[1])


def size_label(memories: int) -> str:
    """1000 -> "1k", 1000000 -> "1M"."""
    if memories >= 1_000_000 and memories % 1_000_000 == 0:
        return f"{memories // 1_000_000}M"
    if memories >= 1_000 and memories % 1_000 == 0:
        return f"{memories // 1_000}k"
    return f"{memories:,}"


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value:,.0f} MB"
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def format_table(rows: Iterable[Row]) -> str:
    """The rows as a Markdown table (times in ms; memory marked MB)."""
    header = "| operation | store | p50 | p95 | baseline | baseline p50 | baseline p95 | ratio |"
    lines = [header, "|---|---|--:|--:|---|--:|--:|--:|"]
    for row in rows:
        ratio = "-" if row.ratio is None else f"{row.ratio:.{2 if row.ratio < 1 else 1}f}x"
        lines.append(
            f"| {row.operation} | {row.store} | {_number(row.p50, row.unit)} "
            f"| {_number(row.p95, row.unit)} | {row.baseline or '-'} "
            f"| {_number(row.base_p50, row.unit)} | {_number(row.base_p95, row.unit)} "
            f"| {ratio} |"
        )
    return "\n".join(lines)


def print_table(rows: Iterable[Row]) -> None:
    print(format_table(rows))


def write_rows(rows: Iterable[Row], path: Path) -> None:
    path.write_text(json.dumps([asdict(row) for row in rows], indent=1))


def read_rows(path: Path) -> list[Row]:
    return [Row(**item) for item in json.loads(path.read_text())]
