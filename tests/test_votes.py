"""Independent review through the Python API: every decision on an open card is a vote,
a card is final only when its votes agree or an adjudicator decides, and a reviewer's
queue never shows another's vote.

Real DuckDB files; the reviewers are names passed as ``by=``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import as_reviewer, propose, status_of

VOTE_COLUMNS = {"votes", "votes_needed"}


@pytest.fixture
def lab(project_dir: Path):
    project = npc_nb.open(project_dir, review_mode="independent")
    yield project
    project.close()


def actions(nb: npc_nb.Project, memory_id: str) -> list[tuple[str, str]]:
    log = nb.decisions(memory_id)
    return list(zip(log["reviewer"], log["action"], strict=True))


def test_agreeing_votes_make_the_card_final_automatically(lab: npc_nb.Project) -> None:
    card = propose(lab, "The lab meets on Mondays")
    first = as_reviewer(lab, "ada").approve(card)
    assert not first.final and status_of(lab, card) == "pending_approval"
    assert "The lab meets on Mondays" not in lab.context("analyst")
    second = as_reviewer(lab, "bob").approve(card)
    assert not second.final and second.notes == ("vote recorded",)  # says nothing more
    assert status_of(lab, card) == "human-approved"  # for whoever asks
    assert "The lab meets on Mondays" in lab.context("analyst")
    assert actions(lab, card)[1:] == [("ada", "vote"), ("bob", "vote"), ("bob", "agree")]
    votes = lab.votes(card)
    assert votes[["vote", "reviewer", "decision"]].values.tolist() == [
        [1, "ada", "approve"],
        [2, "bob", "approve"],
    ]
    assert votes["final"].tolist() == [True, True]  # every vote kept


def test_edits_agree_when_their_texts_normalise_alike(lab: npc_nb.Project) -> None:
    card = propose(lab, "Budget is 10k")
    as_reviewer(lab, "ada").edit(card, "Budget is 12k EUR.")
    as_reviewer(lab, "bob").edit(card, "  budget is 12k eur ")
    assert status_of(lab, card) == "human-edited"
    assert lab.memories().set_index("id").loc[card, "final_text"] == "Budget is 12k EUR."
    other = propose(lab, "Deadline is Friday")
    as_reviewer(lab, "ada").edit(other, "Deadline is Friday 17:00")
    as_reviewer(lab, "bob").edit(other, "Deadline is Monday")
    assert status_of(lab, other) == "pending_approval"  # another text


def test_disagreement_waits_for_an_adjudicator_and_reaches_no_prompt(lab: npc_nb.Project) -> None:
    card = propose(lab, "We use DuckDB for everything")
    as_reviewer(lab, "ada").approve(card)
    result = as_reviewer(lab, "bob").reject(card, reason="not everything")
    assert not result.final and result.notes == ("vote recorded",)
    assert status_of(lab, card) == "pending_approval"
    assert "DuckDB" not in lab.context("analyst")
    assert lab.review_queue(by="carol").empty  # no longer collecting votes
    waiting = lab.review_queue(adjudicate=True, by="carol")
    assert waiting["id"].tolist() == [card] and waiting["votes"].tolist() == [2]
    adjudicated = as_reviewer(lab, "carol").approve(card)  # carol did not vote: the adjudication
    assert adjudicated.final and adjudicated.decision == "adjudicate"
    assert "DuckDB" in lab.context("analyst")
    assert lab.review_queue(adjudicate=True, by="dan").empty
    assert actions(lab, card)[-1] == ("carol", "adjudicate")


def test_adjudicate_picks_the_nth_vote_as_votes_lists_it(lab: npc_nb.Project) -> None:
    card = propose(lab, "The cluster is called Orca")
    as_reviewer(lab, "ada").edit(card, "The cluster is called Orca-2")
    as_reviewer(lab, "bob").reject(card, reason="renamed")
    listed = lab.votes(card)
    assert listed["vote"].tolist() == [1, 2]
    picked = as_reviewer(lab, "carol").adjudicate(card, vote=1)
    assert picked.final
    row = lab.memories().set_index("id").loc[card]
    assert (row["status"], row["final_text"]) == ("human-edited", "The cluster is called Orca-2")
    event = lab.decisions(card).iloc[-1]
    assert (event["action"], event["vote_id"]) == ("adjudicate", listed["id"].iloc[0])


def test_an_adjudicator_who_voted_is_refused_unless_allowed(lab: npc_nb.Project) -> None:
    card = propose(lab, "Reviews happen on Fridays")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").reject(card)
    for attempt in (lambda: as_reviewer(lab, "ada").adjudicate(card, vote=1),
                    lambda: as_reviewer(lab, "bob").approve(card)):  # fmt: skip
        with pytest.raises(npc_nb.DecisionError, match="voted on memory .* adjudicator"):
            attempt()
    assert status_of(lab, card) == "pending_approval"
    assert lab.review_queue(adjudicate=True, by="ada").empty  # not ada's to adjudicate
    lab.configure(allow_self_adjudication=True)
    as_reviewer(lab, "ada").configure(allow_self_adjudication=True)  # ada's kernel too
    assert lab.review_queue(adjudicate=True, by="ada")["id"].tolist() == [card]
    assert as_reviewer(lab, "ada").adjudicate(card, vote=2).final
    assert status_of(lab, card) == "human-rejected"


def test_adjudication_is_refused_where_nothing_disagrees(lab: npc_nb.Project) -> None:
    card = propose(lab, "The printer is on floor 2")
    as_reviewer(lab, "ada").approve(card)
    with pytest.raises(npc_nb.DecisionError, match="not waiting for adjudication: it has 1 of"):
        as_reviewer(lab, "carol").adjudicate(card, vote=1)
    as_reviewer(lab, "bob").reject(card)
    with pytest.raises(npc_nb.InvalidValueError, match="votes 1 to 2"):
        as_reviewer(lab, "carol").adjudicate(card, vote=3)


def test_a_second_vote_replaces_the_first_and_is_audited(lab: npc_nb.Project) -> None:
    card = propose(lab, "Coffee is free on Tuesdays")
    as_reviewer(lab, "ada").approve(card)
    again = as_reviewer(lab, "ada").reject(card, reason="changed my mind")
    assert again.decision == "replace_vote" and not again.final
    current = lab.votes(card)
    assert current[["reviewer", "decision", "reason"]].values.tolist() == [
        ["ada", "reject", "changed my mind"]
    ]
    history = lab.votes(card, history=True)
    assert history["state"].tolist() == ["replaced", "active"]
    assert history["replaced_by"].iloc[0] == history["id"].iloc[1]
    assert [a for _, a in actions(lab, card)] == ["propose", "vote", "replace_vote"]
    as_reviewer(lab, "bob").reject(card)  # one vote each: ada's counts once
    assert status_of(lab, card) == "human-rejected"


def test_undo_withdraws_a_vote_and_the_card_comes_back(lab: npc_nb.Project) -> None:
    card = propose(lab, "The wiki moved to Notion")
    as_reviewer(lab, "ada").approve(card)
    assert lab.review_queue(by="ada").empty
    undone = as_reviewer(lab, "ada").undo()
    assert undone.decision == "withdraw_vote" and not undone.final
    assert lab.review_queue(by="ada")["id"].tolist() == [card]
    assert lab.votes(card).empty
    assert lab.votes(card, history=True)["state"].tolist() == ["withdrawn"]
    log = lab.decisions(card)
    assert log["action"].tolist()[-1] == "withdraw_vote"
    assert log["undoes"].iloc[-1] == log["seq"].iloc[-2]  # it points at the vote


def test_undo_of_the_vote_that_completed_an_agreement_is_refused(lab: npc_nb.Project) -> None:
    card = propose(lab, "Standup is at 09:30")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").approve(card)
    assert "Standup" in lab.context("analyst")
    with pytest.raises(npc_nb.DecisionError, match="round is complete"):
        as_reviewer(lab, "bob").undo()
    assert status_of(lab, card) == "human-approved"
    assert lab.votes(card)[["reviewer", "final"]].values.tolist() == [
        ["ada", True],
        ["bob", True],
    ]


def test_undo_of_an_adjudication_reopens_it(lab: npc_nb.Project) -> None:
    card = propose(lab, "Tea is in the left cupboard")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").reject(card)
    as_reviewer(lab, "carol").adjudicate(card, vote=1)
    as_reviewer(lab, "carol").undo()
    assert status_of(lab, card) == "pending_approval"
    assert lab.review_queue(adjudicate=True, by="carol")["id"].tolist() == [card]
    assert lab.votes(card)["final"].tolist() == [False, False]


def test_agreeing_defers_put_the_card_aside_for_a_new_round(lab: npc_nb.Project) -> None:
    card = propose(lab, "The grant is renewed")
    as_reviewer(lab, "ada").defer(card, until="2000-01-02")
    as_reviewer(lab, "bob").defer(card, until="2000-01-03")
    row = lab.memories().set_index("id").loc[card]
    assert row["status"] == "deferred" and str(row["defer_until"]).startswith("2000-01-03")
    # Due again (its date has passed): both may vote anew, in round 2.
    assert lab.review_queue(by="ada")["id"].tolist() == [card]
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").approve(card)
    assert status_of(lab, card) == "human-approved"
    assert lab.votes(card)["round"].tolist() == [1, 1, 2, 2]


def test_a_skip_is_not_a_vote(lab: npc_nb.Project) -> None:
    card = propose(lab, "Lunch is at noon")
    as_reviewer(lab, "ada").skip(card)
    assert lab.votes().empty
    assert lab.review_queue(by="ada")["id"].tolist() == [card]


def test_approve_all_is_refused_in_independent_review(lab: npc_nb.Project) -> None:
    propose(lab, "The office closes at six")
    with pytest.raises(npc_nb.DecisionError, match="independent review every card"):
        lab.preview_approve_all()


def test_a_final_memory_is_revised_by_one_reviewer_as_before(lab: npc_nb.Project) -> None:
    card = propose(lab, "The dataset has 120 rows")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").approve(card)
    retracted = as_reviewer(lab, "carol").reject(card, reason="wrong count")
    assert retracted.final and retracted.decision == "reject"
    assert status_of(lab, card) == "human-rejected"


def test_single_review_is_unchanged_and_final(nb: npc_nb.Project) -> None:
    card = propose(nb, "We ship on Thursdays")
    result = nb.approve(card)
    assert result.final and result.decision == "approve"
    assert set(nb.review_queue().columns).isdisjoint(VOTE_COLUMNS)
    assert nb.votes().empty


def test_the_review_settings_are_checked(project_dir: Path) -> None:
    with pytest.raises(npc_nb.InvalidValueError, match="review_mode"):
        npc_nb.open(project_dir, review_mode="blind")
    with pytest.raises(npc_nb.InvalidValueError, match="reviewers_per_card"):
        npc_nb.open(project_dir, reviewers_per_card=1)


def test_three_reviewers_per_card(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, review_mode="independent", reviewers_per_card=3)
    card = propose(nb, "Seminars are recorded")
    as_reviewer(nb, "ada").approve(card)
    as_reviewer(nb, "bob").approve(card)
    assert status_of(nb, card) == "pending_approval"
    assert nb.review_queue(by="carol")[["votes", "votes_needed"]].values.tolist() == [[2, 3]]
    as_reviewer(nb, "carol").approve(card)
    assert status_of(nb, card) == "human-approved"
    nb.close()


def test_the_audit_log_replays_every_card_s_votes_and_final_decision(lab: npc_nb.Project) -> None:
    agreed, disputed = propose(lab, "Agreed fact"), propose(lab, "Disputed fact")
    as_reviewer(lab, "ada").approve(agreed)
    as_reviewer(lab, "bob").approve(agreed)
    as_reviewer(lab, "ada").approve(disputed)
    as_reviewer(lab, "ada").approve(disputed)  # replaced
    as_reviewer(lab, "bob").reject(disputed)
    as_reviewer(lab, "carol").adjudicate(disputed, vote=2)
    replayed = lab.sql(
        """SELECT e.memory_id, e.actor, e.action, coalesce(v.decision, '-') AS decision,
                  e.to_status
           FROM memory_events e LEFT JOIN votes v ON v.id = e.vote_id
           WHERE e.action <> 'propose' ORDER BY e.seq"""
    )
    by_card = {card: replayed[replayed["memory_id"] == card] for card in (agreed, disputed)}
    assert by_card[agreed][["actor", "action", "decision", "to_status"]].values.tolist() == [
        ["ada", "vote", "approve", "pending_approval"],
        ["bob", "vote", "approve", "pending_approval"],
        ["bob", "agree", "-", "human-approved"],
    ]
    assert by_card[disputed][["actor", "action", "decision", "to_status"]].values.tolist() == [
        ["ada", "vote", "approve", "pending_approval"],
        ["ada", "replace_vote", "approve", "pending_approval"],
        ["bob", "vote", "reject", "pending_approval"],
        ["carol", "adjudicate", "reject", "human-rejected"],
    ]


def test_votes_are_kept_by_the_store_across_kernels(lab: npc_nb.Project, project_dir: Path) -> None:
    card = propose(lab, "Kept across kernels")
    as_reviewer(lab, "ada").approve(card)
    lab.close()
    reopened = npc_nb.open(project_dir, review_mode="independent")
    assert reopened.review_queue(by="bob")["votes"].tolist() == [1]
    as_reviewer(reopened, "bob").approve(card)
    assert status_of(reopened, card) == "human-approved"
    reopened.close()
