"""The trust gate in independent review: a memory with votes but no final decision (still
collecting votes, or waiting for adjudication) never reaches a prompt, the graph or an
approved read; and the schema step that brings votes keeps an older store's audit log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import npc_nb
from tests.helpers import as_reviewer, propose

VOTING = "The server room is in Oslo"
DISPUTED = "The server room is in Bergen"
EDITED = "The server room is in Trondheim"
AGREED = "Backups run every night"


@pytest.fixture
def lab(project_dir: Path):
    project = npc_nb.open(project_dir, review_mode="independent", extract_in_background=False)
    yield project
    project.close()


def test_a_memory_with_votes_but_no_final_decision_never_reaches_a_prompt(
    lab: npc_nb.Project, tmp_path: Path
) -> None:
    voting, disputed, agreed = (propose(lab, t) for t in (VOTING, DISPUTED, AGREED))
    as_reviewer(lab, "ada").approve(voting)  # one vote of two
    as_reviewer(lab, "ada").approve(disputed)
    as_reviewer(lab, "bob").edit(disputed, EDITED)  # votes disagree: waiting for adjudication
    as_reviewer(lab, "ada").approve(agreed)
    as_reviewer(lab, "bob").approve(agreed)
    assert lab.review_queue(adjudicate=True, by="carol")["id"].tolist() == [disputed]

    block = lab.context_block("analyst")
    assert block.memory_ids == [agreed]
    for text in (VOTING, DISPUTED, EDITED):
        assert text not in block.text
    assert lab.memories(status="approved")["id"].tolist() == [agreed]
    assert lab.sql("SELECT id FROM approved_memories")["id"].tolist() == [agreed]
    edges = lab.graph.frames()[1]
    assert {m for ids in edges["memory_ids"] for m in ids} <= {agreed}

    lab.chat("analyst", "Where is the server room, and when do backups run?")
    injected = lab.sql("SELECT DISTINCT memory_id FROM context_injections")
    assert injected["memory_id"].tolist() == [agreed]

    log = lab.exports.review_log(tmp_path / "review.jsonl")
    answers = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert all(a["memory_id"] not in (voting, disputed) for a in answers)  # a vote is no answer
    exported = lab.exports.tables(tmp_path / "out", format="jsonl")["memories"]
    statuses = {r["id"]: r["status"] for r in map(json.loads, exported.read_text().splitlines())}
    assert statuses[voting] == statuses[disputed] == "pending_approval"


def test_the_adjudicated_memory_reaches_the_prompt_only_after_the_adjudication(
    lab: npc_nb.Project,
) -> None:
    disputed = propose(lab, DISPUTED)
    as_reviewer(lab, "ada").approve(disputed)
    as_reviewer(lab, "bob").edit(disputed, EDITED)
    assert EDITED not in lab.context("analyst")
    as_reviewer(lab, "carol").adjudicate(disputed, vote=2)
    assert EDITED in lab.context("analyst")


def test_a_read_of_the_past_never_mistakes_a_vote_for_a_decision(lab: npc_nb.Project) -> None:
    """``as_of`` rebuilds a memory from the audit log: a snapshot taken between the votes
    shows the card open (with its text), and only the agreement approves it."""
    card = propose(lab, AGREED)
    as_reviewer(lab, "ada").approve(card)
    between = lab.snapshot("between the votes")
    as_reviewer(lab, "bob").approve(card)
    then = lab.memories(as_of=between).set_index("id")
    assert then.loc[card, "status"] == "pending_approval"
    assert then.loc[card, "final_text"] == AGREED
    assert lab.memories(status="approved", as_of=between).empty
    assert lab.memories(status="approved")["id"].tolist() == [card]
