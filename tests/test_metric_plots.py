"""The metrics' plots and display: what each plot draws (values, intervals, axes, labels),
read back from the matplotlib Axes it returns; and what ``nb.metrics`` shows by itself."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterator
from datetime import datetime, timedelta

import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.ticker import MaxNLocator

import npc_nb
from npc_nb.analytics.metrics import Metrics
from tests.helpers import propose

matplotlib.use("Agg")  # no display in tests
MONDAY = datetime(2025, 3, 3, 9)
_MOVED_BEFORE = datetime(2025, 6, 1)  # rows recorded after this were made by the test now
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def move_new_rows(nb: npc_nb.Project, when: datetime) -> None:
    """Date every memory, event and re-proposal made since the last move at ``when``."""
    for table, column in [
        ("memories", "recorded_at"),
        ("memory_events", "occurred_at"),
        ("reproposals", "recorded_at"),
    ]:
        nb.sql(
            f"UPDATE {table} SET {column} = ? WHERE {column} > ?",  # fixed names, bound values
            [when, _MOVED_BEFORE],
            allow_write=True,
        )


def one_week_by_category(nb: npc_nb.Project) -> None:
    """Four categories all approved (rate 1.0), facts all rejected (0.0), in one week."""
    nb.configure(matcher=None)  # not about matching: each numbered statement is its own
    for category in ["decision", "preference", "commitment", "constraint"]:
        for n in range(2):
            nb.approve(propose(nb, f"{category} statement number {n}", category=category))
    nb.reject(propose(nb, "a fact that was wrong", category="fact"))
    move_new_rows(nb, MONDAY + timedelta(days=1))


def series(ax: Axes) -> dict[str, dict]:
    """Each error-bar series by legend label: x, y, and its bars' low and high ends."""
    found = {}
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            line, _, (bars,) = container.lines
            x, y = line.get_data()
            ends = {round(float(s[0][0]), 6): (float(s[0][1]), float(s[1][1]))
                    for s in bars.get_segments() if len(s)}  # fmt: skip
            found[container.get_label()] = {
                "marker": line.get_marker(),
                "x": [float(v) for v in x],
                "y": [float(v) for v in y],
                "low": [ends.get(round(float(v), 6), (math.nan,))[0] for v in x],
                "high": [ends.get(round(float(v), 6), (math.nan, math.nan))[1] for v in x],
            }
    return found


def tick_labels(ax: Axes) -> list[str]:
    return [label.get_text() for label in ax.get_xticklabels()]


def test_one_week_by_category_shows_every_series_apart(nb: npc_nb.Project) -> None:
    one_week_by_category(nb)
    ax = nb.metrics.plot_approval_rate(group_by="category")
    assert tick_labels(ax) == ["2025-03-03"]  # the week's Monday: a date, no time
    assert ax.get_xlim() == (-2.0, 2.0)  # one slot in a narrow axis, not four years
    drawn = series(ax)
    assert list(drawn) == [
        "commitment (n=2)", "constraint (n=2)", "decision (n=2)", "fact (n=1)",
        "preference (n=2)",
    ]  # fmt: skip
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(drawn)
    assert [points["y"] for points in drawn.values()] == [[1.0], [1.0], [1.0], [0.0], [1.0]]
    xs = [points["x"][0] for points in drawn.values()]
    assert len(set(xs)) == 5 and all(-0.5 < x < 0.5 for x in xs)  # dodged within the slot
    assert len({points["marker"] for points in drawn.values()}) == 5
    bottom, top = ax.get_ylim()
    assert bottom < 0.0 and top > 1.0  # markers at 0 and 1 are not cut off


def test_error_bars_span_the_frames_interval(nb: npc_nb.Project) -> None:
    one_week_by_category(nb)
    frame = nb.metrics.approval_rate(group_by=["week", "category"]).set_index("category")
    drawn = series(nb.metrics.plot_approval_rate(group_by="category"))
    for category in ["commitment", "fact"]:
        points = drawn[f"{category} (n={frame.loc[category, 'n']})"]
        assert points["low"] == [pytest.approx(frame.loc[category, "ci_low"])]
        assert points["high"] == [pytest.approx(frame.loc[category, "ci_high"])]
    fact = drawn["fact (n=1)"]
    assert fact["y"] == [0.0] and fact["low"] == [0.0] and 0.5 < fact["high"][0] < 1.0


def test_weeks_without_decisions_keep_their_slot(nb: npc_nb.Project) -> None:
    nb.configure(matcher=None)
    for week, (approved, rejected) in zip([0, 1, 3], [(2, 0), (1, 1), (3, 1)], strict=True):
        for n in range(approved):
            nb.approve(propose(nb, f"week {week} approved statement {n}"))
        for n in range(rejected):
            nb.reject(propose(nb, f"week {week} rejected statement {n}"))
        move_new_rows(nb, MONDAY + timedelta(weeks=week))
    ax = nb.metrics.plot_approval_rate(group_by=None)
    assert tick_labels(ax) == ["2025-03-03", "2025-03-10", "2025-03-17", "2025-03-24"]
    ((label, points),) = series(ax).items()
    assert label == "all (n=8)"
    assert points["x"] == [0.0, 1.0, 2.0, 3.0]
    assert points["y"][:2] == [1.0, 0.5] and math.isnan(points["y"][2])
    assert points["y"][3] == pytest.approx(0.75)
    counts = sorted(t.get_text() for t in ax.texts)  # one series: n beside each interval
    assert counts == ["n=2", "n=2", "n=4"]
    assert ax.get_legend() is None


