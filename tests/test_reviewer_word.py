"""One word for the person who decides: every table and result a user reads names them
``reviewer`` (the keyword that records them is ``by=``), whatever the stored column."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import as_reviewer, propose


def test_the_decision_log_names_who_decided_reviewer(nb: npc_nb.Project) -> None:
    memory = propose(nb, "The lab meets on Mondays")
    nb.approve(memory, by="ada")
    log = nb.decisions(memory)
    assert "actor" not in log.columns
    assert log["action"].tolist() == ["propose", "approve"]
    assert log["reviewer"].iloc[-1] == "ada"


def test_the_decision_log_as_it_stood_names_who_decided_reviewer(nb: npc_nb.Project) -> None:
    memory = propose(nb, "The budget is 10k")
    nb.reject(memory, by="bob", reason="not true")
    then = nb.snapshot("after-bob")
    nb.undo(by="bob")
    log = nb.decisions(memory, as_of=then)
    assert "actor" not in log.columns
    assert log[["reviewer", "action"]].values.tolist()[-1] == ["bob", "reject"]


def test_a_snapshot_names_who_took_it_reviewer(nb: npc_nb.Project) -> None:
    taken = nb.snapshot("v1", by="ada")
    assert taken.reviewer == "ada"
    assert not hasattr(taken, "taken_by")
    assert "by ada" in str(taken)
    table = nb.snapshots()
    assert "taken_by" not in table.columns
    assert table[["label", "reviewer"]].values.tolist() == [["v1", "ada"]]


def test_the_votes_name_each_voter_reviewer(project_dir: Path) -> None:
    lab = npc_nb.open(project_dir, review_mode="independent")
    try:
        card = propose(lab, "The lab meets on Mondays")
        as_reviewer(lab, "ada").approve(card)
        votes = lab.votes(card)
        assert votes["reviewer"].tolist() == ["ada"]
        assert not {"actor", "voter", "rater"} & set(votes.columns)
    finally:
        lab.close()


@pytest.mark.parametrize("name", ["actor", "taken_by", "rater"])
def test_no_result_attribute_names_the_reviewer_otherwise(name: str) -> None:
    fields = {
        field
        for cls in (npc_nb.Snapshot, npc_nb.DecisionResult)
        for field in cls.__dataclass_fields__
    }
    assert name not in fields
