"""Undo: a reviewer's last decision (or whole batch) is reverted as a new audit event,
never reaching another reviewer's decision or one changed since."""

from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd
import pytest

import npc_nb
from npc_nb import Approve, Reject
from tests.helpers import propose, status_of


def events_for(nb: npc_nb.Project, memory_id: str) -> list[dict]:
    return nb.decisions(memory_id).to_dict("records")


def test_undo_restores_the_previous_state_as_a_new_event(nb: npc_nb.Project) -> None:
    memory = propose(nb, "Deadline is Friday")
    nb.edit(memory, "Deadline is Monday")
    nb.undo()
    row = nb.memories().set_index("id").loc[memory]
    assert (row["status"], row["final_text"]) == ("pending_approval", "Deadline is Friday")
    actions = [e["action"] for e in events_for(nb, memory)]
    assert actions == ["propose", "edit", "undo"]


def test_undo_walks_back_through_several_decisions(nb: npc_nb.Project) -> None:
    a, b = propose(nb, "first"), propose(nb, "second")
    nb.approve(a)
    nb.reject(b)
    nb.undo()
    assert (status_of(nb, a), status_of(nb, b)) == ("human-approved", "pending_approval")
    nb.undo()
    assert status_of(nb, a) == "pending_approval"
    with pytest.raises(npc_nb.DecisionError, match="Nothing to undo"):
        nb.undo()


def test_undo_reverts_a_whole_batch(nb: npc_nb.Project) -> None:
    ids = [propose(nb, f"fact {n}") for n in range(4)]
    nb.approve_all(nb.preview_approve_all())
    result = nb.undo()
    assert set(result.memory_ids) == set(ids)
    assert all(status_of(nb, m) == "pending_approval" for m in ids)


def test_undo_of_a_batch_spanning_both_stores_reverts_all_of_it(nb: npc_nb.Project) -> None:
    local = propose(nb, "project-store fact")
    everywhere = propose(nb, "user-store fact", scope="global", npc=None)
    result = nb.approve_all(nb.preview_approve_all())
    assert set(result.memory_ids) == {local, everywhere}
    undone = nb.undo()
    assert set(undone.memory_ids) == {local, everywhere}
    assert status_of(nb, local) == status_of(nb, everywhere) == "pending_approval"
    with pytest.raises(npc_nb.DecisionError, match="Nothing to undo"):
        nb.undo()


def test_undo_is_per_reviewer(nb: npc_nb.Project) -> None:
    a, b = propose(nb, "first"), propose(nb, "second")
    nb.approve(a, by="ada")
    nb.approve(b, by="bob")
    nb.undo(by="ada")
    assert (status_of(nb, a), status_of(nb, b)) == ("pending_approval", "human-approved")


def test_undo_refuses_when_the_memory_changed_since(nb: npc_nb.Project) -> None:
    memory = propose(nb, "first")
    nb.approve(memory, by="ada")
    nb.reject(memory, by="bob")
    with pytest.raises(npc_nb.DecisionError, match="changed since"):
        nb.undo(by="ada")
    assert status_of(nb, memory) == "human-rejected"


def test_undo_skips_a_decision_someone_else_changed_since(nb: npc_nb.Project) -> None:
    first, second = propose(nb, "first"), propose(nb, "second")
    nb.approve(first, by="ada")
    nb.approve(second, by="ada")
    nb.set_validity(second, valid_to=datetime.now() + timedelta(days=3), by="bob")
    result = nb.undo(by="ada")
    assert result.memory_ids == [first] and result.notes
    assert status_of(nb, second) == "human-approved"
    valid_to = nb.memories().set_index("id").loc[second, "valid_to"]
    assert not pd.isna(valid_to)  # bob's change survives


def test_undo_of_a_supersede_restores_the_old_version(nb: npc_nb.Project) -> None:
    old = propose(nb, "Deadline Friday")
    nb.approve(old)
    new = nb.supersede(old, "Deadline Monday").new_memory_id
    nb.undo()
    assert status_of(nb, old) == "human-approved"
    assert status_of(nb, new) == "superseded"
    assert "Friday" in nb.context("analyst") and "Monday" not in nb.context("analyst")


def test_undo_reaches_a_decision_older_than_the_recent_events_it_looks_at_first(
    nb: npc_nb.Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npc_nb.store.memories import events

    monkeypatch.setattr(events, "RECENT_WINDOW", 3)
    old, newer = propose(nb, "decided long ago"), propose(nb, "decided, then undone")
    nb.approve(old)
    nb.reject(newer, by="colleague")
    for n in range(5):  # newer events than the reviewer's decision, none of theirs
        propose(nb, f"proposed later {n}")
    nb.approve(newer, by="colleague", reconsider=True)
    nb.undo(by="colleague")  # within the window: the colleague's approval
    assert status_of(nb, newer) == "human-rejected"
    nb.undo()  # this reviewer's only decision is far behind the window
    assert status_of(nb, old) == "pending_approval"


def test_a_review_undoes_its_own_last_decision_found_by_its_event(nb: npc_nb.Project) -> None:
    """A review knows the event of its last decision and undoes that one without
    searching the log; once that event is gone (undone by a cell, or changed by someone
    else) it searches like any undo, so the outcome is the same either way."""
    first, second, third = propose(nb, "first"), propose(nb, "second"), propose(nb, "third")
    session = nb.review_session(by="ada")
    session.decide(Approve(session.current))
    session.decide(Reject(session.current))
    session.decide(Approve(session.current))
    assert session.undo().memory_ids == [third]  # the review's own last event
    assert status_of(nb, third) == "pending_approval"
    nb.undo(by="ada")  # a cell takes back the review's (now) last decision: the rejection
    assert status_of(nb, second) == "pending_approval"
    assert session.undo().memory_ids == [first]  # its event is gone: the log is searched
    assert status_of(nb, first) == "pending_approval"
    nb.approve(first, by="bob")  # the card on screen, decided elsewhere
    with pytest.raises(npc_nb.AlreadyDecidedError):
        session.decide(Approve(session.current))
    assert session.current == third
    session.decide(Approve(session.current))
    nb.set_validity(third, valid_to=datetime.now() + timedelta(days=3), by="bob")
    with pytest.raises(npc_nb.DecisionError, match="changed since"):
        session.undo()  # its event is there, but changed since: nothing else to undo
    assert status_of(nb, third) == "human-approved"
