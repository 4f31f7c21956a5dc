"""Figures of the metrics, fit for a paper: matplotlib, imported on first use.

The key design choice: periods sit on a categorical axis, one slot per period from the
first to the last (empty ones included, so gaps in time stay visible), labelled with
dates, not on a continuous date axis. One week of data is then one slot in the middle
of the plot, not a dot on an axis four years wide, and series can be dodged within a
slot: several groups at a rate of 1.0 stay side by side, each with its own marker and
its 95% interval as an error bar. Counts get integer ticks and an axis from zero.

``plot_audit_plan`` is the audit planner's figure: the exact bound at the STATED
confidence against the sample size (where a curve crosses the tolerance is the fixed
design's sample size), with the sequential plan's looks marked at the bound, at the
plan's calibrated nominal confidence, of the most errors that still approve there:
one figure shows what looking more than once costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..errors import InvalidValueError
from .audit_bounds import error_bound
from .audit_plan import AuditPlan, plan_audit

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "arm_rates",
    "count_bars",
    "estimate_points",
    "level_line",
    "period_labels",
    "plot_audit_plan",
    "rate_points",
]

PERIOD_FREQUENCIES = {"hour": "h", "day": "D", "week": "W-MON", "month": "MS"}
_LABEL_FORMATS = {"hour": "%Y-%m-%d %H:00", "day": "%Y-%m-%d", "week": "%Y-%m-%d", "month": "%Y-%m"}
_AXIS_NAMES = {"hour": "hour", "day": "day", "week": "week (starting Monday)", "month": "month"}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">", "p")
_LINESTYLES = ("-", "--", "-.", ":")
_MIN_SLOTS = 4  # a plot is at least this many periods wide: one period stays narrow
_MAX_LABELS = 12
_MISSING = "(none)"


def rate_points(
    frame: pd.DataFrame,
    rate: str,
    period: str,
    group_by: str | None,
    *,
    title: str,
    ylabel: str,
    proportion: bool = True,
    ax: Axes | None = None,
) -> Axes:
    """One series per value of ``group_by`` (or one series): points at ``rate`` with error bars
    from ``ci_low`` to ``ci_high``, dodged within each period, joined by a line."""
    ax = _new_axes(ax)
    periods = _period_range(frame[period], period)
    series = _series(frame, group_by)
    width = min(0.6, 0.15 * len(series))  # how far apart a period's series spread
    labelled = []
    for i, (name, rows) in enumerate(series):
        rows = rows.set_index(period).reindex(periods)
        x = np.arange(len(periods)) + _offset(i, len(series), width)
        y, low, high = (_floats(rows[c]) for c in (rate, "ci_low", "ci_high"))
        counts = rows["n"].fillna(0).astype("int64")
        ax.errorbar(
            x, y, yerr=[y - low, high - y], label=f"{name} (n={counts.sum()})",
            marker=_MARKERS[i % len(_MARKERS)], linestyle=_LINESTYLES[i % len(_LINESTYLES)],
            linewidth=1, elinewidth=1, capsize=3, markersize=6,
        )  # fmt: skip
        if not group_by and len(periods) <= _MAX_LABELS:
            labelled.append((x, low, high, counts))
    _period_axis(ax, periods, period)
    top = 1.0 if proportion else max(1.0, float(np.nanmax(frame["ci_high"], initial=0.0)))
    ax.set_ylim(-0.05 * top, 1.05 * top)  # room for the markers at 0 and at the top
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    for args in labelled:
        _label_counts(ax, *args)
    if group_by and series:
        ax.legend(title=group_by, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax


def count_bars(
    frame: pd.DataFrame,
    columns: Sequence[str],
    period: str,
    *,
    title: str,
    ylabel: str,
    legend_title: str,
    ax: Axes | None = None,
) -> Axes:
    """Stacked bars of integer ``columns``, one bar per period."""
    ax = _new_axes(ax)
    periods = _period_range(frame[period], period)
    rows = frame.set_index(period).reindex(periods).fillna(0)
    bottom = np.zeros(len(periods))
    for column in columns:
        heights = rows[column].to_numpy(dtype="float64")
        ax.bar(np.arange(len(periods)), heights, width=0.6, bottom=bottom, label=column)
        bottom += heights
    _period_axis(ax, periods, period)
    _count_axis(ax, bottom.max(initial=0.0))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(title=legend_title, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax


def level_line(
    frame: pd.DataFrame,
    column: str,
    period: str,
    *,
    title: str,
    ylabel: str,
    ax: Axes | None = None,
) -> Axes:
    """An integer level (such as the backlog) at the end of each period, as points joined
    by a line."""
    ax = _new_axes(ax)
    periods = _period_range(frame[period], period)
    values = frame.set_index(period)[column].reindex(periods).to_numpy(dtype="float64")
    ax.plot(np.arange(len(periods)), values, marker="o" if len(periods) <= 3 * _MAX_LABELS else "")
    _period_axis(ax, periods, period)
    _count_axis(ax, np.nanmax(values, initial=0.0), below=0.04)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return ax


def estimate_points(
    frame: pd.DataFrame,
    groups: list[str],
    estimates: dict[str, str],
    *,
    title: str,
    ylabel: str,
    ax: Axes | None = None,
) -> Axes:
    """One slot per row of ``frame`` (labelled by its ``groups`` columns, with its
    ``cards``), one dodged point per estimate column (``estimates``: column -> label)
    with its 95% interval (``<column>_ci_low``/``_ci_high``) as an error bar. For
    coefficients from -1 to 1 (kappa, alpha, AC1) and shares (percent agreement)."""
    ax = _new_axes(ax)
    slots = np.arange(len(frame))
    width = min(0.6, 0.15 * len(estimates))
    for i, (column, label) in enumerate(estimates.items()):
        x = slots + _offset(i, len(estimates), width)
        y = _floats(frame[column])
        low, high = _floats(frame[f"{column}_ci_low"]), _floats(frame[f"{column}_ci_high"])
        ax.errorbar(
            x, y, yerr=[np.nan_to_num(y - low), np.nan_to_num(high - y)], label=label,
            marker=_MARKERS[i % len(_MARKERS)], linestyle="none", elinewidth=1, capsize=3,
            markersize=6,
        )  # fmt: skip
    labels = [
        " · ".join(str(row[g]) for g in groups) if groups else "all"
        for row in frame.to_dict("records")
    ]
    counts = frame["cards"].to_numpy() if "cards" in frame else [""] * len(frame)
    ax.set_xticks(slots, [f"{name}\n(n={n})" for name, n in zip(labels, counts, strict=True)])
    if not len(frame):
        ax.text(0.5, 0.5, "no votes yet", transform=ax.transAxes, ha="center", color="0.4")
    centre, half = (len(frame) - 1) / 2, max(len(frame), 2) / 2
    ax.set_xlim(centre - half, centre + half)
    lowest = np.nanmin(frame[[f"{c}_ci_low" for c in estimates]].to_numpy(dtype="float64",
                                                                           na_value=np.nan),
                       initial=0.0)  # fmt: skip
    ax.set_ylim(min(-0.05, lowest - 0.05), 1.05)
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax


def period_labels(periods: pd.DatetimeIndex, period: str) -> list[str]:
    """Dates as a reader writes them: ``2026-11-30`` (day, week), ``2026-11`` (month)."""
    return [moment.strftime(_LABEL_FORMATS[period]) for moment in periods]


def plot_audit_plan(
    tolerance: float = 0.05,
    confidence: float = 0.95,
    population: int | None = None,
    errors: Sequence[int] = (0, 1, 2, 3),
    max_sample: int | None = None,
    ax: Axes | None = None,
) -> Axes:
    """The bound on the batch's error rate against the sample size, one curve per count
    of ``errors`` found, the ``tolerance`` line, and the looks of ``plan_audit`` for this
    batch marked (sample sizes up to ``max_sample``, default the plan's last look, never
    past the batch)."""
    plan = plan_audit(population, tolerance, confidence)
    last = plan.looks[-1] if max_sample is None else max_sample
    if isinstance(last, bool) or not isinstance(last, int) or last < 1:
        raise InvalidValueError("max_sample", max_sample, "a whole number of cards >= 1, or None")
    last = min(last, population) if population is not None else last
    ax = _new_axes(ax)
    for count in errors:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidValueError("errors", count, "whole numbers of errors >= 0, like (0, 1, 2)")
        sizes = list(range(max(count, 1), last + 1))
        bounds = [error_bound(count, n, confidence, population) for n in sizes]
        ax.plot(sizes, bounds, label=f"{count} error" + ("" if count == 1 else "s"))
    ax.axhline(
        plan.tolerance,
        color="black",
        linestyle="--",
        linewidth=1,
        label=f"tolerance {plan.tolerance * 100:g}%",
    )
    _mark_looks(ax, plan, last)
    _label(ax, plan, population)
    return ax


def _mark_looks(ax: Axes, plan: AuditPlan, last: int) -> None:
    marks = [
        (n, plan.bound(t, n))
        for n, t in zip(plan.looks, plan.thresholds, strict=True)
        if t >= 0 and n <= last
    ]
    ax.plot(
        [n for n, _ in marks],
        [b for _, b in marks],
        linestyle="none",
        marker="v",
        color="black",
        label=f"planned looks (most errors that approve, at {plan.nominal_confidence * 100:g}%)",
    )


def _label(ax: Axes, plan: AuditPlan, population: int | None) -> None:
    from matplotlib.ticker import PercentFormatter

    batch = "an unbounded batch" if population is None else f"a batch of {population:,}"
    ax.set_title(f"Exact upper bound on the error rate, {batch}")
    ax.set_xlabel("cards reviewed (sample size)")
    ax.set_ylabel("error rate bound")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(0, min(1.0, 4 * plan.tolerance))
    ax.legend(fontsize="small")


def _new_axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt  # on first use: importing pyplot takes ~0.3 s

    _, created = plt.subplots(figsize=(7, 3.8), layout="constrained")
    return created


def _period_range(values: pd.Series, period: str) -> pd.DatetimeIndex:
    """Every period from the first to the last, so a period with no data keeps its slot."""
    moments = pd.to_datetime(values.dropna())
    if moments.empty:
        return pd.DatetimeIndex([])
    return pd.date_range(moments.min(), moments.max(), freq=PERIOD_FREQUENCIES[period])


def _series(frame: pd.DataFrame, group_by: str | None) -> list[tuple[str, pd.DataFrame]]:
    if not group_by:
        return [("all", frame)]
    column = frame[group_by]
    names = column.astype("object").where(column.notna(), _MISSING).astype(str)
    return [(name, frame[names == name]) for name in sorted(names.unique())]


def _offset(index: int, count: int, width: float) -> float:
    return 0.0 if count == 1 else (index / (count - 1) - 0.5) * width


def _period_axis(ax: Axes, periods: pd.DatetimeIndex, period: str) -> None:
    """Slots 0..k-1 labelled with dates (at most ``_MAX_LABELS`` of them), at least
    ``_MIN_SLOTS`` wide and centred, so a single period is not stretched across the plot."""
    count = len(periods)
    if not count:
        ax.text(0.5, 0.5, "no data yet", transform=ax.transAxes, ha="center", color="0.4")
    step = max(1, -(-count // _MAX_LABELS))
    ticks = np.arange(0, count, step)
    ax.set_xticks(ticks, [period_labels(periods, period)[i] for i in ticks])
    centre, half = (count - 1) / 2, max(count, _MIN_SLOTS) / 2
    ax.set_xlim(centre - half, centre + half)
    ax.set_xlabel(_AXIS_NAMES[period])
    if len(ticks) > 4:  # dates side by side would touch
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")


def _count_axis(ax: Axes, highest: float, below: float = 0.0) -> None:
    """Integer ticks from 0 (bars stand on it; a line's markers need ``below`` room)."""
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    top = max(1.0, highest) * 1.1
    ax.set_ylim(-below * top, top)
    ax.grid(axis="y", alpha=0.3)


def _label_counts(
    ax: Axes, x: np.ndarray, low: np.ndarray, high: np.ndarray, counts: pd.Series
) -> None:
    """``n=...`` under each interval (over it when the interval reaches down to 0): the
    size behind it, clear of the line that joins the points."""
    bottom, top = ax.get_ylim()
    for position, lower, upper, n in zip(x, low, high, counts, strict=True):
        if np.isnan(lower):
            continue
        under = lower - bottom > 0.15 * (top - bottom)
        ax.annotate(
            f"n={n}", (position, lower if under else upper), xytext=(0, -3 if under else 3),
            textcoords="offset points", ha="center", va="top" if under else "bottom",
            fontsize="small", color="0.3",
        )  # fmt: skip


def _floats(values: pd.Series) -> np.ndarray:
    return values.to_numpy(dtype="float64", na_value=np.nan)


def arm_rates(
    frame: pd.DataFrame, rates: Sequence[str], *, title: str, ax: Axes | None = None
) -> Axes:
    """An experiment's rates side by side: one slot per rate, one dodged series per arm
    (``frame``: a row per arm with ``arm``, ``decided`` and each rate with ``_low`` and
    ``_high``), each point with its 95% interval as an error bar."""
    ax = _new_axes(ax)
    width = min(0.6, 0.15 * len(frame))
    for i, row in enumerate(frame.itertuples(index=False)):
        values = row._asdict()
        x = np.arange(len(rates)) + _offset(i, len(frame), width)
        y = np.array([values[r] for r in rates], dtype="float64")
        low = np.array([values[f"{r}_low"] for r in rates], dtype="float64")
        high = np.array([values[f"{r}_high"] for r in rates], dtype="float64")
        ax.errorbar(
            x, y, yerr=[y - low, high - y], label=f"{values['arm']} (n={values['decided']})",
            marker=_MARKERS[i % len(_MARKERS)], linestyle="none",
            elinewidth=1, capsize=3, markersize=6,
        )  # fmt: skip
    ax.set_xticks(np.arange(len(rates)), [r.replace("_", " ") for r in rates])
    ax.set_xlim(-0.5, len(rates) - 0.5)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("share of decided cards (95% Wilson interval)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(title="arm", loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return ax
