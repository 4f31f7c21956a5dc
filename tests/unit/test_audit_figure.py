"""The planner's figure (``npc_nb.plot_audit_plan``), read back from the Axes it returns,
and the statistics' place on the public surface."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib
import matplotlib.pyplot as plt
import pytest

import npc_nb

matplotlib.use("Agg")  # no display in tests


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def test_the_statistics_are_public_names() -> None:
    for name in ("audit_sample_size", "error_bound", "plan_audit", "AuditPlan", "plot_audit_plan"):
        assert name in npc_nb.__all__
        assert getattr(npc_nb, name) is not None
    assert npc_nb.audit_sample_size() == 59
    assert isinstance(npc_nb.plan_audit(1000), npc_nb.AuditPlan)


def _curves(ax: object) -> dict[str, tuple[list[float], list[float]]]:
    return {
        line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in ax.get_lines()  # type: ignore[attr-defined]
    }


def test_one_curve_per_error_count_shows_the_bound_against_sample_size() -> None:
    ax = npc_nb.plot_audit_plan(errors=(0, 1, 2))
    curves = _curves(ax)
    for errors in (0, 1, 2):
        xs, ys = curves[f"{errors} error" + ("" if errors == 1 else "s")]
        at = xs.index(59)
        assert ys[at] == npc_nb.error_bound(errors, 59)
        assert ys == sorted(ys, reverse=True)  # more cards, a tighter bound


def test_the_tolerance_line_and_the_planned_looks_are_drawn() -> None:
    plan = npc_nb.plan_audit(1000)
    ax = npc_nb.plot_audit_plan(population=1000)
    curves = _curves(ax)
    tolerance = next(v for k, v in curves.items() if k.startswith("tolerance"))
    assert set(tolerance[1]) == {0.05}
    looks = next(v for k, v in curves.items() if k.startswith("planned looks"))
    approving = [(n, t) for n, t in zip(plan.looks, plan.thresholds, strict=True) if t >= 0]
    assert looks[0] == [n for n, _ in approving]
    assert looks[1] == [plan.bound(t, n) for n, t in approving]
    assert max(curves["0 errors"][0]) == plan.looks[-1]
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_a_small_batch_is_drawn_up_to_its_size_and_an_axes_can_be_given() -> None:
    _, given = plt.subplots()
    ax = npc_nb.plot_audit_plan(population=20, ax=given, max_sample=500)
    assert ax is given
    assert max(_curves(ax)["0 errors"][0]) == 20
    assert _curves(ax)["0 errors"][1][-1] == 0.0  # the whole batch reviewed, none wrong


def test_the_figure_refuses_nonsense() -> None:
    with pytest.raises(npc_nb.InvalidValueError):
        npc_nb.plot_audit_plan(errors=(-1,))
    with pytest.raises(npc_nb.InvalidValueError):
        npc_nb.plot_audit_plan(max_sample=0)
