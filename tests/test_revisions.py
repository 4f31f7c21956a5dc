"""Revising what was approved: supersede, validity, and reading the past from the audit log."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

import npc_nb
from tests.conftest import propose, status_of


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


def test_undo_of_a_supersede_restores_the_old_version(nb: npc_nb.Project) -> None:
    old = propose(nb, "Deadline Friday")
    nb.approve(old)
    new = nb.supersede(old, "Deadline Monday").new_memory_id
    nb.undo()
    assert status_of(nb, old) == "human-approved"
    assert status_of(nb, new) == "superseded"
    assert "Friday" in nb.context("analyst") and "Monday" not in nb.context("analyst")


def test_as_of_answers_what_was_approved_at_that_moment(nb: npc_nb.Project) -> None:
    old = propose(nb, "Deadline Friday")
    nb.approve(old, by="ada")
    time.sleep(0.01)
    between = datetime.now()
    time.sleep(0.01)
    new = nb.supersede(old, "Deadline Monday").new_memory_id
    then = nb.memories(status="approved", as_of=between)
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
    with pytest.raises(npc_nb.DecisionError, match="Unknown status"):
        nb.memories(status="aproved")
