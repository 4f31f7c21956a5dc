"""The worked comparison of docs/experiments.md (run by hand; deterministic).

    .venv/bin/python bench/experiment_example.py [--exchanges 50] [--seed 0]

Two arms over the same ``--exchanges`` stored exchanges (each in a conversation of its
own): ``A``, the built-in offline model; ``B``, a scripted extractor that proposes one
statement of each exchange (the decision), as a stricter prompt would. A simulated
reviewer decides every card blind, in the experiment's order, approving with a known
probability per kind of statement (a decision 0.85, a preference 0.55, a commitment
0.45: arm B, all decisions, should be approved more often), seeded. Printed: the
results frame, the comparison on the approval rate and on the decision, the run time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

import pandas as pd

APPROVAL = {"decision": 0.85, "preference": 0.55, "commitment": 0.45}
TOPICS = ("DuckDB", "Parquet", "R", "Python", "netCDF", "Zarr", "SQLite", "Arrow", "Polars")


def exchange(n: int) -> str:
    tool, other = TOPICS[n % len(TOPICS)], TOPICS[(n * 5 + 3) % len(TOPICS)]
    return (
        f"We decided to use {tool} for survey {n}. I prefer plots of site {n} with {other}. "
        f"By Friday I will send the ringing dataset {n}."
    )


def decisions(user_text: str, reply_text: str) -> str:
    """Arm B: the decision of each exchange only."""
    said = next(s.strip() for s in user_text.split(".") if s.strip().startswith("We decided"))
    item = {"statement": said + ".", "category": "decision", "evidence_quote": said}
    return json.dumps({"memories": [item]})


def show(frame: pd.DataFrame, columns: str) -> None:
    print(frame[columns.split()].to_string(index=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="npc_nb-experiment-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    import npc_nb

    nb = npc_nb.open(folder, create=True, extract_in_background=False, reviewer="bench")
    nb.npc("analyst", directive="You help with field data.", model="npc_nb/offline")
    for n in range(args.exchanges):
        nb.chat("analyst", exchange(n), new=True)
    nb.extraction.cancel()  # live extraction is not what is measured
    arms = {"A": {"model": "npc_nb/offline"}, "B": {"extractor": decisions}}
    started = time.perf_counter()
    exp = nb.experiment("worked", arms=arms, npc="analyst", seed=args.seed)
    exp.run()
    exp.wait()
    ran = time.perf_counter() - started
    rng = random.Random(args.seed)
    session = exp.review_session(by="simulated")
    kinds = nb.sql("SELECT id, category FROM memories WHERE experiment_arm IS NOT NULL")
    kind = dict(zip(kinds["id"], kinds["category"], strict=True))
    reviewed = time.perf_counter()
    while (card := session.card()) is not None:
        approve = rng.random() < APPROVAL.get(kind[card.memory_id], 0.5)
        session.decide((npc_nb.Approve if approve else npc_nb.Reject)(card.memory_id))
    reviewed = time.perf_counter() - reviewed
    pd.set_option("display.width", 200)
    pd.set_option("display.max_columns", 30)
    results = exp.results()
    print(f"npc_nb extraction experiment: {args.exchanges} exchanges, 2 arms, seed {args.seed}\n")
    show(results, "arm exchanges candidates per_exchange cards merged suppressed flagged "
         "decided approved rejected")  # fmt: skip
    show(results.round(3), "arm approval_rate approval_rate_low approval_rate_high "
         "rejection_rate median_review_s")  # fmt: skip
    show(exp.compare().round(4), "arm baseline successes trials baseline_successes "
         "baseline_trials difference ci_low ci_high p_value p_holm permutation_p "
         "permutations permutation_method bootstrap_low bootstrap_high conversations")  # fmt: skip
    print(exp.compare()["note"].fillna("(no note)").iloc[0] + "\n")
    show(exp.compare("decision").round(4), "arm baseline statistic df p_value test")
    print(f"\nrun: {ran:.2f} s for {2 * args.exchanges} extractions; "
          f"blind review of {int(results['cards'].sum())} cards: {reviewed:.2f} s")  # fmt: skip
    nb.close()


if __name__ == "__main__":
    main()
