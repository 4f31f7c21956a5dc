"""One winner per race on the shared store: two kernels (processes) deciding the same
candidates, or proposing the same texts, at the same moment."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.store_worker import run_together

RACES = 300


@pytest.mark.slow
def test_two_reviewers_racing_never_both_win(project_dir: Path, postgres_url: str) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    ids = [
        nb.add_candidate(f"Race {n}: the answer is {n}", category="fact", npc="analyst").memory_id
        for n in range(RACES)
    ]
    ids_file = project_dir / "ids.txt"
    ids_file.write_text("\n".join(ids))
    (approver, rejecter), _ = run_together(
        ["decide", str(project_dir), postgres_url, "approve", str(ids_file)],
        ["decide", str(project_dir), postgres_url, "reject", str(ids_file)],
    )
    assert set(approver["won"]).isdisjoint(rejecter["won"])  # never two winners
    assert len(approver["won"]) + len(rejecter["won"]) == RACES  # and always one
    # Every loser was told so, and why: nothing else went wrong.
    for worker in (approver, rejecter):
        lost = RACES - len(worker["won"])
        assert worker["errors"] == ({"AlreadyDecidedError": lost} if lost else {})
    frame = nb.memories()
    status = dict(zip(frame["id"], frame["status"], strict=True))
    assert all(status[i] == "human-approved" for i in approver["won"])
    assert all(status[i] == "human-rejected" for i in rejecter["won"])
    events = nb.decisions()
    decisions = events[events["action"].isin(["approve", "reject"])]
    assert sorted(decisions["memory_id"]) == sorted(ids)  # exactly one audit event each
    nb.close()


@pytest.mark.slow
def test_the_same_text_proposed_in_two_kernels_at_once_is_queued_once(
    project_dir: Path, postgres_url: str
) -> None:
    texts = [f"Shared finding {n}: the rate is {n} percent" for n in range(100)]
    texts_file = project_dir / "texts.txt"
    texts_file.write_text("\n".join(texts))
    (first, second), _ = run_together(
        ["propose", str(project_dir), postgres_url, str(texts_file)],
        ["propose", str(project_dir), postgres_url, str(texts_file)],
    )
    assert first["actions"].get("queued", 0) + second["actions"].get("queued", 0) == len(texts)
    assert first["actions"].get("merged", 0) + second["actions"].get("merged", 0) == len(texts)
    nb = npc_nb.open(project_dir, store=postgres_url)
    assert len(nb.memories()) == len(texts)
    assert len(nb.reproposals()) == len(texts)
    nb.close()
