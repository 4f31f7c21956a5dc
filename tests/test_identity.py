"""Who a decision is recorded for, on a DuckDB file: ``by=`` names only yourself in
independent review, names are normalised before they are compared or stored, the
reviewer's name is recorded in ``reviewer_role`` beside the display name, and the name
and its origin are shown. Real DuckDB files and a real IPython shell."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import cell, propose, run_cli, run_python, status_of


@pytest.fixture
def independent(project_dir: Path):
    opened: list[npc_nb.Project] = []

    def open_as(name: str) -> npc_nb.Project:
        project = npc_nb.open(project_dir, review_mode="independent", reviewer=name)
        opened.append(project)
        return project

    yield open_as
    for project in opened:
        project.close()


def test_naming_another_reviewer_is_refused_and_writes_nothing(independent) -> None:
    bob = independent("bob")
    card = propose(bob, "The lab meets on Mondays")
    independent("alice").approve(card)
    events = len(bob.decisions())
    with pytest.raises(npc_nb.DecisionError, match="recording as bob"):
        bob.reject(card, by="alice")
    bob.approve(card)
    with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
        bob.approve(card, by="eve")
    assert len(bob.decisions()) == events + 2  # bob's vote and the agreement only
    assert status_of(bob, card) == "human-approved"


def test_a_voter_cannot_adjudicate_her_own_dispute_under_another_name(independent) -> None:
    alice, bob = independent("alice"), independent("bob")
    card = propose(alice, "We use DuckDB for everything")
    alice.approve(card)
    bob.reject(card, reason="not everything")
    with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
        alice.adjudicate(card, vote=1, by="alice2")
    with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
        alice.approve(card, by="dave")
    assert status_of(alice, card) == "pending_approval"


def test_a_zero_width_character_does_not_make_a_second_voter(independent) -> None:
    alice = independent("alice")
    card = propose(alice, "Deadline is Friday")
    alice.approve(card)
    again = alice.approve(card, by="alice\u200b")  # the same person: her vote replaced
    assert not again.final and again.decision == "replace_vote"
    spaced = independent(" Alice\u200b  Smith ")
    assert spaced.status().recording.startswith("recording as Alice Smith")
    assert status_of(alice, card) == "pending_approval"


def test_the_reviewer_is_recorded_in_its_own_column(independent) -> None:
    alice = independent("alice")
    card = propose(alice, "Budget is 10k")
    alice.approve(card)
    votes = alice.sql("SELECT reviewer, reviewer_role FROM votes")
    assert votes.values.tolist() == [["alice", "alice"]]
    events = alice.sql("SELECT actor, reviewer_role, action FROM memory_events ORDER BY seq")
    assert events.values.tolist()[-1] == ["alice", "alice", "vote"]


def test_single_review_keeps_by_as_the_display_name(nb: npc_nb.Project) -> None:
    card = propose(nb, "The server runs Debian")
    nb.approve(card, by="Ada\u200b")
    log = nb.sql("SELECT actor, reviewer_role FROM memory_events WHERE action = 'approve'")
    assert log.values.tolist() == [["Ada", "tester"]]  # who typed it: the reviewer setting


def test_status_says_who_is_recording_and_how(nb: npc_nb.Project) -> None:
    status = nb.status()
    assert status.recording == "recording as tester (environment (NPC_NB_REVIEWER))"
    assert "recording as tester" in str(status)


def test_session_settings_survive_open_in_the_same_kernel(shell, project_dir: Path) -> None:
    cell(shell, "%npc_config reviewer=bob")
    cell(shell, "%npc_pin now")
    nb = cell(shell, f"import npc_nb; nb = npc_nb.open({str(project_dir)!r}); nb")
    try:
        assert nb.settings.reviewer == "bob"
        assert nb.settings.source_of("reviewer") == "this session"
        assert nb.settings.pin is not None
        card = propose(nb, "The lab meets on Mondays")
        nb.approve(card)
        assert nb.decisions(card)["reviewer"].tolist()[-1] == "bob"
        shown = str(cell(shell, "%npc_config"))
        assert "recording as bob (this session)" in shown
    finally:
        nb.close()


def test_the_labs_policy_is_stored_and_every_kernel_follows_it(project_dir: Path) -> None:
    owner = npc_nb.open(project_dir)
    assert owner.access.policy().review_mode == "single" and not owner.access.policy().stored
    owner.access.set_policy(review_mode="independent", reviewers_per_card=2)
    card = propose(owner, "The lab meets on Mondays")
    second = npc_nb.open(project_dir, reviewer="bob")  # a kernel with no local setting
    try:
        assert second.access.policy().review_mode == "independent"
        assert not second.approve(card).final  # a vote, not a decision
        assert status_of(second, card) == "pending_approval"
        changes = owner.sql("SELECT key, value, set_by FROM review_policy ORDER BY set_at")
        assert ["review_mode", "independent", "tester"] in changes.values.tolist()
    finally:
        second.close()
        owner.close()


def test_a_local_setting_that_disagrees_with_the_policy_is_refused(project_dir: Path) -> None:
    owner = npc_nb.open(project_dir)
    owner.access.set_policy(review_mode="independent")
    card = propose(owner, "The lab meets on Mondays")
    owner.close()
    with pytest.raises(npc_nb.ConfigError, match="project's policy"):
        npc_nb.open(project_dir, review_mode="single")
    agreeing = npc_nb.open(project_dir, review_mode="independent")
    try:
        with pytest.raises(npc_nb.ConfigError, match="project's policy"):
            agreeing.configure(review_mode="single")
        assert not agreeing.approve(card).final
    finally:
        agreeing.close()


def test_a_parent_folders_env_loaded_by_litellm_does_not_choose_the_store(
    tmp_path: Path,
) -> None:
    parent = tmp_path / "lab"
    nested = parent / "thesis"
    (nested / ".git").mkdir(parents=True)
    (parent / ".env").write_text(
        "NPC_NB_STORE=postgresql://lab@127.0.0.1:1/shared\nNPC_NB_PROJECT=shared\n"
    )
    out = run_python(
        f"""
        import os
        os.chdir({str(nested)!r})
        os.environ.pop("NPC_NB_REVIEWER", None)
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import npc_nb
        import litellm  # loads the nearest .env up the tree into os.environ
        assert os.environ.get("NPC_NB_STORE"), "litellm did not load the parent's .env"
        nb = npc_nb.open()
        print(nb.store_path)
        print(nb.status().store_setting)
        """,
        env_home=tmp_path / "home",
    )
    store, origin = out.strip().splitlines()[-2:]
    assert store.startswith(str(nested)) and store.endswith(".duckdb")
    assert "ignored" in origin and str(parent / ".env") in origin


def test_npc_nb_policy_shows_and_sets_the_policy(project_dir: Path) -> None:
    shown = run_cli("policy", "--project", str(project_dir), cwd=project_dir, keys="")
    assert shown.returncode == 0 and "the project stores no policy" in shown.stdout
    stored = run_cli(
        "policy", "--set", "review_mode=independent", "--set", "reviewers_per_card=3",
        "--project", str(project_dir), cwd=project_dir, keys="",
    )  # fmt: skip
    assert stored.returncode == 0, stored.stdout + stored.stderr
    assert "reviewers_per_card = 3" in stored.stdout and "set by tester" in stored.stdout
    nb = npc_nb.open(project_dir)
    try:
        assert nb.access.policy().review_mode == "independent"
    finally:
        nb.close()
    wrong = run_cli("policy", "--set", "review_mode=solo", cwd=project_dir, keys="")
    assert wrong.returncode == 2 and "review_mode='solo' is not allowed" in wrong.stdout
