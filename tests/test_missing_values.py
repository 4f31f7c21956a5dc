"""The tables the API returns mark a missing value one way per kind of column: <NA> in
text, integer, float and boolean columns, NaT in times, None in list columns; never NaN
next to <NA>, and a column's dtype does not depend on whether its rows hold a value."""

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
        else:
            assert pd.api.types.is_object_dtype(dtype), f"{name}: {dtype}"
            assert all(value is None for value in missing), name


def tables(nb: npc_nb.Project) -> dict[str, pd.DataFrame]:
    return {
        "decisions": nb.decisions(),
        "memories": nb.memories(),
        "review_queue": nb.review_queue(),
        "reproposals": nb.reproposals(),
        "jobs": nb.extraction.jobs(),
        "automatic_outcomes": nb.automatic_outcomes(),
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
