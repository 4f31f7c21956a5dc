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
from npc_nb import Approve, Reject, ReviewContext
from npc_nb.errors import AlreadyDecidedError, ArgumentError, DecisionError, InvalidValueError
from tests.helpers import as_reviewer, propose, status_of

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
    carol = as_reviewer(lab, "carol").review_session()
    assert carol.current == card
    with carol.lock:  # the key press is on its way: the others' notices wait behind it
        as_reviewer(lab, "ada").approve(card)
        as_reviewer(lab, "bob").reject(card, reason="it moved to Fridays")
        with pytest.raises(DecisionError, match=NOT_RECORDED):
            carol.decide(Approve(carol.current))
        assert carol.current == later  # the session moved on
    assert status_of(lab, card) == "pending_approval"
    assert actions(lab, card) == ["propose", "vote", "vote"]  # no adjudication
    assert lab.votes(card)["reviewer"].tolist() == ["ada", "bob"]
    assert lab.review_queue(adjudicate=True, by="carol")["id"].tolist() == [card]
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
    panel = as_reviewer(lab, "carol").review()
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").edit(card, "The reading group meets on Fridays")
    panel._on_message(None, {"type": "key", "key": "a", "card": card}, None)
    assert NOT_RECORDED in panel.status.value
    assert "Fridays" not in panel.status.value + panel.keys.card_html  # still blind
    assert actions(lab, card) == ["propose", "vote", "vote"]


def test_a_vote_on_a_card_final_meanwhile_is_not_recorded(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    carol = as_reviewer(lab, "carol").review_session()
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").approve(card)  # they agree: final
    with pytest.raises(AlreadyDecidedError, match="your vote was not recorded"):
        carol.decide(Reject(carol.current, reason="never heard of it"))
    assert status_of(lab, card) == "human-approved" and carol.current is None
    assert actions(lab, card) == ["propose", "vote", "vote", "agree"]
    # A script voting from nb.review_queue(by=...) says so, and is refused alike
    with pytest.raises(AlreadyDecidedError, match="your vote was not recorded"):
        as_reviewer(lab, "carol").reject(card, context=ReviewContext(intent="vote"))
    assert status_of(lab, card) == "human-approved"


def test_only_a_deliberate_decision_adjudicates(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").reject(card)
    with pytest.raises(DecisionError, match=NOT_RECORDED):
        as_reviewer(lab, "carol").approve(
            card, context=ReviewContext(intent="vote")
        )  # voting from the blind queue
    assert actions(lab, card) == ["propose", "vote", "vote"]
    decided = as_reviewer(lab, "carol").approve(card)  # a non-voter's own call: the adjudication
    assert decided.final and decided.decision == "adjudicate"
    assert actions(lab, card)[-1] == "adjudicate"


def test_an_adjudicator_s_key_never_becomes_a_vote(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").reject(card)
    carol = as_reviewer(lab, "carol").review_session(adjudicate=True)
    assert carol.current == card
    with pytest.raises(DecisionError, match="round is complete"):
        as_reviewer(lab, "bob").undo()  # bob may not withdraw his vote: the round is complete
    as_reviewer(lab, "dan").adjudicate(card, vote=1)  # dan adjudicates meanwhile
    with pytest.raises(DecisionError, match="decided"):
        carol.decide(Reject(carol.current))
    assert carol.current is None
    assert lab.votes(card)["reviewer"].tolist() == ["ada", "bob"]  # carol's key cast no vote
    assert actions(lab, card)[-1] == "adjudicate"


def test_intent_is_vote_or_adjudicate(lab: npc_nb.Project) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    with pytest.raises(ArgumentError, match="unexpected keyword argument 'intent'"):
        as_reviewer(lab, "ada").approve(card, intent="final")  # type: ignore[call-arg]
    with pytest.raises(InvalidValueError, match="intent='final' is not allowed"):
        as_reviewer(lab, "ada").approve(card, context=ReviewContext(intent="final"))  # type: ignore[arg-type]
    assert actions(lab, card) == ["propose"]


def test_an_adjudication_of_a_card_decided_meanwhile_says_who_decided(
    lab: npc_nb.Project,
) -> None:
    card = propose(lab, "The reading group meets on Thursdays")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").reject(card)
    carol = as_reviewer(lab, "carol").review_session(adjudicate=True)
    as_reviewer(lab, "dan").approve(card)  # another adjudicator was quicker
    with pytest.raises(AlreadyDecidedError, match="already decided by dan"):
        carol.decide(Reject(carol.current))
    with pytest.raises(DecisionError, match="no longer waits for adjudication"):
        as_reviewer(lab, "carol").reject(
            card, context=ReviewContext(intent="adjudicate")
        )  # not a retraction
    assert status_of(lab, card) == "human-approved"
    assert actions(lab, card)[-1] == "adjudicate"
