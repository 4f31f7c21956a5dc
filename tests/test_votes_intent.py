"""Adjudication is deliberate: a decision made in a reviewer's (voting) review is a vote,
and when the card's votes came in meanwhile (they disagree: it waits for adjudication;
they agree: it is final) it is refused, nothing written, never taken as the
adjudication. Only an adjudication review, or a non-voter's own call of ``approve``
(and the rest) on a card in adjudication, adjudicates.

The race is made deterministic by holding the voting session's lock while the other
two vote, as a key press that was already on its way would: on PostgreSQL the live
notice waits behind it, on a DuckDB file no notice comes at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import npc_nb
from npc_nb.errors import AlreadyDecidedError, ArgumentError, DecisionError
from tests.helpers import propose, status_of

NOT_RECORDED = "This card now waits for adjudication: your vote was not recorded"


@pytest.fixture
def lab(project_dir: Path) -> Iterator[npc_nb.Project]:
    project = npc_nb.open(project_dir, review_mode="independent")
    yield project
    project.close()


def actions(nb: npc_nb.Project, memory_id: str) -> list[str]:
    return nb.decisions(memory_id)["action"].tolist()


def disagree_behind_carols_back(lab: npc_nb.Project) -> None:
    """ada and bob disagree on the card carol has open in her own review; her approve
    key press records nothing, and the card waits for an adjudicator."""
    card = propose(lab, "The reading group meets on Thursdays")
    later = propose(lab, "The wiki lives on the intranet")
    carol = lab.review_session(by="carol")
    assert carol.current == card
    with carol.lock:  # the key press is on its way: the others' notices wait behind it
        lab.approve(card, by="ada")
        lab.reject(card, by="bob", reason="it moved to Fridays")
        with pytest.raises(DecisionError, match=NOT_RECORDED):
            carol.decide("approve")
        assert carol.current == later  # the session moved on
    assert status_of(lab, card) == "pending_approval"
    assert actions(lab, card) == ["propose", "vote", "vote"]  # no adjudication
    assert lab.votes(card)["reviewer"].tolist() == ["ada", "bob"]
    assert lab.review_queue(adjudicate=True, reviewer="carol")["id"].tolist() == [card]
    assert carol.tally == {kind: 0 for kind in carol.tally}


def test_a_voting_session_never_adjudicates_by_accident(lab: npc_nb.Project) -> None:
    disagree_behind_carols_back(lab)


def test_a_voting_session_never_adjudicates_by_accident_on_postgresql(
    project_dir: Path, postgres_url: str
) -> None:
    project = npc_nb.open(
        project_dir, store=postgres_url, review_mode="independent", extract_in_background=False
    )
    try:
        disagree_behind_carols_back(project)
    finally:
        project.close()


def test_the_panel_says_the_vote_was_not_recorded(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    panel = lab.review_panel(by="carol")
    lab.approve(card, by="ada")
    lab.edit(card, "The reading group meets on Fridays", by="bob")
    panel._on_message(None, {"type": "key", "key": "a", "card": card}, None)
    assert NOT_RECORDED in panel.status.value
    assert "Fridays" not in panel.status.value + panel.keys.card_html  # still blind
    assert actions(lab, card) == ["propose", "vote", "vote"]


def test_a_vote_on_a_card_final_meanwhile_is_not_recorded(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    carol = lab.review_session(by="carol")
    lab.approve(card, by="ada")
    lab.approve(card, by="bob")  # they agree: final
    with pytest.raises(AlreadyDecidedError, match="your vote was not recorded"):
        carol.decide("reject", reason="never heard of it")
    assert status_of(lab, card) == "human-approved" and carol.current is None
    assert actions(lab, card) == ["propose", "vote", "vote", "agree"]
    # A script voting from nb.review_queue(reviewer=...) says so, and is refused alike
    with pytest.raises(AlreadyDecidedError, match="your vote was not recorded"):
        lab.reject(card, by="carol", intent="vote")
    assert status_of(lab, card) == "human-approved"


def test_only_a_deliberate_decision_adjudicates(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    lab.approve(card, by="ada")
    lab.reject(card, by="bob")
    with pytest.raises(DecisionError, match=NOT_RECORDED):
        lab.approve(card, by="carol", intent="vote")  # voting from the blind queue
    assert actions(lab, card) == ["propose", "vote", "vote"]
    decided = lab.approve(card, by="carol")  # a non-voter's own call: the adjudication
    assert decided.final and decided.decision == "adjudicate"
    assert actions(lab, card)[-1] == "adjudicate"


def test_an_adjudicator_s_key_never_becomes_a_vote(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    lab.approve(card, by="ada")
    lab.reject(card, by="bob")
    carol = lab.review_session(by="carol", adjudicate=True)
    assert carol.current == card
    with pytest.raises(DecisionError, match="round is complete"):
        lab.undo(by="bob")  # bob may not withdraw his vote: the round is complete
    lab.adjudicate(card, vote=1, by="dan")  # dan adjudicates meanwhile
    with pytest.raises(DecisionError, match="decided"):
        carol.decide("reject")
    assert carol.current is None
    assert lab.votes(card)["reviewer"].tolist() == ["ada", "bob"]  # carol's key cast no vote
    assert actions(lab, card)[-1] == "adjudicate"


def test_intent_is_vote_or_adjudicate(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    with pytest.raises(ArgumentError, match="intent must be one of 'vote', 'adjudicate'"):
        lab.approve(card, by="ada", intent="final")  # type: ignore[typeddict-item]
    with pytest.raises(DecisionError, match="intent='final' is not one: pass intent='vote'"):
        lab.decide(card, "approve", by="ada", intent="final")
    assert actions(lab, card) == ["propose"]


def test_an_adjudication_of_a_card_decided_meanwhile_says_who_decided(
    lab: npc_nb.Project,
) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    lab.approve(card, by="ada")
    lab.reject(card, by="bob")
    carol = lab.review_session(by="carol", adjudicate=True)
    lab.approve(card, by="dan")  # another adjudicator was quicker
    with pytest.raises(AlreadyDecidedError, match="already decided by dan"):
        carol.decide("reject")
    with pytest.raises(DecisionError, match="no longer waits for adjudication"):
        lab.reject(card, by="carol", intent="adjudicate")  # not a retraction
    assert status_of(lab, card) == "human-approved"
    assert actions(lab, card)[-1] == "adjudicate"
