"""An experiment's results and comparison, as DataFrames over its cards.

``results`` has one row per arm: candidates proposed (and per exchange), the cards they
made, duplicates within the arm (merged into a card of the same arm, suppressed by its
tombstone, reinforcing its approved memory), flagged cards, decided cards, the
approval, edit and rejection rates with Wilson 95% intervals and their counts beside
them, and the median review time per card. A decided card is approved, edited or
rejected; the approval rate counts an edit as an approval (the fact was kept), the edit
rate the edits alone.

``compare`` puts each arm against the baseline (``analytics.comparison``): on a yes/no
metric the difference of rates with Newcombe's interval, Fisher's exact p-value, Holm's
adjustment across arms and the counts, and, because an arm's cards cluster within
conversations, the permutation test over conversations (exact while the arrangements
are few, else a seeded Monte Carlo; its method and count beside it) and a bootstrap
interval that resamples whole conversations, with a note where that interval cannot be
trusted (fewer than 20 conversations, an arm's rate 0 or 1); on ``"decision"``
(approved, edited, rejected) a chi-square test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..analytics.comparison import (
    bootstrap_caveat,
    cluster_bootstrap_difference,
    compare_categories,
    compare_proportions,
    permutation_test_difference,
)
from ..analytics.intervals import wilson_interval
from ..errors import InvalidValueError

__all__ = ["METRICS", "compare_frame", "results_frame"]

#: The yes/no metrics ``compare`` takes, and which decisions count as a yes.
METRICS = {
    "approval_rate": ("approve", "edit"),
    "edit_rate": ("edit",),
    "rejection_rate": ("reject",),
}
_DECISIONS = ("approve", "edit", "reject")


def results_frame(
    cards: pd.DataFrame, items: pd.DataFrame, arms: list[str], exchanges: int
) -> pd.DataFrame:
    """One row per arm (see the module docstring)."""
    out = []
    for arm in arms:
        mine, proposed = cards[cards["arm"] == arm], items[items["arm"] == arm]
        decided = mine[mine["decision"].notna()]
        counts = {d: int((decided["decision"] == d).sum()) for d in _DECISIONS}
        spent = pd.to_numeric(decided["time_spent_ms"], errors="coerce").dropna()
        outcomes = proposed["outcome"].value_counts()
        out.append(
            {
                "arm": arm,
                "exchanges": exchanges,
                "candidates": len(proposed),
                "per_exchange": len(proposed) / exchanges if exchanges else np.nan,
                "cards": len(mine),
                "merged": int(outcomes.get("merged", 0)),
                "suppressed": int(outcomes.get("suppressed", 0)),
                "reinforced": int(outcomes.get("reinforced", 0)),
                "flagged": int(mine["flagged"].fillna(False).astype(bool).sum()),
                "decided": len(decided),
                "approved": counts["approve"] + counts["edit"],
                "edited": counts["edit"],
                "rejected": counts["reject"],
                "median_review_s": spent.median() / 1000 if len(spent) else np.nan,
            }
        )
    frame = pd.DataFrame(out)
    for rate, count in (
        ("approval_rate", "approved"),
        ("edit_rate", "edited"),
        ("rejection_rate", "rejected"),
    ):
        low, high = wilson_interval(frame[count], frame["decided"])
        share = frame[count] / frame["decided"].where(frame["decided"] > 0)
        frame.insert(len(frame.columns) - 1, rate, share.astype("float64"))
        frame.insert(len(frame.columns) - 1, f"{rate}_low", low)
        frame.insert(len(frame.columns) - 1, f"{rate}_high", high)
    return frame


def compare_frame(
    cards: pd.DataFrame, arms: list[str], metric: str, baseline: str, seed: int
) -> pd.DataFrame:
    """Each arm against ``baseline`` on ``metric`` (see the module docstring)."""
    decided = cards[cards["decision"].notna()].copy()
    if metric == "decision":
        tally = decided.groupby(["arm", "decision"]).size()
        counts = pd.DataFrame(
            [{"arm": arm, **{d: int(tally.get((arm, d), 0)) for d in _DECISIONS}} for arm in arms]
        )
        return compare_categories(counts, baseline=baseline)
    if metric not in METRICS:
        raise InvalidValueError(
            "metric", metric, (*METRICS, "decision"), lead=f"Unknown metric {metric!r}"
        )
    decided["success"] = decided["decision"].isin(METRICS[metric]).astype(int)
    counts = pd.DataFrame(
        [
            {
                "arm": arm,
                "successes": int(decided.loc[decided["arm"] == arm, "success"].sum()),
                "trials": int((decided["arm"] == arm).sum()),
            }
            for arm in arms
        ]
    )
    compared = compare_proportions(counts, baseline=baseline)
    compared.insert(1, "metric", metric)
    clustered = pd.DataFrame(
        [_clustered(decided, row, baseline, seed) for _, row in compared.iterrows()],
        columns=_CLUSTERED,
    )
    notes = [
        "; ".join(str(n) for n in (note, caveat) if isinstance(n, str)) or None
        for note, caveat in zip(compared["note"], clustered.pop("caveat"), strict=True)
    ]
    compared = pd.concat([compared.drop(columns="note"), clustered], axis=1)
    compared["note"] = pd.array(notes, dtype="string")
    return compared.astype({"permutations": "int64", "conversations": "int64"})


_COLUMNS: dict[str, Any] = {"cluster": "conversation_id", "group": "arm", "outcome": "success"}
_CLUSTERED = [
    "permutation_p",
    "permutations",
    "permutation_method",
    "bootstrap_low",
    "bootstrap_high",
    "conversations",
    "caveat",
]


def _clustered(decided: pd.DataFrame, row: pd.Series, baseline: str, seed: int) -> dict:
    """One arm against the baseline by conversation: the permutation test, the cluster
    bootstrap interval, the conversations with a card of either, and the bootstrap's
    caveat (None where it can be trusted, or where there is no interval)."""
    p, permutations, method = permutation_test_difference(
        decided, **_COLUMNS, baseline=baseline, other=row["arm"], seed=seed
    )
    low, high, _ = cluster_bootstrap_difference(
        decided, **_COLUMNS, baseline=baseline, other=row["arm"], seed=seed
    )
    both = decided[decided["arm"].isin([baseline, row["arm"]])]
    conversations = both["conversation_id"].nunique()
    rates = {row["arm"]: row["rate"], baseline: row["baseline_rate"]}
    return {
        "permutation_p": p,
        "permutations": permutations,
        "permutation_method": method,
        "bootstrap_low": low,
        "bootstrap_high": high,
        "conversations": conversations,
        "caveat": None if np.isnan(low) else bootstrap_caveat(conversations, rates),
    }
