"""Acceptance of issue 42 from the user's seat: the role that records a
decision (``reviewer_role``) is shown beside every vote and is recorded on every audit
event a person caused (votes, the agreement they completed, adjudications, undo,
approve-all, supersession, a trusted import), not only on plain decisions and votes.
(PostgreSQL: tests/test_pg_blind_votes.py).

Real DuckDB files; each reviewer records from a Project of their own, as from a kernel.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from tests.helpers import propose, run_cli

DATA = Path(__file__).parent / "data"


@pytest.fixture
def kernels(project_dir: Path):
    opened: list[npc_nb.Project] = []

    def open_as(name: str) -> npc_nb.Project:
        project = npc_nb.open(project_dir, reviewer=name, matcher=None)
        opened.append(project)
        return project

    yield open_as
    for project in opened:
        project.close()


def roles_of(nb: npc_nb.Project, action: str) -> list[object]:
    frame = nb.decisions()
    roles = frame.loc[frame["action"] == action, "reviewer_role"]
    return [None if pd.isna(role) else role for role in roles]


def test_the_votes_frame_shows_the_role_that_cast_each_vote(kernels) -> None:
    owner = kernels("owner")
    owner.access.set_policy(review_mode="independent")
    card = propose(owner, "The lab meets on Mondays")
    kernels("alice").approve(card)
    kernels("bob").reject(card)
    votes = owner.votes(card)
    assert "reviewer_role" in votes.columns
    assert votes[["reviewer", "reviewer_role"]].values.tolist() == [
        ["alice", "alice"],
        ["bob", "bob"],
    ]


def test_an_agreement_and_an_adjudication_record_the_role_that_caused_them(kernels) -> None:
    owner = kernels("owner")
    owner.access.set_policy(review_mode="independent")
    agreed, disputed = propose(owner, "Backups run nightly"), propose(owner, "Budget is 10k")
    kernels("alice").approve(agreed)
    kernels("bob").approve(agreed)  # completes an agreement
    kernels("alice").approve(disputed)
    kernels("bob").reject(disputed)
    kernels("carol").adjudicate(disputed, vote=1)
    assert roles_of(owner, "agree") == ["bob"]
    assert roles_of(owner, "adjudicate") == ["carol"]


def test_the_owners_batch_undo_supersession_and_trusted_import_record_their_role(
    kernels,
) -> None:
    owner = kernels("owner")
    first, second = propose(owner, "Fact one"), propose(owner, "Fact two")
    owner.reject(first)
    owner.undo()
    owner.approve_all(owner.preview_approve_all(ids=[first, second]))
    owner.supersede(first, "Fact one, corrected")
    with pytest.warns(UserWarning, match="trust=True"):
        owner.imports.mem0(DATA / "mem0" / "get_all.json", trust=True)
    for action in ("undo", "approve_all", "supersede"):
        assert set(roles_of(owner, action)) == {"owner"}, action
    imported = owner.decisions()
    trusted = imported["reason"].fillna("").str.contains("trust=True")
    assert trusted.any()
    assert imported.loc[trusted, "reviewer_role"].fillna("").tolist() == ["owner"] * trusted.sum()


def test_the_terminal_review_says_who_is_recording_and_how(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir)
    propose(nb, "The lab meets on Mondays")
    nb.close()
    named = run_cli("review", "--by", "ada", cwd=project_dir, keys="q\n")
    assert named.returncode == 0, named.stderr
    assert "recording as ada (--by)" in named.stdout
    plain = run_cli("review", cwd=project_dir, keys="q\n")
    assert "recording as tester (environment (NPC_NB_REVIEWER))" in plain.stdout


def test_a_review_session_for_another_reviewer_is_refused_when_it_is_opened(kernels) -> None:
    owner = kernels("owner")
    owner.access.set_policy(review_mode="independent")
    card = propose(owner, "The lab meets on Mondays")
    bob = kernels("bob")
    with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
        bob.review_session(by="ada")
    assert bob.review_session(by="bob\u200b").card().memory_id == card  # bob is bob
    assert owner.votes(card).empty
