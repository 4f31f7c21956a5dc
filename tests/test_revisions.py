"""Revising what was approved: supersede, validity windows, and reading the past from the
audit log."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

import npc_nb
from tests.helpers import propose, status_of


def occurred_at(nb: npc_nb.Project, memory_id: str, action: str) -> datetime:
    """When the audit log recorded ``action`` on the memory (as an aware UTC time)."""
    events = nb.decisions(memory_id)
    (moment,) = events.loc[events["action"] == action, "occurred_at"].tolist()
    return moment.to_pydatetime().replace(tzinfo=UTC)


def test_supersede_keeps_both_versions_linked(nb: npc_nb.Project) -> None:
    old = propose(nb, "The deadline is Friday")
    nb.approve(old)
    result = nb.supersede(old, "The deadline moved to Monday", by="ada")
    new = result.new_memory_id
    rows = nb.memories().set_index("id")
    assert rows.loc[old, "status"] == "superseded"
    assert rows.loc[old, "superseded_by"] == new
    assert rows.loc[new, "supersedes"] == old
    assert rows.loc[new, "status"] == "human-edited"
    assert (rows.loc[new, "initial_text"], rows.loc[new, "final_text"]) == (
        "The deadline is Friday",
        "The deadline moved to Monday",
    )
    assert "Monday" in nb.context("analyst") and "Friday" not in nb.context("analyst")


def test_editing_an_approved_memory_supersedes_it(nb: npc_nb.Project) -> None:
    old = propose(nb, "Deadline Friday")
    nb.approve(old)
    result = nb.edit(old, "Deadline Monday")
    assert status_of(nb, old) == "superseded"
    assert status_of(nb, result.new_memory_id) == "human-edited"


def test_editing_an_approved_memory_to_the_same_text_is_refused(nb: npc_nb.Project) -> None:
    memory = propose(nb, "same words")
    nb.approve(memory)
    with pytest.raises(npc_nb.DecisionError, match="already says"):
        nb.edit(memory, "same words")
    assert len(nb.memories()) == 1


def test_only_approved_memories_can_be_superseded(nb: npc_nb.Project) -> None:
    memory = propose(nb, "pending")
    with pytest.raises(npc_nb.DecisionError, match="only an approved memory"):
        nb.supersede(memory, "new")


def test_superseded_memory_accepts_no_decision(nb: npc_nb.Project) -> None:
    old = propose(nb, "Deadline Friday")
    nb.approve(old)
    nb.supersede(old, "Deadline Monday")
    with pytest.raises(npc_nb.DecisionError, match="superseded by"):
        nb.reject(old)


def test_set_validity_keeps_the_bound_you_leave_out(nb: npc_nb.Project) -> None:
    memory = propose(nb, "starts next week")
    nb.approve(memory)
    nb.set_validity(memory, valid_from=datetime.now() + timedelta(days=7))
    nb.set_validity(memory, valid_to=datetime.now() + timedelta(days=30))
    row = nb.memories().set_index("id").loc[memory]
    assert not pd.isna(row["valid_from"]) and not pd.isna(row["valid_to"])
    assert nb.context("analyst") == ""
    nb.set_validity(memory, valid_from=None)
    assert "starts next week" in nb.context("analyst")


def test_as_of_answers_what_was_approved_at_that_moment(nb: npc_nb.Project) -> None:
    old = propose(nb, "Deadline Friday")
    nb.approve(old, by="ada")
    new = nb.supersede(old, "Deadline Monday").new_memory_id
    # The moment of the approval, as the audit log recorded it: the supersede came after.
    then = nb.memories(status="approved", as_of=occurred_at(nb, old, "approve"))
    assert list(then["id"]) == [old] and list(then["final_text"]) == ["Deadline Friday"]
    now = nb.memories(status="approved")
    assert list(now["id"]) == [new]


def test_who_approved_and_what_it_said_before_is_a_query(nb: npc_nb.Project) -> None:
    memory = propose(nb, "Deadline Friday")
    nb.edit(memory, "Deadline Friday 17:00", by="ada")
    answer = nb.sql(
        "SELECT actor, occurred_at, text_before, text_after FROM memory_events "
        "WHERE memory_id = ? AND to_status IN ('human-approved', 'human-edited')",
        [memory],
    )
    assert answer.loc[0, "actor"] == "ada"
    assert (answer.loc[0, "text_before"], answer.loc[0, "text_after"]) == (
        "Deadline Friday",
        "Deadline Friday 17:00",
    )


def test_memories_rejects_an_unknown_status_filter(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.InvalidValueError, match="Did you mean 'approved'"):
        nb.memories(status="aproved")
