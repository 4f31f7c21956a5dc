"""Metrics of the memory process, each a pandas DataFrame grouped as you ask.

    nb.metrics.approval_rate(by="model")
    nb.metrics.reproposal_rate(by=["prompt_version", "week"])
    nb.metrics.backlog(period="day")

Group by any of: model, provider, prompt_version, npc, team, category, scope, reviewer,
day, week, month (``reviewer`` is not available for re-proposals). Rates are NaN where
their denominator is 0: "no decisions yet" is not a rate of zero. The definitions:

- **approval rate**: (approved + edited) / decided, over proposed memories (versions a
  supersede creates are not proposals). A superseded memory counts as approved: it was,
  before it was revised. Undone decisions do not count: what counts is the status now.
- **rejection rate**: rejected / decided. **edit rate**: approved with changed text /
  decided; ``mean_text_change`` is the mean normalised Levenshtein distance between
  proposed and approved text of those (0 = unchanged, 1 = all different).
- **re-proposal rate**: repeats of already decided content (matching a rejected or an
  approved memory) per new candidate; ``pending_rate`` counts repeats merged into a
  candidate still waiting, ``reinforced_rate`` the repeats kept as more evidence of an
  approved memory.
- **matching**: of the matcher's automatic outcomes (merged into a card, suppressed as
  a rejected repeat, reinforcing an approved memory), those a reviewer checked (listed
  at the end of a review or by ``%npc_review --auto``, put back, or merged into a card
  that was then decided) and those put back as wrong (``nb.requeue``); ``precision`` is
  right / checked. Group also by matcher, verdict and outcome.
- **time to decision**: from proposal to the first decision that was not undone.
- **reviewer throughput**: cards per minute of active review (gaps over 5 minutes are
  breaks), and the median time per card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._arguments import unknown_choice
from ..errors import NpcError
from ..store import analytics

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["Metrics"]

SITTING_GAP_MS = 5 * 60 * 1000


class Metrics:
    """The metrics of one project store (``Project.metrics``)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def approval_rate(self, by: str | Sequence[str] = ()) -> pd.DataFrame:
        """Proposed, decided, approved, edited, rejected, open, and the three rates."""
        dims = _dimensions("memories", by)
        frame = analytics.outcomes(self._store, dims)
        frame["approval_rate"] = _rate(frame["approved"], frame["decided"])
        frame["rejection_rate"] = _rate(frame["rejected"], frame["decided"])
        frame["edit_rate"] = _rate(frame["edited"], frame["decided"])
        return frame

    def rejection_rate(self, by: str | Sequence[str] = ()) -> pd.DataFrame:
        frame = self.approval_rate(by)
        return frame[[*_dimensions("memories", by), "decided", "rejected", "rejection_rate"]]

    def edit_rate(self, by: str | Sequence[str] = ()) -> pd.DataFrame:
        frame = self.approval_rate(by)
        columns = ["decided", "approved", "edited", "edit_rate", "mean_text_change"]
        return frame[[*_dimensions("memories", by), *columns]]

    def reproposal_rate(self, by: str | Sequence[str] = ()) -> pd.DataFrame:
        """New candidates, re-proposals by kind, and the rates per new candidate."""
        dims = _dimensions("reproposals", by)
        new = analytics.outcomes(self._store, dims)[[*dims, "proposed"]]
        repeats = analytics.reproposals(self._store, dims)
        frame = _merge(new.rename(columns={"proposed": "new_candidates"}), repeats, dims)
        decided_repeats = frame["rejected"] + frame["approved"]
        frame["reproposal_rate"] = _rate(decided_repeats, frame["new_candidates"])
        for kind in ("rejected", "approved", "pending", "reinforced"):
            frame[f"{kind}_rate"] = _rate(frame[kind], frame["new_candidates"])
        return frame

    def matching(self, by: str | Sequence[str] = ("matcher", "verdict")) -> pd.DataFrame:
        """How often the matcher's automatic outcomes were right, judged by reviewers:
        automatic, checked, put_back (split + requeued), right, and precision."""
        dims = _dimensions("matching", by)
        frame = analytics.matching(self._store, dims)
        frame["right"] = frame["checked"] - frame["put_back"]
        frame["precision"] = _rate(frame["right"], frame["checked"])
        return frame

    def backlog(self, period: str = "day") -> pd.DataFrame:
        """Per period (hour, day, week, month): proposed, decided, and the backlog at its
        end, with empty periods filled in."""
        if period not in analytics.PERIODS:
            raise unknown_choice("period", str(period), analytics.PERIODS)
        frame = analytics.backlog(self._store, period)
        if frame.empty:
            return frame
        full = pd.date_range(
            frame["period"].min(),
            frame["period"].max(),
            freq={"hour": "h", "day": "D", "week": "W-MON", "month": "MS"}[period],
        )
        frame = frame.set_index("period").reindex(full)
        frame[["proposed", "closed"]] = frame[["proposed", "closed"]].fillna(0)
        frame["backlog"] = frame["backlog"].ffill()
        frame = frame.astype("int64").rename_axis("period").reset_index()
        return frame

    def time_to_decision(self, by: str | Sequence[str] = ()) -> pd.DataFrame:
        """Decided memories, and median, mean and 90th-percentile hours to decision."""
        return analytics.time_to_decision(self._store, _dimensions("memories", by))

    def reviewer_throughput(self, by: str | Sequence[str] = "reviewer") -> pd.DataFrame:
        """Cards decided, active minutes, cards per minute, median seconds per card,
        and batch approvals, per group (default: per reviewer)."""
        dims = _dimensions("decisions", by)
        frame = analytics.reviewer_activity(self._store, dims, SITTING_GAP_MS)
        frame["active_minutes"] = frame.pop("active_ms") / 60_000
        frame["cards_per_minute"] = _rate(frame["cards"], frame["active_minutes"])
        batches = analytics.batch_approvals(self._store, dims)
        merged = _merge(frame, batches, dims)
        merged["active_minutes"] = merged["active_minutes"].fillna(0.0)
        return merged

    def injections_per_memory(self) -> pd.DataFrame:
        """Each approved memory: how many prompts it went into, first and last time."""
        return analytics.injections_per_memory(self._store)

    # -- plots (matplotlib, imported on first use) -------------------------------------

    def plot_approval_rate(self, by: str = "model", period: str = "week") -> Any:
        """Approval rate over time, one line per value of ``by``."""
        frame = self.approval_rate(by=[period, by])
        table = frame.pivot_table(index=period, columns=by, values="approval_rate")
        axes = table.plot(marker="o", title=f"Approval rate by {by}", ylim=(0, 1.05))
        axes.set_ylabel("approved + edited / decided")
        return axes

    def plot_backlog(self, period: str = "day") -> Any:
        """Candidates waiting for review at the end of each period."""
        frame = self.backlog(period).set_index("period")
        axes = frame["backlog"].plot(drawstyle="steps-post", title="Review backlog")
        axes.set_ylabel("candidates waiting")
        return axes

    def plot_reproposals(self, period: str = "week") -> Any:
        """Re-proposals per period, stacked by what they repeated."""
        frame = self.reproposal_rate(by=period).set_index(period)
        axes = frame[["rejected", "approved", "pending"]].plot.bar(
            stacked=True, title="Re-proposals by kind"
        )
        axes.set_ylabel("re-proposals")
        return axes


