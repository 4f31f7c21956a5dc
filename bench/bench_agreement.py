"""Agreement between two reviewers: a worked example, and the time at 100k votes.

    .venv/bin/python bench/bench_agreement.py [--cards 200] [--depart 0.15] [--votes 100000]

1. **The worked example.** ``--cards`` simulated cards in a real project in independent
   review (``review_mode="independent"``, two votes a card). Each card has a true
   answer (approve 60%, edit 10%, reject 30%); each of two reviewers, ada and bob, gives
   it, except that with probability ``--depart`` (each on their own) they give one of
   the other three decisions instead, uniformly. So they disagree with probability
   ``2d(1 - d) + d²·2/3`` (with ``d = --depart``: 0.27 at 0.15), the known disagreement
   rate the frame should recover. Every vote goes through ``nb.approve/edit/reject/defer``
   of the reviewer's own Project; a third reviewer, carol, adjudicates the disagreements with
   ``nb.adjudicate``. Printed: the agreement frame with its 95% bootstrap intervals (as
   voted, and with ``collapse_edits=True``), how many cards agreed and how many went to
   adjudication.
2. **The time.** A store of ``--votes // 2`` memories made by ``bench/generate.py``, and
   two votes on each (six reviewers in three pairs, the same departure model) inserted
   set-wise into ``votes``; the median wall time over ``--repeat`` runs of
   ``nb.metrics.agreement()`` (whole store, ``group_by="category"``, ``pairwise=True``)
   and of ``npc_nb.agreement_from`` on the same votes as a 100k-row DataFrame. Each run draws 1000
   bootstrap resamples per group.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generate import generate

import npc_nb

DECISIONS = ("approve", "edit", "reject", "defer")
#: The true answers' shares: approve, edit, reject.
TRUTH = (("approve", 0.6), ("edit", 0.1), ("reject", 0.3))
SHOWN = [
    "cards",
    "votes",
    "percent_agreement",
    "percent_agreement_ci_low",
    "percent_agreement_ci_high",
    "kappa",
    "kappa_ci_low",
    "kappa_ci_high",
    "krippendorff_alpha",
    "krippendorff_alpha_ci_low",
    "krippendorff_alpha_ci_high",
    "gwet_ac1",
    "gwet_ac1_ci_low",
    "gwet_ac1_ci_high",
    "kappa_kind",
    "resamples",
]


def expected_disagreement(depart: float) -> float:
    """P(two reviewers differ) when each departs from the truth with ``depart``."""
    return 2 * depart * (1 - depart) + depart**2 * 2 / 3


def simulate(depart: float, cards: int, seed: int = 31) -> list[tuple[str, str, str]]:
    """(truth, ada's decision, bob's decision) for each card, seeded."""
    rng = random.Random(seed)
    answers, weights = zip(*TRUTH, strict=True)

    def vote(truth: str) -> str:
        if rng.random() >= depart:
            return truth
        return rng.choice([d for d in DECISIONS if d != truth])

    out = []
    for _ in range(cards):
        truth = rng.choices(answers, weights)[0]
        out.append((truth, vote(truth), vote(truth)))
    return out


def cast(nb: npc_nb.Project, memory_id: str, text: str, decision: str) -> None:
    """One reviewer's vote through the public API (``nb``: the reviewer's own Project;
    its result says only "vote recorded")."""
    if decision == "approve":
        nb.approve(memory_id)
    elif decision == "edit":
        nb.edit(memory_id, f"{text} (checked)")
    elif decision == "reject":
        nb.reject(memory_id, reason="not a fact")
    else:
        nb.defer(memory_id, until="2099-01-01")


def reviewer_kernels(folder: Path) -> dict[str, npc_nb.Project]:
    """ada, bob and carol, each recording from a Project of their own (in independent
    review ``by=`` names only yourself)."""
    return {
        name: npc_nb.open(folder, reviewer=name, matcher=None, extract_in_background=False)
        for name in ("ada", "bob", "carol")
    }


def worked_example(folder: Path, cards: int, depart: float) -> None:
    nb = npc_nb.open(folder, create=True, matcher=None, extract_in_background=False)
    nb.access.set_policy(review_mode="independent")
    kernels = reviewer_kernels(folder)
    plan = simulate(depart, cards)
    started = time.perf_counter()
    for number, (_, ada, bob) in enumerate(plan):
        text = f"Simulated fact number {number} of the worked example"
        memory_id = nb.add_candidate(text, npc="analyst", category="fact").memory_id
        cast(kernels["ada"], memory_id, text, ada)
        cast(kernels["bob"], memory_id, text, bob)
    took = time.perf_counter() - started
    finals = int((nb.decisions()["action"] == "agree").sum())
    waiting = nb.review_queue(adjudicate=True, by="carol")
    observed = sum(ada != bob for _, ada, bob in plan) / cards
    print(f"## Worked example: {cards} cards, two reviewers, each departing with p={depart}")
    print(f"expected disagreement {expected_disagreement(depart):.3f}, simulated {observed:.3f}")
    print(f"{2 * cards} votes cast through the API in {took:.1f} s: {finals} cards final by")
    print(f"agreement, {len(waiting)} waiting for adjudication")
    pd.set_option("display.width", 200)
    for collapse in (False, True):
        frame = nb.metrics.agreement(collapse_edits=collapse)
        what = "approve+edit / reject / defer" if collapse else "approve / edit / reject / defer"
        print(f"\nnb.metrics.agreement(collapse_edits={collapse})  ({what}):")
        print(frame[SHOWN].round(3).T.to_string(header=False))
    for memory_id in waiting["id"]:
        kernels["carol"].adjudicate(memory_id, vote=1)
    left = len(nb.review_queue(adjudicate=True, by="carol"))
    approved = len(nb.memories(status="approved"))
    print(f"\ncarol adjudicated {len(waiting)} cards (vote 1 each); {left} left waiting;")
    print(f"{approved} of {cards} memories approved")
    for kernel in (*kernels.values(), nb):
        kernel.close()


def vote_store(folder: Path, votes: int, depart: float) -> None:
    """``votes // 2`` generated memories with two votes each, inserted set-wise."""
    path = generate(folder, votes // 2)
    con = duckdb.connect(str(path))
    try:
        con.execute(
            """INSERT INTO votes (id, memory_id, round, reviewer, decision, final_text,
                final_hash, voted_at, event_seq)
            WITH cards AS (
                SELECT id, final_text, final_hash, insert_seq AS n, recorded_at,
                    hash(id) % 1000 / 1000.0 AS u
                FROM memories),
            truth AS (
                SELECT *, CASE WHEN u < 0.6 THEN 0 WHEN u < 0.7 THEN 1 ELSE 2 END AS t
                FROM cards),
            ballots AS (
                SELECT truth.*, r.k,
                    hash(id || 'depart' || r.k) % 10000 / 10000.0 AS d,
                    CAST(1 + hash(id || 'other' || r.k) % 3 AS INTEGER) AS shift
                FROM truth, range(2) r(k))
            SELECT id || ':' || k, id, 1,
                ['ada', 'bob', 'carol', 'dan', 'eve', 'fay'][CAST(1 + 2 * (n % 3) + k AS INTEGER)],
                ['approve', 'edit', 'reject', 'defer'][CAST(1 + (t + CASE WHEN d < ? THEN shift
                    ELSE 0 END) % 4 AS INTEGER)],
                final_text, final_hash, recorded_at, 0
            FROM ballots""",
            [depart],
        )
    finally:
        con.close()


def median_time(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def timing(folder: Path, votes: int, depart: float, repeat: int) -> None:
    started = time.perf_counter()
    vote_store(folder, votes, depart)
    print(f"\n## Timing: {votes:,} votes (store built in {time.perf_counter() - started:.1f} s)")
    nb = npc_nb.open(folder)
    counted = int(nb.sql("SELECT count(*) AS n FROM votes")["n"].iloc[0])
    whole = nb.metrics.agreement()
    print(f"votes in the store: {counted:,}; cards: {int(whole['cards'].iloc[0]):,}")
    print(whole[SHOWN].round(3).T.to_string(header=False))
    calls: list[tuple[str, Callable[[], object]]] = [
        ("nb.metrics.agreement()", lambda: nb.metrics.agreement()),
        (
            'nb.metrics.agreement(group_by="category")',
            lambda: nb.metrics.agreement(group_by="category"),
        ),
        ("nb.metrics.agreement(pairwise=True)", lambda: nb.metrics.agreement(pairwise=True)),
    ]
    frame = nb.votes()[["memory_id", "reviewer", "decision"]]
    calls.append(
        (f"npc_nb.agreement_from(<{len(frame):,}-row frame>)", lambda: npc_nb.agreement_from(frame))
    )
    print(f"\nmedian of {repeat} runs, 1000 bootstrap resamples per group:")
    for name, run in calls:
        print(f"  {name:<45} {median_time(run, repeat):6.2f} s")
    nb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=200)
    parser.add_argument("--depart", type=float, default=0.15)
    parser.add_argument("--votes", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="npc-bench-agreement-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    print(f"npc_nb {npc_nb.__version__}")
    worked_example(folder / "example", args.cards, args.depart)
    timing(folder / "timing", args.votes, args.depart, args.repeat)


if __name__ == "__main__":
    main()
