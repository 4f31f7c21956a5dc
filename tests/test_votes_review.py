"""Independent review in the front ends: a reviewer's session, panel and terminal show
only the cards they have not voted on and never another reviewer's vote, edit or reason
(only how many votes a card has); an adjudicator sees the votes side by side and picks
one with a number key."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import npc_nb
from npc_nb import Approve
from npc_nb.cli import main
from tests.helpers import REPO, as_reviewer, cell, magics_project, propose, status_of
from tests.test_cli import Terminal

#: What bob wrote when he voted: none of it may reach ada's screen before the card is final.
BOBS_EDIT = "The lab meets on Tuesdays at ten"
BOBS_REASON = "bob-thinks-it-moved"


@pytest.fixture
def independent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Independent review for every project opened here, the terminal's too."""
    monkeypatch.setenv("NPC_NB_REVIEW_MODE", "independent")


@pytest.fixture
def lab(independent: None, project_dir: Path):
    project = npc_nb.open(project_dir)
    yield project
    project.close()


def bob_votes(lab: npc_nb.Project) -> tuple[str, str]:
    """Two cards bob has voted on: an edit, and a rejection with a reason."""
    edited = propose(lab, "The lab meets on Mondays")
    rejected = propose(lab, "The budget is 10k")
    as_reviewer(lab, "bob").edit(edited, BOBS_EDIT)
    as_reviewer(lab, "bob").reject(rejected, reason=BOBS_REASON)
    return edited, rejected


def nothing_of_bobs(shown: str) -> None:
    for secret in ("bob", BOBS_EDIT, BOBS_REASON):
        assert secret not in shown, secret


def test_a_reviewers_queue_shows_counts_never_anothers_vote(lab: npc_nb.Project) -> None:
    edited, rejected = bob_votes(lab)
    queue = lab.review_queue(by="ada")
    assert queue["id"].tolist() == [edited, rejected]
    assert queue[["votes", "votes_needed"]].values.tolist() == [[1, 2], [1, 2]]
    single = npc_nb.open(lab.root, review_mode="single").review_queue()
    assert set(queue.columns) - set(single.columns) == {"votes", "votes_needed"}
    nothing_of_bobs(queue.to_string())
    assert lab.review_queue(by="bob").empty  # bob voted on both


def test_the_session_is_blind_and_a_vote_leaves_the_queue(lab: npc_nb.Project) -> None:
    edited, rejected = bob_votes(lab)
    session = as_reviewer(lab, "ada").review_session()
    card = session.card()
    assert card is not None and card.review_note == "independent review: 1 of 2 votes"
    assert card.text == "The lab meets on Mondays" and card.votes == ()
    nothing_of_bobs(str(card))
    result = session.decide(Approve(session.current))
    assert not result.final and session.current == rejected
    assert session.tally["votes"] == 1 and session.tally["approved"] == 0  # a vote
    with pytest.raises(npc_nb.DecisionError, match="round is complete"):
        session.undo()  # the round is complete: ada may not look, undo and re-vote
    assert sorted(lab.votes(edited)["reviewer"].tolist()) == ["ada", "bob"]
    assert status_of(lab, edited) == "pending_approval"  # waits for adjudication


def test_an_adjudicator_sees_the_votes_side_by_side_and_picks_one(lab: npc_nb.Project) -> None:
    edited, rejected = bob_votes(lab)
    as_reviewer(lab, "ada").approve(edited)
    as_reviewer(lab, "ada").approve(rejected)
    assert as_reviewer(lab, "ada").review_session(adjudicate=True).current is None  # ada voted
    session = as_reviewer(lab, "carol").review_session(adjudicate=True)
    card = session.card()
    assert card is not None and card.review_note == "adjudication: 2 votes disagree"
    shown = [(v.number, v.reviewer, v.decision, v.text) for v in card.votes]
    assert shown == [(1, "bob", "edit", BOBS_EDIT), (2, "ada", "approve", card.text)]
    assert "1: bob edit: The lab meets on Tuesdays at ten" in str(card)
    assert session.adjudicate_vote(1).final
    assert lab.memories().set_index("id").loc[edited, "final_text"] == BOBS_EDIT
    card = session.card()
    assert card is not None and card.votes[0].reason == BOBS_REASON
    session.decide(Approve(session.current))  # deciding anew is the adjudication too
    assert status_of(lab, rejected) == "human-approved"
    assert lab.decisions()["action"].tolist()[-2:] == ["adjudicate", "adjudicate"]


