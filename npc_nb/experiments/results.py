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
conversations, a bootstrap interval that resamples whole conversations; on
``"decision"`` (approved, edited, rejected) a chi-square test.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..analytics.comparison import (
    cluster_bootstrap_difference,
    compare_categories,
    compare_proportions,
)
from ..analytics.intervals import wilson_interval
from ..errors import ConfigError

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
        raise ConfigError(
            f"Unknown metric {metric!r}; compare() takes one of "
            f"{', '.join([*METRICS, 'decision'])}."
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
    bounds = [
        cluster_bootstrap_difference(
            decided,
            cluster="conversation_id",
            group="arm",
            outcome="success",
            baseline=baseline,
            other=arm,
            seed=seed,
        )
        for arm in compared["arm"]
    ]
    compared["bootstrap_low"] = [low for low, _, _ in bounds]
    compared["bootstrap_high"] = [high for _, high, _ in bounds]
    compared["conversations"] = decided["conversation_id"].nunique()
    return compared
