"""Independent review under concurrency: reviewers in separate processes (kernels) voting
on the same cards at the same moment, on one DuckDB file and on PostgreSQL. Every vote
is recorded once, every card becomes final exactly once, and the audit log replays each
card's votes and then its final decision."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import as_reviewer, reviewer_store
from tests.store_worker import run_together

CARDS = 300


def plan(folder: Path, name: str, decisions: dict[str, str]) -> str:
    path = folder / f"{name}.plan"
    path.write_text("\n".join(f"{memory_id} {d}" for memory_id, d in decisions.items()))
    return str(path)


def cards(nb: npc_nb.Project, count: int) -> list[str]:
    return [
        nb.add_candidate(
            f"Card {n}: the value is {n * 7}", category="fact", npc="analyst"
        ).memory_id
        for n in range(count)
    ]


def bob_decides(index: int) -> str:
    """Bob agrees with ada's approval on two cards of three and rejects the third."""
    return "reject" if index % 3 == 0 else "approve"


def check_every_card(nb: npc_nb.Project, ids: list[str], voters: set[str]) -> None:
    """Two votes a card (one each), one final decision where they agree and none where
    they disagree, in that order in the audit log."""
    votes = nb.votes()
    assert len(votes) == 2 * len(ids)
    assert all(set(found) == voters for found in votes.groupby("memory_id")["reviewer"].agg(list))
    log = nb.decisions()
    status = nb.memories().set_index("id")["status"]
    for index, memory_id in enumerate(ids):
        actions = log.loc[log["memory_id"] == memory_id, "action"].tolist()
        if bob_decides(index) == "approve":
            assert actions == ["propose", "vote", "vote", "agree"], (memory_id, actions)
            assert status[memory_id] == "human-approved"
        else:
            assert actions == ["propose", "vote", "vote"], (memory_id, actions)
            assert status[memory_id] == "pending_approval"
    waiting = nb.review_queue(adjudicate=True, by="carol")
    assert sorted(waiting["id"]) == sorted(i for n, i in enumerate(ids) if n % 3 == 0)


def race(project_dir: Path, stores: tuple[str, str], ids: list[str]) -> tuple[dict, dict]:
    ada = plan(project_dir, "ada", dict.fromkeys(ids, "approve"))
    bob = plan(project_dir, "bob", {i: bob_decides(n) for n, i in enumerate(ids)})
    (first, second), _ = run_together(
        ["vote", str(project_dir), stores[0], "ada", ada],
        ["vote", str(project_dir), stores[1], "bob", bob],
    )
    return first, second


@pytest.mark.slow
def test_two_reviewers_voting_at_once_on_one_file(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, extract_in_background=False)
    ids = cards(nb, CARDS)
    nb.close()
    ada, bob = race(project_dir, ("embedded", "embedded"), ids)
    assert ada["errors"] == bob["errors"] == {}
    agreed = [i for n, i in enumerate(ids) if bob_decides(n) == "approve"]
    assert sorted(ada["final"] + bob["final"]) == sorted(agreed)  # each final exactly once
    nb = npc_nb.open(project_dir)
    try:
        check_every_card(nb, ids, {"ada", "bob"})
    finally:
        nb.close()


@pytest.mark.slow
def test_two_reviewers_voting_at_once_on_postgresql(project_dir: Path, postgres_url: str) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, extract_in_background=False)
    try:
        ids = cards(nb, CARDS)
        ada, bob = race(project_dir, (reviewer_store(nb, "ada"), reviewer_store(nb, "bob")), ids)
        assert ada["errors"] == bob["errors"] == {}
        agreed = [i for n, i in enumerate(ids) if bob_decides(n) == "approve"]
        assert sorted(ada["final"] + bob["final"]) == sorted(agreed)
        check_every_card(nb, ids, {"ada", "bob"})
    finally:
        nb.close()


@pytest.mark.slow
def test_two_last_votes_at_once_on_postgresql_finish_a_card_once(
    project_dir: Path, postgres_url: str
) -> None:
    """Ada voted on every card; bob and carol cast its last vote at the same moment:
    one of them completes the agreement, the other is told the card is decided."""
    nb = npc_nb.open(project_dir, store=postgres_url, review_mode="independent",
                     extract_in_background=False)  # fmt: skip
    try:
        ids = cards(nb, CARDS)
        for memory_id in ids:
            as_reviewer(nb, "ada").approve(memory_id)
        bob = plan(project_dir, "bob", dict.fromkeys(ids, "approve"))
        carol = plan(project_dir, "carol", dict.fromkeys(ids, "approve"))
        (first, second), _ = run_together(
            ["vote", str(project_dir), reviewer_store(nb, "bob"), "bob", bob],
            ["vote", str(project_dir), reviewer_store(nb, "carol"), "carol", carol],
        )
        assert sorted(first["final"] + second["final"]) == sorted(ids)  # never both
        lost = {k: first["errors"].get(k, 0) + second["errors"].get(k, 0)
                for k in {*first["errors"], *second["errors"]}}  # fmt: skip
        assert lost == {"AlreadyDecidedError": CARDS}
        log = nb.decisions()
        finals = log[log["action"] == "agree"]
        assert sorted(finals["memory_id"]) == sorted(ids)  # one agreement a card
        votes = nb.votes()
        assert (votes.groupby("memory_id").size() == 2).all()
        assert set(votes.loc[votes["reviewer"] == "ada", "memory_id"]) == set(ids)
    finally:
        nb.close()
