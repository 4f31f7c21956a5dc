"""Who a decision is recorded for on a shared store: the connected role, in
``reviewer_role`` beside the display name; a reviewer role records under no other
name; the lab's policy is set by the owner only. A real server with real roles."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from npc_nb.store.server.roles import grant_statements
from tests.helpers import propose, status_of
from tests.postgres import PostgresServer


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """An owner and two reviewer roles on project 'alpha'; their URLs and role names."""
    database = PostgresServer.database_name(postgres_url)
    roles = {kind: f"{kind}_{database}" for kind in ("owner", "alice", "bob", "reader")}
    for role in roles.values():
        postgres_server.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    postgres_server.execute(f"GRANT CREATE ON DATABASE {database} TO {roles['owner']}")
    urls = {
        kind: postgres_server.url_for(database, user=role, password="pw")
        for kind, role in roles.items()
    }
    (tmp_path / "alpha" / ".git").mkdir(parents=True)
    npc_nb.open(tmp_path / "alpha", store=urls["owner"]).close()
    for reviewer in ("alice", "bob"):
        for statement in grant_statements(
            "npc_alpha", reviewer=roles[reviewer], reader=roles["reader"]
        ):
            postgres_server.execute(statement, database=urls["owner"])
    return urls | {f"{kind}_role": role for kind, role in roles.items()}


def _open(tmp_path: Path, url: str, **settings: object) -> npc_nb.Project:
    return npc_nb.open(tmp_path / "alpha", store=url, **settings)


def test_the_connected_role_is_recorded_beside_the_display_name(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path, lab["owner"])
    owner.access.set_policy(review_mode="independent")
    card = propose(owner, "The field season starts in April")
    bob = _open(tmp_path, lab["bob"], reviewer="Bob")
    try:
        bob.approve(card)
        vote = bob.sql("SELECT reviewer, reviewer_role FROM votes").values.tolist()
        assert vote == [["Bob", lab["bob_role"]]]
        event = bob.sql(
            "SELECT actor, reviewer_role FROM memory_events WHERE action = 'vote'"
        ).values.tolist()
        assert event == [["Bob", lab["bob_role"]]]
        assert bob.status().recording.startswith(f"recording as Bob (role {lab['bob_role']}")
    finally:
        bob.close()
        owner.close()


def test_a_reviewer_role_cannot_vote_as_another_person(lab: dict[str, str], tmp_path: Path) -> None:
    owner = _open(tmp_path, lab["owner"])
    owner.access.set_policy(review_mode="independent", reviewers_per_card=3)
    card = propose(owner, "The field season starts in April")
    alice, bob = _open(tmp_path, lab["alice"]), _open(tmp_path, lab["bob"])
    try:
        alice.approve(card)
        with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
            bob.reject(card, by=lab["alice_role"])
        with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
            bob.reject(card, by="alice")
        # a display name of bob's own does not make bob a second voter
        bob_again = _open(tmp_path, lab["bob"], reviewer="Robert")
        bob_again.reject(card)
        assert bob_again.approve(card).decision == "replace_vote"
        bob_again.close()
        assert status_of(owner, card) == "pending_approval"
    finally:
        alice.close()
        bob.close()
        owner.close()


def test_only_the_owner_sets_the_policy(lab: dict[str, str], tmp_path: Path) -> None:
    owner = _open(tmp_path, lab["owner"])
    bob = _open(tmp_path, lab["bob"])
    try:
        with pytest.raises(npc_nb.StoreError, match="only the project's owner"):
            bob.access.set_policy(review_mode="independent")
        with pytest.raises(npc_nb.StoreError):
            bob.sql(
                "INSERT INTO review_policy (id, key, value, set_at, set_by) "
                "VALUES ('x', 'review_mode', 'independent', now(), 'bob')",
                allow_write=True,
            )
        assert bob.access.policy().review_mode == "single" and not bob.access.policy().stored
        owner.access.set_policy(review_mode="independent", reviewers_per_card=3)
        assert bob.access.policy().reviewers_per_card == 3
        changes = bob.sql("SELECT key, set_by, reviewer_role FROM review_policy ORDER BY key")
        assert changes.values.tolist() == [
            ["review_mode", "tester", lab["owner_role"]],
            ["reviewers_per_card", "tester", lab["owner_role"]],
        ]
    finally:
        bob.close()
        owner.close()
