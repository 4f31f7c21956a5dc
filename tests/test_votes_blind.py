"""Blind from the voter's seat, on a DuckDB file: what a vote returns and what the
review shows after it never depends on the other votes; a complete round cannot be
reopened by a voter (no vote, look, undo, re-vote); votes are never rewritten; and no
side door (reconsider, trusted imports, approve_all, bundle merges, promotion) decides
a card of independent review without its votes.

Real DuckDB files; the reviewers are names passed as ``by=``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from npc_nb import Approve
from tests.helpers import as_reviewer, propose, status_of
from tests.test_experiments import _script

DATA = Path(__file__).parent / "data"


@pytest.fixture
def lab(project_dir: Path):
    project = npc_nb.open(project_dir, review_mode="independent")
    yield project
    project.close()


def what_a_vote_says(result: npc_nb.DecisionResult) -> tuple:
    """Everything a vote's result tells its voter, the card's id left out."""
    changes = tuple(change[1:] for change in result.changes)
    return (
        result.decision,
        result.reviewer,
        changes,
        result.notes,
        result.final,
        str(result)[-40:],
    )


def test_a_vote_says_the_same_whether_it_completed_an_agreement_or_a_dispute(
    lab: npc_nb.Project,
) -> None:
    agreed, disputed = propose(lab, "The lab meets on Mondays"), propose(lab, "Budget is 10k")
    as_reviewer(lab, "ada").approve(agreed)
    as_reviewer(lab, "ada").reject(disputed)
    completing_agreement = as_reviewer(lab, "bob").approve(agreed)
    completing_dispute = as_reviewer(lab, "bob").approve(disputed)
    assert what_a_vote_says(completing_agreement) == what_a_vote_says(completing_dispute)
    assert completing_agreement.notes == ("vote recorded",) and not completing_agreement.final
    # the outcomes are there for whoever asks
    assert status_of(lab, agreed) == "human-approved"
    assert status_of(lab, disputed) == "pending_approval"


def test_the_session_tally_counts_votes_whatever_they_completed(lab: npc_nb.Project) -> None:
    agreed, disputed = propose(lab, "The lab meets on Mondays"), propose(lab, "Budget is 10k")
    as_reviewer(lab, "ada").approve(agreed)
    as_reviewer(lab, "ada").reject(disputed)
    session = as_reviewer(lab, "bob").review_session()
    lines = []
    for _ in range(2):
        session.decide(Approve(session.current))
        lines.append(str(session.summary()).split(" in ")[0])
    assert session.tally["votes"] == 2 and session.tally["approved"] == 0
    assert lines == ["Review finished: 1 vote", "Review finished: 2 votes"] or lines == [
        "1 still waiting: 1 vote",
        "Review finished: 2 votes",
    ]


def test_a_voter_cannot_undo_or_replace_a_vote_once_the_round_is_complete(
    lab: npc_nb.Project,
) -> None:
    card = propose(lab, "We use DuckDB for everything")
    as_reviewer(lab, "ada").approve(card)
    as_reviewer(lab, "bob").reject(card, reason="not everything")  # complete, disputed
    before = (lab.decisions(), lab.votes(card, history=True))
    with pytest.raises(npc_nb.DecisionError, match="round is complete"):
        as_reviewer(lab, "bob").undo()
    with pytest.raises(npc_nb.DecisionError, match="complete round"):
        as_reviewer(lab, "bob").approve(card)  # re-vote to match ada's
    after = (lab.decisions(), lab.votes(card, history=True))
    assert len(after[0]) == len(before[0]) and after[1].equals(before[1])  # nothing written
    assert lab.review_queue(adjudicate=True, by="carol")["id"].tolist() == [card]


def test_a_vote_can_be_withdrawn_while_its_round_still_collects_votes(
    lab: npc_nb.Project,
) -> None:
    card = propose(lab, "The cluster is called Orca")
    as_reviewer(lab, "ada").approve(card)
    withdrawn = as_reviewer(lab, "ada").undo()
    assert withdrawn.decision == "withdraw_vote"
    assert lab.votes(card).empty
    assert lab.votes(card, history=True)["state"].tolist() == ["withdrawn"]


def test_votes_are_never_rewritten_replaced_and_withdrawn_votes_keep_their_rows(
    lab: npc_nb.Project,
) -> None:
    card = propose(lab, "Deadline is Friday")
    as_reviewer(lab, "ada").approve(card)
    first = lab.sql("SELECT * FROM votes ORDER BY voted_at")
    as_reviewer(lab, "ada").reject(card, reason="moved")  # replaces ada's vote
    as_reviewer(lab, "ada").undo()  # withdraws the replacement
    as_reviewer(lab, "ada").edit(card, "Deadline is Monday")
    rows = lab.sql("SELECT * FROM votes ORDER BY voted_at")
    assert len(rows) == 3
    assert _plain(rows)[0] == _plain(first)[0]  # the first row as written
    history = lab.votes(card, history=True)
    assert history["state"].tolist() == ["replaced", "withdrawn", "active"]
    assert history["decision"].tolist() == ["approve", "reject", "edit"]


def test_reconsider_cannot_overturn_a_rejection_the_reviewers_agreed_on(
    lab: npc_nb.Project,
) -> None:
    card = propose(lab, "The budget is 10k")
    as_reviewer(lab, "ada").reject(card)
    as_reviewer(lab, "bob").reject(card)
    assert status_of(lab, card) == "human-rejected"
    with pytest.raises(npc_nb.DecisionError, match="reconsider=True"):
        as_reviewer(lab, "carol").approve(card, reconsider=True)
    with pytest.raises(npc_nb.DecisionError, match="reconsider=True"):
        as_reviewer(lab, "carol").edit(card, "The budget is 12k", reconsider=True)
    assert status_of(lab, card) == "human-rejected"


def test_a_trusted_import_is_refused_and_nothing_is_imported(lab: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.DecisionError, match="trust=True"):
        lab.imports.mem0(DATA / "mem0" / "get_all.json", trust=True)
    assert lab.memories().empty
    lab.imports.mem0(DATA / "mem0" / "get_all.json")  # as candidates: fine
    assert len(lab.review_queue(by="ada")) > 0 and lab.memories(status="approved").empty


def test_approve_all_is_refused(lab: npc_nb.Project) -> None:
    propose(lab, "The lab meets on Mondays")
    with pytest.raises(npc_nb.DecisionError, match="votes"):
        lab.preview_approve_all(ids=lab.review_queue(by="ada")["id"].tolist())
    assert lab.memories(status="approved").empty


def test_a_bundle_is_not_merged_into_a_project_in_independent_review(
    lab: npc_nb.Project, tmp_path: Path
) -> None:
    other = npc_nb.open(tmp_path / "other", create=True)
    approved = propose(other, "Bundled fact")
    other.approve(approved, by="eve")
    bundle = other.export_bundle(tmp_path / "other.zip")
    other.close()
    propose(lab, "A fact of our own")
    with pytest.raises(npc_nb.DecisionError, match="independent review"):
        npc_nb.import_bundle(bundle, lab.root, into_nonempty=True, review_mode="independent")
    assert "Bundled fact" not in set(lab.memories()["final_text"])


def test_promotion_votes_and_says_so_and_never_settles_a_card_waiting_for_adjudication(
    project_dir: Path,
) -> None:
    nb = npc_nb.open(project_dir)
    nb.configure(extract_in_background=False)
    nb.npc("analyst", directive="You help.", model="npc_nb/offline")
    facts = ["We use R for the statistics.", "We ring only adult birds.", "We publish the code."]
    nb.chat("analyst", " ".join(facts))
    disputed = nb.add_candidate(facts[0], category="decision", npc="analyst").memory_id
    open_card = nb.add_candidate(facts[1], category="decision", npc="analyst").memory_id
    exp = nb.experiment(
        "promo",
        arms={"A": {"extractor": _script(*facts)}, "B": {"extractor": _script()}},
        npc="analyst",
    )
    exp.run()
    exp.wait(timeout=120)
    session = exp.review_session(by="bob")
    while session.card() is not None:
        session.decide(Approve(session.current))
    nb.configure(review_mode="independent")
    as_reviewer(nb, "ada").approve(disputed)
    as_reviewer(nb, "bob").reject(disputed)  # waits for adjudication
    promoted = as_reviewer(nb, "carol").experiment("promo").promote("A")
    done = promoted.rows.set_index("live_memory_id")["done"]
    assert done[disputed] == "waiting" and done[open_card] == "vote cast"
    assert promoted.done == {"final": 0, "vote cast": 2, "waiting": 1}
    assert "approved" not in str(promoted) and "2 vote cast" in str(promoted)
    assert status_of(nb, disputed) == "pending_approval"
    assert nb.review_queue(adjudicate=True, by="dan")["id"].tolist() == [disputed]
    assert nb.votes(open_card)["reviewer"].tolist() == ["carol"]  # attributed
    nb.close()


def _plain(frame: object) -> list[list[object]]:
    """A frame's rows as plain values (missing as None), whatever dtypes a read gave."""
    return [
        [None if pd.isna(value) else str(value) for value in row]
        for row in frame.itertuples(index=False)  # type: ignore[attr-defined]
    ]
