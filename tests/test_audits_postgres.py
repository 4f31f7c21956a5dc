"""Audited batches on a shared PostgreSQL store, from the user's seat: the whole flow
(plan, sample, review, refuse, extend, approve the rest, undo), the cards set aside, and
a second kernel that opens the audit by name and sees the same sample.

Each test gets a fresh database on the session's throwaway server (``postgres_url``).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

import npc_nb
from tests.audit_flow import decide_sample, make_every_exclusion, plain_cards, statuses
from tests.helpers import as_reviewer

TOLERANCE = 0.2


def open_shared(project_dir: Path, url: str, **settings: object) -> npc_nb.Project:
    return npc_nb.open(project_dir, store=url, **settings)


def test_the_whole_flow_on_postgresql(project_dir: Path, postgres_url: str) -> None:
    nb = open_shared(project_dir, postgres_url)
    try:
        cards = plain_cards(nb, 60)
        audit = nb.audit(tolerance=TOLERANCE, seed=3)  # the sequential design
        plan = audit.plan
        settles = next(j for j, most in enumerate(plan.thresholds) if most >= 1)
        decide_sample(nb, audit, errors=1)
        assert audit.result().status == "extendable"
        with pytest.raises(npc_nb.AuditError, match=r"audit\.extend\(\)"):
            audit.approve_rest()
        for _ in range(settles):
            audit.extend()
            decide_sample(nb, audit)
        settled = audit.result()
        assert (settled.status, settled.errors) == ("approvable", 1), settled
        sampled = set(nb.sql(
            "SELECT memory_id FROM audit_members WHERE audit_id = ? AND position < ?",
            [audit.id, settled.sample],
        )["memory_id"])  # fmt: skip
        rest = [memory_id for memory_id in cards if memory_id not in sampled]
        assert set(statuses(nb, rest).values()) == {"pending_approval"}
        batch = audit.approve_rest()
        assert sorted(batch.memory_ids) == sorted(rest)
        assert set(statuses(nb, rest).values()) == {"human-approved"}
        log = nb.decisions()
        reasons = set(log.loc[log["batch_id"] == batch.batch_id, "reason"])
        assert len(reasons) == 1 and reasons.pop().startswith(f"audit {audit.name} ({audit.id})")
        assert audit.result().status == "approved"
        nb.undo()
        assert set(statuses(nb, rest).values()) == {"pending_approval"}
        assert audit.result().status == "approvable"
        steps = nb.sql("SELECT step FROM audit_steps WHERE audit_id = ? ORDER BY occurred_at",
                       [audit.id])  # fmt: skip
        assert list(steps["step"]) == ["extend"] * settles + ["approve_rest"]
    finally:
        nb.close()


def test_cards_set_aside_stay_open_on_postgresql(
    project_dir: Path, postgres_url: str, tmp_path: Path
) -> None:
    nb = open_shared(project_dir, postgres_url)
    try:
        aside = make_every_exclusion(nb, tmp_path)
        plain_cards(nb, 60)
        audit = nb.audit(tolerance=TOLERANCE, looks=1)
        assert audit.result().excluded == 5
        decide_sample(nb, audit)
        audit.approve_rest()
        assert set(statuses(nb, list(aside)).values()) == {"pending_approval"}
    finally:
        nb.close()


def test_another_kernel_opens_the_audit_by_name_and_sees_its_sample(
    project_dir: Path, postgres_url: str
) -> None:
    nb = open_shared(project_dir, postgres_url)
    other = open_shared(project_dir, postgres_url)
    try:
        plain_cards(nb, 60)
        audit = nb.audit(tolerance=TOLERANCE, looks=1, seed=21, name="pilot")
        theirs = other.get_audit("pilot")
        assert theirs.pending() == audit.pending()
        decide_sample(other, theirs)  # decided in the other kernel
        assert audit.result().status == "approvable"
        assert list(other.audits()["name"]) == ["pilot"]
    finally:
        other.close()
        nb.close()


def test_a_reviewer_role_runs_an_audit_under_its_own_role(
    project_dir: Path, postgres_url: str
) -> None:
    nb = open_shared(project_dir, postgres_url)
    try:
        plain_cards(nb, 60)
        ada = as_reviewer(nb, "ada")
        audit = ada.audit(tolerance=TOLERANCE, looks=1)
        decide_sample(ada, audit)
        batch = audit.approve_rest()
        assert batch.reviewer == "ada"
        role = urlsplit(str(ada.settings.store)).username  # ada's own login role
        roles = nb.sql("SELECT started_by, reviewer_role FROM audits").values.tolist()
        assert roles == [["ada", role]]
        steps = nb.sql("SELECT actor, reviewer_role FROM audit_steps").values.tolist()
        assert steps == [["ada", role]]
        log = nb.decisions()
        assert set(log.loc[log["batch_id"] == batch.batch_id, "reviewer_role"]) == {role}
        with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
            ada.audit(by="bob")  # a reviewer role starts audits only as itself
    finally:
        nb.close()