def _dimensions(source: str, by: str | Sequence[str]) -> list[str]:
    names = [by] if isinstance(by, str) else list(by)
    allowed = analytics.DIMENSIONS[source]
    unknown = [name for name in names if name not in allowed]
    if unknown:
        name = unknown[0]
        raise unknown_choice(
            "dimension", name, tuple(allowed), lead=f"Cannot group by {name!r} here"
        )
    if len(set(names)) != len(names):
        raise NpcError(f"Group by each dimension once, not {names}.")
    return names


def _rate(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    return (numerator / denominator.where(denominator > 0, np.nan)).astype("float64")


def _merge(left: pd.DataFrame, right: pd.DataFrame, dims: list[str]) -> pd.DataFrame:
    """Join two grouped frames; a group missing on one side has zero counts there."""
    if not dims:
        merged = pd.concat([left.reset_index(drop=True), right.reset_index(drop=True)], axis=1)
    else:
        merged = left.merge(right, on=dims, how="outer")
    counts = [c for c in right.columns if c not in dims] + [
        c for c in left.columns if c not in dims and pd.api.types.is_integer_dtype(left[c])
    ]
    merged[counts] = merged[counts].fillna(0).astype("int64")
    return merged.sort_values(dims).reset_index(drop=True) if dims else merged