def test_the_panel_is_blind_and_adjudicates_with_number_keys(lab: npc_nb.Project) -> None:
    edited, _ = bob_votes(lab)
    panel = as_reviewer(lab, "ada").review()
    assert "independent review: 1 of 2 votes" in panel.keys.card_html
    nothing_of_bobs(panel.keys.card_html)
    assert panel.approve_all.disabled  # one reviewer's batch: none in independent review
    panel._on_message(None, {"type": "key", "key": "a", "card": edited}, None)
    assert "vote recorded (approve)" in panel.status.value
    nothing_of_bobs(panel.status.value + panel.keys.card_html)
    adjudicator = as_reviewer(lab, "dan").review(adjudicate=True)
    assert adjudicator.session.current == edited
    assert BOBS_EDIT in adjudicator.keys.card_html and "ada" in adjudicator.keys.card_html
    adjudicator._on_message(None, {"type": "key", "key": "1", "card": edited}, None)
    assert "adjudicated as vote 1" in adjudicator.status.value
    assert lab.memories().set_index("id").loc[edited, "final_text"] == BOBS_EDIT


def test_the_terminal_is_blind_and_adjudicates(lab: npc_nb.Project, project_dir: Path) -> None:
    edited, rejected = bob_votes(lab)
    out = io.StringIO()
    argv = ["review", "--project", str(project_dir), "--by", "ada"]
    assert main(argv, io.StringIO("a\na\n"), out) == 0
    shown = out.getvalue()
    assert shown.count("independent review: 1 of 2 votes") == 2
    nothing_of_bobs(shown.split("Review finished")[0])
    out = io.StringIO()
    argv = ["review", "--project", str(project_dir), "--by", "carol", "--adjudicate"]
    assert main(argv, io.StringIO("2\nr\nsee notes\n"), out) == 0
    shown = out.getvalue()
    assert "2 card(s) waiting for adjudication" in shown
    assert (
        f"1: bob edit: {BOBS_EDIT}" in shown and f"1: bob reject (reason: {BOBS_REASON})" in shown
    )
    assert status_of(lab, edited) == "human-approved"  # vote 2: ada's approval
    assert status_of(lab, rejected) == "human-rejected"  # decided anew


def test_on_a_terminal_a_number_key_picks_a_vote(
    lab: npc_nb.Project, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # this checkout's npc_nb
    edited, _ = bob_votes(lab)
    as_reviewer(lab, "ada").approve(edited)
    argv = [sys.executable, "-m", "npc_nb.cli", "review", "--project", str(project_dir),
            "--by", "carol", "--adjudicate"]  # fmt: skip
    terminal = Terminal(argv)
    try:
        terminal.answer("> ", "1")
        terminal.answer("[u undo / q quit] > ", "q")
        assert terminal.wait() == 0
    finally:
        terminal.close()
    assert lab.memories().set_index("id").loc[edited, "final_text"] == BOBS_EDIT


def test_the_review_magic_adjudicates(independent: None, shell) -> None:
    nb = magics_project(shell)
    edited, _ = bob_votes(nb)
    as_reviewer(nb, "ada").approve(edited)
    cell(shell, "%npc_config reviewer=carol")  # carol's kernel
    table = cell(shell, "%npc_review --list --adjudicate")
    assert table.frame["id"].tolist() == [edited]
    panel = cell(shell, "%npc_review --adjudicate")
    assert "recording as carol (this session)" in panel.recording.value
    assert panel.session.adjudicate and panel.session.current == edited
    assert BOBS_EDIT in panel.keys.card_html
    panel._on_message(None, {"type": "key", "key": "2", "card": edited}, None)
    assert status_of(nb, edited) == "human-approved"
