"""Audited batches in independent review on a real PostgreSQL server, each reviewer a
database role of their own: the sample is voted by two reviewer roles, each signs off
as the role it is connected as, the second sign-off approves the rest as one batch
naming both, a second sign-off by the same role is refused, and a reader role may not
sign off at all."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.audit_flow import plain_cards, statuses
from tests.postgres import PostgresServer, lab_project

TOLERANCE = 0.2


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """An owner, two reviewers (alice, bob) and a reader, unique to this test, on project
    'alpha'; the owner granted each their level."""
    return lab_project(
        postgres_server,
        postgres_url,
        tmp_path / "alpha",
        {"alice": "reviewer", "bob": "reviewer", "reader": "reader"},
        review_mode="independent",
    )


def open_as(lab: dict[str, str], kind: str) -> npc_nb.Project:
    return npc_nb.open(lab["folder"], store=lab[kind], reviewer=kind, matcher=None)


def test_two_reviewer_roles_sign_off_and_the_second_approves_the_rest(
    lab: dict[str, str],
) -> None:
    owner = open_as(lab, "owner")
    cards = plain_cards(owner, 60)
    name = owner.audit(tolerance=TOLERANCE, looks=1).name
    alice, bob, reader = open_as(lab, "alice"), open_as(lab, "bob"), open_as(lab, "reader")
    sampled = alice.get_audit(name).pending()
    for reviewer in (alice, bob):
        assert reviewer.get_audit(name).pending() == sampled
        for memory_id in sampled:
            reviewer.approve(memory_id)
        assert reviewer.get_audit(name).pending() == ()
    assert owner.get_audit(name).result().status == "approvable"
    rest = [memory_id for memory_id in cards if memory_id not in sampled]

    with pytest.raises(npc_nb.StoreError, match="Reader roles may only query"):
        reader.get_audit(name).approve_rest()
    assert alice.get_audit(name).approve_rest().decision == "sign_off"
    with pytest.raises(npc_nb.AuditError, match="alice signed off already"):
        alice.get_audit(name).approve_rest()
    assert set(statuses(owner, rest).values()) == {"pending_approval"}

    batch = bob.get_audit(name).approve_rest()
    assert sorted(batch.memory_ids) == sorted(rest)
    assert set(statuses(owner, rest).values()) == {"human-approved"}
    reason = owner.decisions(rest[0])["reason"].iloc[-1]
    assert reason.endswith("signed off by alice, bob") and name in reason
    recorded = owner.sql("SELECT step, reviewer_role FROM audit_steps ORDER BY occurred_at, id")
    assert list(zip(recorded["step"], recorded["reviewer_role"], strict=True)) == [
        ("sign_off", lab["alice_role"]),
        ("sign_off", lab["bob_role"]),
        ("approve_rest", lab["bob_role"]),
    ]
    assert owner.metrics.audits()["status"].tolist() == ["approved"]
    for nb in (owner, alice, bob, reader):
        nb.close()
