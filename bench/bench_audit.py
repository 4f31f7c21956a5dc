"""Audited batch approval on a synthetic queue: questions asked, how often a batch is
approved, and how often a bad one is, simulated next to the exact numbers.

    .venv/bin/python bench/bench_audit.py [--population 1000] [--runs 20000] [--seed 0]

1. **The default design** (``npc_nb.plan_audit(population)``, tolerance 5%, confidence
   95%). For each true error rate (1%, 2%, 3%, 10%, and the bad batches 5%, 6%, 8%) a
   batch of ``--population`` cards holds exactly rate x population wrong cards; each
   run shuffles the batch (numpy ``default_rng``, one seed for the whole bench) and
   reads the plan's verdict at each look on the wrong cards among the first ``looks[j]``
   cards, exactly as an audit would. A run ends approved (the questions are the cards
   sampled) or failed (the whole batch is then reviewed: the questions are the batch).
   Printed per rate: the share of runs approved (with its exact 95% interval), the mean
   and p90 of the questions, and the same numbers from ``AuditPlan``'s exact dynamic
   programme (``approval_probability``, ``expected_questions``).
2. **The naive re-test** the design replaces: a first sample of 59 and 20 more per look
   up to 400, each look read at plain 95% as if it were the only one, on a batch at the
   tolerance (5%): the share of runs approved, simulated and exact.
3. **The time** of ``plan_audit(population)`` (p50 / p95 over ``--repeat`` calls), as a
   row of the bench table.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import Row, print_table, timed, write_rows

import npc_nb
from npc_nb.analytics.audit_chances import audit_chances
from npc_nb.analytics.audit_plan import AuditPlan, _cdf_table

RATES = (0.01, 0.02, 0.03, 0.05, 0.06, 0.08, 0.10)
CHUNK = 2_000  # runs shuffled at once: 2,000 x 1,000 cards is 2 MB of flags


def simulate(
    plan: AuditPlan, defects: int, runs: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each run's outcome: whether it approved, and the cards sampled in the audit (it
    stops at the approving look, or at the first look after which none can approve)."""
    assert plan.population is not None
    looks, thresholds = np.array(plan.looks), np.array(plan.thresholds)
    later = np.array([max(plan.thresholds[j + 1 :], default=-1) for j in range(len(looks))])
    approved, sampled = [], []
    for start in range(0, runs, CHUNK):
        batch = np.zeros((min(CHUNK, runs - start), plan.population), dtype=np.int8)
        batch[:, :defects] = 1
        shuffled = rng.permuted(batch, axis=1)
        found = np.cumsum(shuffled[:, : looks[-1]], axis=1, dtype=np.int32)[:, looks - 1]
        ends = (found <= thresholds) | (found > later)  # approve, or no later look can
        stop = ends.argmax(axis=1)  # the last look always ends a run
        rows = np.arange(len(stop))
        approved.append(found[rows, stop] <= thresholds[stop])
        sampled.append(looks[stop])
    return np.concatenate(approved), np.concatenate(sampled)


def interval(successes: int, trials: int) -> tuple[float, float]:
    """The exact two-sided 95% interval of a share (Clopper–Pearson, both tails 2.5%)."""
    high = npc_nb.error_bound(successes, trials, confidence=0.975)
    low = 1 - npc_nb.error_bound(trials - successes, trials, confidence=0.975)
    return low, high


def report(plan: AuditPlan, runs: int, rng: np.random.Generator) -> None:
    assert plan.population is not None
    print(f"\n{plan.method}\n")
    print(
        "| true rate | wrong cards | approved (simulated, 95% interval) | approved (exact) "
        "| questions mean (sim / exact) | questions p90 | audit sample mean (sim / exact) |"
    )
    print("|--:|--:|--:|--:|--:|--:|--:|")
    for rate in RATES:
        defects = round(rate * plan.population)
        approves, sampled = simulate(plan, defects, runs, rng)
        approved = int(approves.sum())
        low, high = interval(approved, runs)
        settle = np.where(approves, sampled, plan.population)  # a failed batch: all reviewed
        exact = audit_chances(plan.population, plan.looks, plan.thresholds, defects)
        bad = " (bad)" if rate >= plan.tolerance else ""
        print(
            f"| {rate:.0%}{bad} | {defects} | {approved / runs:.4f} [{low:.4f}, {high:.4f}] "
            f"| {plan.approval_probability(defects):.4f} "
            f"| {settle.mean():.1f} / {plan.expected_questions(defects):.1f} "
            f"| {np.percentile(settle, 90):.0f} | {sampled.mean():.1f} / {exact.sampled:.1f} |"
        )


def naive(population: int, runs: int, rng: np.random.Generator) -> None:
    looks = tuple(range(59, 401, 20))
    thresholds = tuple(_most_errors(n, population) for n in looks)
    plan = AuditPlan(population, 0.05, 0.95, looks, 0.95, thresholds, "naive re-test")
    defects = round(0.05 * population)
    approved = int(simulate(plan, defects, runs, rng)[0].sum())
    low, high = interval(approved, runs)
    unbounded = tuple(_most_errors(n, None) for n in looks)
    rate_exact = audit_chances(None, looks, unbounded, 0.05).approve
    calibrated = npc_nb.plan_audit(population, looks=looks)
    print(
        f"\nNaive re-test (59, then +20 per look up to {looks[-1]}, each look at plain 95%), "
        f"batch of {population} at 5% ({defects} wrong): approved {approved / runs:.4f} "
        f"[{low:.4f}, {high:.4f}] of {runs} runs; exact {plan.approval_probability(defects):.4f} "
        f"(unbounded batch: {rate_exact:.4f}). The same looks calibrated "
        f"(nominal {calibrated.nominal_confidence}): exact "
        f"{calibrated.approval_probability(defects):.4f}."
    )


def _most_errors(sample: int, population: int | None) -> int:
    errors = -1
    while npc_nb.error_bound(errors + 1, sample, 0.95, population) < 0.05:
        errors += 1
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=20_000, help="simulated audits per rate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=20, help="timed plan_audit calls")
    parser.add_argument("--json", type=Path, help="also write the timing row here")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    plan = npc_nb.plan_audit(args.population)
    report(plan, args.runs, rng)
    naive(args.population, args.runs, rng)
    p50, p95 = timed(  # cold: the per-look tables a plan caches are cleared first
        lambda _: npc_nb.plan_audit(args.population),
        args.repeat,
        lambda _: _cdf_table.cache_clear(),
    )
    rows = [Row("plan_audit", f"batch of {args.population:,}", p50, p95)]
    print(f"\nnpc_nb {npc_nb.__version__}; {args.runs} runs per rate, seed {args.seed}.\n")
    print_table(rows)
    if args.json:
        write_rows(rows, args.json)


if __name__ == "__main__":
    main()
