"""The tables the API returns mark a missing value one way: <NA>, in every column but
times (NaT, so date arithmetic keeps working); never NaN or None next to <NA>, in the
record tables, the metrics, the graph's frames and the personas alike, and a column's
dtype does not depend on whether its rows hold a value."""

from __future__ import annotations

import pandas as pd
import pytest

import npc_nb
from tests.helpers import propose

_NULLABLE = (pd.StringDtype, pd.Int64Dtype, pd.Float64Dtype, pd.BooleanDtype)


def assert_one_marker_per_kind(frame: pd.DataFrame) -> None:
    for name, column in frame.items():
        dtype = column.dtype
        missing = column[column.isna()].tolist()
        if isinstance(dtype, _NULLABLE):
            assert all(value is pd.NA for value in missing), name
            if isinstance(dtype, pd.StringDtype):
                assert dtype.na_value is pd.NA, name  # not pandas' NaN-backed str dtype
        elif pd.api.types.is_datetime64_any_dtype(dtype):
            assert all(value is pd.NaT for value in missing), name
        elif pd.api.types.is_object_dtype(dtype):
            assert all(value is pd.NA for value in missing), name
        else:  # numpy numbers and booleans: no missing value is possible, so none is
            assert pd.api.types.is_numeric_dtype(dtype) and not missing, f"{name}: {dtype}"
            assert not pd.api.types.is_float_dtype(dtype), f"{name}: NaN-able {dtype}"


def tables(nb: npc_nb.Project) -> dict[str, pd.DataFrame]:
    return {
        "decisions": nb.decisions(),
        "memories": nb.memories(),
        "review_queue": nb.review_queue(),
        "reproposals": nb.reproposals(),
        "jobs": nb.extraction.jobs(),
        "automatic_outcomes": nb.automatic_outcomes(),
    }


def other_frames(nb: npc_nb.Project) -> dict[str, pd.DataFrame]:
    """The metrics (grouped by model, which a hand-made candidate lacks), the graph's
    frames and the personas: built in pandas, where NaN and None crept in."""
    nodes, edges = nb.graph.frames()
    metrics = nb.metrics
    return {
        "approval_rate": metrics.approval_rate(group_by="model"),
        "repeats_per_candidate": metrics.repeats_per_candidate(group_by="model"),
        "matching": metrics.matching(),
        "time_to_decision": metrics.time_to_decision(group_by="model"),
        "reviewer_throughput": metrics.reviewer_throughput(),
        "injections_per_memory": metrics.injections_per_memory(),
        "graph nodes": nodes,
        "graph edges": edges,
        "personas": nb.npcs(),
    }


@pytest.fixture
def worked(nb: npc_nb.Project) -> npc_nb.Project:
    """A project with missing values of every kind: a chat and its extraction, a bare
    candidate (no evidence, team or confidence), a decision and its undo, a repeat."""
    nb.chat("analyst", "We decided to use DuckDB for the store.")
    nb.extraction.wait()
    bare = propose(nb, "The user prefers tea")
    nb.approve(bare)
    nb.undo()
    nb.reject(bare)
    repeat = nb.add_candidate("The user prefers tea", category="fact", npc="analyst")
    assert repeat.action == "suppressed"  # by the tombstone: a re-proposal
    return nb


def test_every_table_marks_missing_values_one_way_per_kind(worked: npc_nb.Project) -> None:
    for name, frame in tables(worked).items():
        assert not frame.empty, name
        assert frame.isna().any().any(), name  # the check below has something to check
        assert_one_marker_per_kind(frame)


def test_metrics_graph_frames_and_personas_show_missing_values_as_na_too(
    worked: npc_nb.Project,
) -> None:
    """Before, a metric grouped by model showed a hand-made candidate's model as NaN
    (None in some metrics), an undefined rate as NaN, a persona's missing model as None
    and the graph's nodes NaN for the attributes a node kind lacks."""
    worked.npc("critic", directive="You question every claim.")  # no model, no error
    worked.skip(propose(worked, "Nothing about this is decided"))  # an undefined rate
    worked.approve(propose(worked, "We keep the ringing data in DuckDB"))  # a graph
    frames = other_frames(worked)
    for name, frame in frames.items():
        assert not frame.empty, name
        assert_one_marker_per_kind(frame)
        shown = frame.to_string()
        assert "NaN" not in shown and "None" not in shown, f"{name}:\n{shown}"
    assert frames["approval_rate"]["model"].isna().any()  # the hand-made candidates' group
    assert frames["matching"]["precision"].isna().all()  # nothing checked yet: undefined
    assert frames["personas"].isna().any().any() and frames["graph nodes"].isna().any().any()
    rate = frames["approval_rate"]["approval_rate"]
    assert rate.to_numpy(dtype=float, na_value=float("nan")).dtype == float  # for numpy


def test_the_audit_log_never_mixes_nan_and_na(worked: npc_nb.Project) -> None:
    log = worked.decisions()
    proposal = log[log["action"] == "propose"].iloc[0]
    assert proposal["from_status"] is pd.NA and proposal["text_before"] is pd.NA
    assert proposal["undoes"] is pd.NA and proposal["reason"] is pd.NA
    assert log["undoes"].dtype == "Int64" and log["reason"].dtype == "string"
    assert "NaN" not in log.to_string() and "None" not in log.to_string()


def test_a_column_has_the_same_dtype_empty_or_full(worked: npc_nb.Project) -> None:
    fresh = npc_nb.open(worked.root.parent / "fresh", create=True)
    try:
        for name, empty in tables(fresh).items():
            full = tables(worked)[name]
            assert empty.empty, name
            assert_one_marker_per_kind(empty)
            assert dict(empty.dtypes) == dict(full.dtypes), name
    finally:
        fresh.close()