def test_plot_rate_draws_any_rate_and_fits_rates_above_one(nb: npc_nb.Project) -> None:
    nb.reject(propose(nb, "the user likes jazz music"))
    for text in ["The user likes jazz music.", "the user likes jazz music", "USER LIKES JAZZ"]:
        nb.add_candidate(text, category="fact", npc="analyst")
    ax = nb.metrics.plot_rate("repeats_per_candidate")
    (points,) = series(ax).values()
    assert points["y"] == [3.0]  # three repeats of one new candidate
    assert ax.get_ylim()[1] > points["high"][0] > 8.0  # the interval fits, above 1.0
    assert ax.get_ylabel() == "repeats / new candidate (95% CI)"
    assert ax.get_title() == "Repeats per candidate"
    edit = nb.metrics.plot_rate("edit_rate", group_by="model", period="day")
    assert edit.get_title() == "Edit rate by model" and DATE.match(tick_labels(edit)[0])
    with pytest.raises(
        npc_nb.InvalidValueError, match="Cannot plot 'speed'. Use one of: approval_rate"
    ):
        nb.metrics.plot_rate("speed")


def test_backlog_has_integer_ticks_and_date_labels(nb: npc_nb.Project) -> None:
    nb.configure(matcher=None)
    for day, count in enumerate([3, 0, 2]):
        for n in range(count):
            propose(nb, f"day {day} waiting candidate {n}")
        move_new_rows(nb, MONDAY + timedelta(days=day))
    ax = nb.metrics.plot_backlog(period="day")
    (line,) = ax.get_lines()
    assert list(line.get_ydata()) == [3, 3, 5]
    assert tick_labels(ax) == ["2025-03-03", "2025-03-04", "2025-03-05"]
    assert isinstance(ax.yaxis.get_major_locator(), MaxNLocator)
    assert all(tick == int(tick) for tick in ax.get_yticks())
    assert ax.get_ylim()[0] < 0 <= min(line.get_ydata())  # the lowest marker is whole


def test_one_week_of_reproposals_is_one_narrow_bar_per_kind(nb: npc_nb.Project) -> None:
    nb.reject(propose(nb, "the user likes jazz music"))
    nb.approve(propose(nb, "the lab meets on mondays"))
    for text in [
        "The user likes jazz music.",
        "the user likes jazz music",
        "The lab meets on Mondays",
    ]:
        nb.add_candidate(text, category="fact", npc="analyst")
    move_new_rows(nb, MONDAY)
    ax = nb.metrics.plot_reproposals()
    assert [(bar.get_x() + bar.get_width() / 2, bar.get_height()) for bar in ax.patches] == [
        (0.0, 2.0), (0.0, 1.0), (0.0, 0.0),  # rejected, approved, pending: stacked
    ]  # fmt: skip
    assert ax.get_xlim() == (-2.0, 2.0) and ax.patches[0].get_width() == 0.6
    assert tick_labels(ax) == ["2025-03-03"]
    assert isinstance(ax.yaxis.get_major_locator(), MaxNLocator)
    assert [t for t in ax.get_yticks() if 0 <= t <= 2] == [0.0, 1.0, 2.0]  # no 0.25 steps
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["rejected", "approved", "pending"]


def test_plots_draw_into_the_axes_given(nb: npc_nb.Project) -> None:
    one_week_by_category(nb)
    figure, grid = plt.subplots(2, 2)
    calls = [
        lambda ax: nb.metrics.plot_approval_rate(group_by="category", ax=ax),
        lambda ax: nb.metrics.plot_rate("rejection_rate", ax=ax),
        lambda ax: nb.metrics.plot_backlog(ax=ax),
        lambda ax: nb.metrics.plot_reproposals(ax=ax),
    ]
    for call, ax in zip(calls, grid.flat, strict=True):
        assert call(ax) is ax
    assert plt.get_fignums()[-1] == figure.number  # no new figure of their own


def test_plots_of_an_empty_store_say_so(nb: npc_nb.Project) -> None:
    for plot in [nb.metrics.plot_approval_rate, nb.metrics.plot_backlog]:
        ax = plot()
        assert [t.get_text() for t in ax.texts] == ["no data yet"]
        assert not series(ax) and tick_labels(ax) == []


def test_metrics_list_themselves_with_a_line_each(nb: npc_nb.Project) -> None:
    text = repr(nb.metrics)
    assert " at 0x" not in text
    public = [name for name in vars(Metrics) if not name.startswith("_")]
    assert "plot_rate" in public and "approval_rate" in public
    for name in public:
        summary = inspect.getdoc(getattr(Metrics, name)).splitlines()[0].replace("``", "`")
        assert summary and f"  {name}(" in text and summary in text, name
    bundle = nb.metrics._repr_mimebundle_()
    assert bundle["text/plain"] == text
    assert bundle["text/html"].count("<tr>") == len(public)
    assert "<code>approval_rate(group_by=())</code>" in bundle["text/html"]
