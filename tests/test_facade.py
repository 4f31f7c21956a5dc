"""The facade's one surface: grouped areas, one name per idea, keyword-only ``as_of``
on every read of memory state, and a past state read back from each.

The daily loop is flat on ``nb``; the knowledge graph, importers, exports and access
live under ``nb.graph``, ``nb.imports``, ``nb.exports`` and ``nb.access``. Reads of
decisions, votes, re-proposals and the review queue take ``as_of=`` (a snapshot, its
label, or a time) and show what stood then.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import as_reviewer, propose

#: The public members of ``Project``: the daily loop and the grouped areas.
MOST_PUBLIC_MEMBERS = 49


@pytest.fixture
def lab(project_dir: Path):
    project = npc_nb.open(project_dir, review_mode="independent")
    yield project
    project.close()


def test_the_grouped_areas_and_the_new_names_are_there(nb: npc_nb.Project) -> None:
    for name in ("networkx", "frames", "show", "pyvis", "export_graphml"):
        assert callable(getattr(nb.graph, name)), name
    for name in ("npcpy", "mem0", "letta"):
        assert callable(getattr(nb.imports, name)), name
    for name in ("tables", "review_log", "to"):
        assert callable(getattr(nb.exports, name)), name
    for name in ("grant", "revoke", "policy", "set_policy"):
        assert callable(getattr(nb.access, name)), name
    nb.npc("analyst", directive="Answer briefly.")
    assert isinstance(nb.get_npc("analyst"), npc_nb.Npc)
    assert "analyst" in set(nb.npcs()["name"])
    assert callable(nb.review)


def test_the_old_names_are_gone(nb: npc_nb.Project) -> None:
    old = (
        "persona personas review_panel show_graph pyvis_network graph_frames "
        "export_graphml import_npcpy import_mem0 import_letta export export_to "
        "export_review_log grant revoke policy set_policy"
    ).split()
    assert [name for name in old if hasattr(nb, name)] == []
    assert not hasattr(npc_nb, "Persona")
    for name in ("graph", "graph_frames", "show_graph", "pyvis_network"):
        assert not hasattr(nb.graph, name), name


def test_the_facade_has_few_public_members() -> None:
    public = [name for name in dir(npc_nb.Project) if not name.startswith("_")]
    assert len(public) <= MOST_PUBLIC_MEMBERS, sorted(public)


def test_review_queue_names_the_reviewer_with_by(lab: npc_nb.Project) -> None:
    card = propose(lab, "The lab meets on Mondays")
    as_reviewer(lab, "ada").approve(card)
    assert card not in set(as_reviewer(lab, "ada").review_queue(by="ada")["id"])
    with pytest.raises(TypeError):
        lab.review_queue(reviewer="ada")  # type: ignore[call-arg]


def test_experiment_takes_conversation_for_its_conversations(nb: npc_nb.Project) -> None:
    nb.npc("analyst", directive="Answer briefly.")
    nb.chat("analyst", "We decided to use DuckDB for the survey data.")
    conversation = nb.sql("SELECT id FROM conversations")["id"].tolist()
    arms = {"A": {"model": "npc_nb/offline"}, "B": {"model": "npc_nb/offline", "temperature": 0.5}}
    exp = nb.experiment("e1", arms, conversation=conversation)
    assert exp is not None
    with pytest.raises(TypeError):
        nb.experiment("e2", arms, conversations=conversation)  # type: ignore[call-arg]


# -- as_of shows the past ----------------------------------------------------------------


def test_decisions_as_of_a_snapshot_show_the_audit_log_as_it_stood(nb: npc_nb.Project) -> None:
    first, second = propose(nb, "Alpha is 0.05"), propose(nb, "The lab meets on Tuesdays")
    nb.approve(first)
    then = nb.snapshot("before")
    nb.reject(second)
    assert "reject" in set(nb.decisions()["action"])
    past = nb.decisions(as_of=then)
    assert "reject" not in set(past["action"])
    assert set(past["memory_id"]) == {first, second}
    assert nb.decisions(second, as_of="before")["action"].tolist() == ["propose"]


def test_votes_as_of_a_snapshot_show_the_round_still_open(lab: npc_nb.Project) -> None:
    card = propose(lab, "The lab meets on Mondays")
    as_reviewer(lab, "ada").approve(card)
    then = lab.snapshot()
    as_reviewer(lab, "bob").approve(card)
    assert lab.votes(card)["final"].tolist() == [True, True]
    past = lab.votes(card, as_of=then)
    assert past["reviewer"].tolist() == ["ada"]
    assert past["final"].tolist() == [False]


def test_reproposals_as_of_a_snapshot_leave_out_later_repeats(nb: npc_nb.Project) -> None:
    card = propose(nb, "The user prefers plots with large fonts")
    nb.reject(card)
    then = nb.snapshot()
    again = nb.add_candidate(
        "The user prefers plots with large fonts", category="fact", npc="analyst"
    )
    assert again.action == "suppressed"
    assert len(nb.reproposals()) == 1
    assert nb.reproposals(as_of=then).empty


def test_review_queue_as_of_a_snapshot_shows_the_cards_then_waiting(nb: npc_nb.Project) -> None:
    first, second = propose(nb, "Alpha is 0.05"), propose(nb, "The lab meets on Tuesdays")
    then = nb.snapshot()
    nb.approve(first)
    third = propose(nb, "Keep station codes in upper case")
    assert nb.review_queue()["id"].tolist() == [second, third]
    assert nb.review_queue(as_of=then)["id"].tolist() == [first, second]


def test_as_of_is_keyword_only_on_every_read(nb: npc_nb.Project) -> None:
    card = propose(nb, "Alpha is 0.05")
    then = nb.snapshot()
    calls = [
        lambda: nb.memories(None, None, then),  # type: ignore[misc]
        lambda: nb.decisions(card, then),  # type: ignore[misc]
        lambda: nb.votes(card, then),  # type: ignore[misc]
        lambda: nb.reproposals(then),  # type: ignore[misc]
        lambda: nb.context("analyst", None, None, None, then),  # type: ignore[misc]
        lambda: nb.context_block("analyst", None, None, None, then),  # type: ignore[misc]
    ]
    for call in calls:
        with pytest.raises(TypeError):
            call()


def test_memory_filters_are_keyword_only(nb: npc_nb.Project) -> None:
    propose(nb, "Alpha is 0.05")
    assert len(nb.memories(status="pending_approval")) == 1
    with pytest.raises(TypeError):
        nb.memories("pending_approval")  # type: ignore[misc]


def test_the_past_reads_work_on_postgresql(project_dir: Path, postgres_url: str) -> None:
    """The review queue at a past state runs on the server's own SQL; the audit log,
    votes and re-proposals through the analysis path: each shows what stood then."""
    nb = npc_nb.open(project_dir, store=postgres_url)
    try:
        first, second = propose(nb, "Alpha is 0.05"), propose(nb, "The lab meets on Tuesdays")
        then = nb.snapshot("then")
        nb.approve(first)
        nb.reject(second)
        assert nb.review_queue()["id"].tolist() == []
        assert nb.review_queue(as_of=then)["id"].tolist() == [first, second]
        assert set(nb.decisions(as_of="then")["action"]) == {"propose"}
        assert nb.votes(as_of=then).empty and nb.reproposals(as_of=then).empty
    finally:
        nb.close()
