"""Independent review live across kernels on PostgreSQL: a card that gets its votes in
another process (agreed, or disputed) leaves every open reviewer's review at once, and
a disputed one joins every open adjudication, without saying whose vote or which."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import npc_nb
from npc_nb.store.server.database import PostgresStore
from tests.helpers import as_reviewer, propose, reviewer_store, run_python, wait_until

GENEROUS = 10.0  # how long a notice may take before the test fails: not a speed check


@pytest.fixture
def lab(project_dir: Path, postgres_url: str) -> Iterator[npc_nb.Project]:
    project = npc_nb.open(project_dir, store=postgres_url, review_mode="independent",
                          extract_in_background=False)  # fmt: skip
    store = project._memory.stores.project
    assert isinstance(store, PostgresStore) and store.wait_listening(GENEROUS)
    yield project
    project.close()


def vote_elsewhere(project_dir: Path, lab: npc_nb.Project, home: Path, votes: list[tuple]) -> None:
    """Cast ``votes`` ((reviewer, decision, memory id), ...) in another process, each
    reviewer connected as a role of their own."""
    url = lab.settings.store
    votes = [(by, reviewer_store(lab, by), decision, card) for by, decision, card in votes]
    run_python(
        f"""
        import npc_nb
        nb = npc_nb.open({str(project_dir)!r}, store={url!r}, review_mode="independent",
                         extract_in_background=False)
        nb.close()
        for by, url, decision, memory_id in {votes!r}:
            nb = npc_nb.open({str(project_dir)!r}, store=url, review_mode="independent",
                             reviewer=by, extract_in_background=False)
            getattr(nb, decision)(memory_id)
            nb.close()
        """,
        env_home=home,
    )


def test_cards_finished_in_another_kernel_leave_every_open_review(
    lab: npc_nb.Project, project_dir: Path, postgres_url: str, tmp_path: Path
) -> None:
    agreed = propose(lab, "The cluster is called Orca")
    disputed = propose(lab, "Backups run nightly at 02:00")
    kept = propose(lab, "The wiki lives on the intranet")
    ada = as_reviewer(lab, "ada").review_session()
    carol = as_reviewer(lab, "carol").review_session(adjudicate=True)
    heard: list[str] = []
    ada.watch(heard.append)
    assert (ada.current, ada.remaining, carol.remaining) == (agreed, 3, 0)

    vote_elsewhere(project_dir, lab, tmp_path / "elsewhere", [
        ("bob", "approve", agreed), ("dan", "approve", agreed),
        ("bob", "approve", disputed), ("dan", "reject", disputed),
    ])  # fmt: skip

    wait_until(lambda: ada.remaining == 1, timeout=GENEROUS, what="both cards leaving")
    assert ada.current == kept
    wait_until(lambda: carol.current == disputed, timeout=GENEROUS, what="the adjudication")
    card = carol.card()
    assert card is not None and [v.reviewer for v in card.votes] == ["bob", "dan"]
    disputed_said = [message for message in heard if "Backups" in message]
    assert disputed_said == [  # whose votes, and which, stay unsaid: it is not final
        "\u201cBackups run nightly at 02:00\u201d has the votes it needs from others; it "
        "left this review."
    ]
    wait_until(
        lambda: any("Orca" in message and "approved" in message for message in heard),
        timeout=GENEROUS,
        what="the agreed card's message",
    )
    assert "Orca" in lab.context("analyst") and "Backups" not in lab.context("analyst")
