"""The audited batches' rows (``store.memories.audit_rows``) on both backends: an audit
and its frozen batch written together and read back as written, its steps logged in
order; on PostgreSQL every role is refused UPDATE, DELETE and TRUNCATE on the three
tables, and a reviewer role may record a step (under its own role)."""

from __future__ import annotations

import datetime as dt
import gc
from pathlib import Path
from typing import Any

import psycopg
import pytest

import npc_nb
from npc_nb.store.contract import Store
from npc_nb.store.memories import audit_rows
from tests.audit_flow import decide_sample, plain_cards
from tests.helpers import propose, status_of
from tests.postgres import PostgresServer, lab_project

T0 = dt.datetime(2026, 12, 7, 10, 0, 0)


def project_store(nb: npc_nb.Project) -> Store:
    return nb._memory.stores.project


def an_audit(name: str = "audit-1", **changes: Any) -> dict[str, Any]:
    return {
        "name": name,
        "started_at": T0,
        "started_by": "tester",
        "npc": "analyst",
        "category": None,
        "conversation_id": None,
        "stratify": False,
        "tolerance": 0.05,
        "confidence": 0.95,
        "seed": 7,
        "population": 3,
        "looks": [2, 3],
        "thresholds": [0, 0],
        "nominal_confidence": 0.97,
        "method": "group-sequential, exact hypergeometric",
        **changes,
    }


MEMBERS = [
    {"memory_id": "m-c", "position": 2, "excluded_because": None, "stratum": None},
    {"memory_id": "m-x", "position": None, "excluded_because": "flagged", "stratum": None},
    {"memory_id": "m-a", "position": 0, "excluded_because": None, "stratum": None},
    {"memory_id": "m-b", "position": 1, "excluded_because": None, "stratum": None},
]


def a_step(audit_id: str, minutes: int, step: str = "extend", **changes: Any) -> dict[str, Any]:
    return {
        "audit_id": audit_id,
        "occurred_at": T0 + dt.timedelta(minutes=minutes),
        "actor": "tester",
        "step": step,
        "look": 1,
        "sample": 2,
        "errors": 0,
        "bound": 0.4,
        "batch_id": None,
        **changes,
    }


def round_trip(store: Store) -> None:
    """Write two audits, a batch and three steps; read every one back as written."""
    audit_rows.insert_audit(store, an_audit("audit-2", started_at=T0 + dt.timedelta(1)), [])
    audit_rows.insert_audit(store, an_audit(), MEMBERS)
    audit = audit_rows.find_audit(store, "audit-1")
    assert audit is not None
    assert audit_rows.find_audit(store, audit["id"]) == audit
    assert audit_rows.find_audit(store, "audit-9") is None
    assert (audit["looks"], audit["thresholds"]) == ([2, 3], [0, 0])
    expected = {k: v for k, v in an_audit().items() if k not in ("looks", "thresholds")}
    assert {k: audit[k] for k in expected} == expected
    assert [a["name"] for a in audit_rows.list_audits(store)] == ["audit-1", "audit-2"]
    members = audit_rows.audit_members(store, audit["id"])
    assert [m["memory_id"] for m in members] == ["m-a", "m-b", "m-c", "m-x"]
    assert members[-1]["excluded_because"] == "flagged" and members[-1]["position"] is None
    assert {m["audit_id"] for m in members} == {audit["id"]}
    other = audit_rows.find_audit(store, "audit-2")
    assert other is not None and audit_rows.audit_members(store, other["id"]) == []
    audit_rows.add_audit_step(store, a_step(audit["id"], 9, "approve_rest", batch_id="b-1"))
    audit_rows.add_audit_step(store, a_step(audit["id"], 5))
    audit_rows.add_audit_step(store, a_step(other["id"], 7, "review_rest", bound=None))
    steps = audit_rows.audit_steps(store, audit["id"])
    assert [(s["step"], s["batch_id"]) for s in steps] == [
        ("extend", None), ("approve_rest", "b-1")
    ]  # fmt: skip
    assert [s["step"] for s in audit_rows.audit_steps(store)] == [
        "extend", "review_rest", "approve_rest"
    ]  # fmt: skip


def test_an_audit_its_batch_and_its_steps_round_trip_on_duckdb(nb: npc_nb.Project) -> None:
    round_trip(project_store(nb))


def test_an_audit_and_its_batch_are_written_together_or_not_at_all(nb: npc_nb.Project) -> None:
    store = project_store(nb)
    twice = [MEMBERS[0], MEMBERS[0]]  # the same card twice: the batch's key refuses it
    with pytest.raises(Exception, match="(?i)duplicate|constraint"):
        audit_rows.insert_audit(store, an_audit(), twice)
    assert audit_rows.list_audits(store) == []


# -- PostgreSQL: the same rows, append-only for every role ------------------------------

SCHEMA = "npc_alpha"


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """An owner, a reviewer and a reader of project 'alpha', unique to this test, each
    granted their level by the owner; their URLs, the superuser's and the folder."""
    return lab_project(
        postgres_server,
        postgres_url,
        tmp_path / "alpha",
        {"reviewer": "reviewer", "reader": "reader"},
    )


def open_as(lab: dict[str, str], kind: str) -> npc_nb.Project:
    return npc_nb.open(lab["folder"], store=lab[kind], reviewer=kind)


def test_an_audit_its_batch_and_its_steps_round_trip_on_postgresql(
    lab: dict[str, str],
) -> None:
    owner = open_as(lab, "owner")
    try:
        round_trip(project_store(owner))
    finally:
        owner.close()


def server_rows(url: str, table: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as con:
        return sorted(con.execute(f"SELECT * FROM {SCHEMA}.{table}").fetchall(), key=repr)


def refused(url: str, statement: str) -> bool:
    """Whether the server refuses ``statement`` from the role of ``url`` for want of a
    privilege (the append-only trigger says so too)."""
    try:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(statement)
    except psycopg.errors.InsufficientPrivilege:
        return True
    return False


CHANGES = {
    "audits": "UPDATE {t} SET method = 'changed'",
    "audit_members": "UPDATE {t} SET position = 0",
    "audit_steps": "UPDATE {t} SET errors = 0",
}


def test_on_postgresql_no_role_changes_deletes_or_truncates_an_audits_rows(
    lab: dict[str, str],
) -> None:
    owner = open_as(lab, "owner")
    try:
        store = project_store(owner)
        audit_rows.insert_audit(store, an_audit(), MEMBERS)
        audit = audit_rows.find_audit(store, "audit-1")
        assert audit is not None
        audit_rows.add_audit_step(store, a_step(audit["id"], 5, errors=1))
    finally:
        owner.close()
    before = {table: server_rows(lab["superuser"], table) for table in CHANGES}
    assert all(before.values())
    outcomes = {
        (kind, table, verb): refused(lab[kind], statement.format(t=f"{SCHEMA}.{table}"))
        for kind in ("superuser", "owner", "reviewer", "reader")
        for table, change in CHANGES.items()
        for verb, statement in (
            ("UPDATE", change), ("DELETE", "DELETE FROM {t}"), ("TRUNCATE", "TRUNCATE {t}")
        )
    }  # fmt: skip
    assert len(outcomes) == 36
    assert [key for key, was_refused in outcomes.items() if not was_refused] == []
    assert {table: server_rows(lab["superuser"], table) for table in CHANGES} == before


def test_on_postgresql_a_reviewer_records_a_step_under_its_own_role(lab: dict[str, str]) -> None:
    owner = open_as(lab, "owner")
    try:
        audit_rows.insert_audit(project_store(owner), an_audit(), MEMBERS)
    finally:
        owner.close()
    reviewer = open_as(lab, "reviewer")
    try:
        store = project_store(reviewer)
        audit = audit_rows.find_audit(store, "audit-1")
        assert audit is not None and len(audit_rows.audit_members(store, audit["id"])) == 4
        audit_rows.add_audit_step(store, a_step(audit["id"], 5, "sign_off", actor="reviewer"))
        (step,) = audit_rows.audit_steps(store, audit["id"])
        assert (step["step"], step["reviewer_role"]) == ("sign_off", lab["reviewer_role"])
        forged = a_step(audit["id"], 6, "sign_off", reviewer_role=lab["owner_role"])
        with pytest.raises(Exception, match="recorded under the connected role"):
            audit_rows.add_audit_step(store, forged)
    finally:
        reviewer.close()
    inserting = f"INSERT INTO {SCHEMA}.audit_steps (id, audit_id, occurred_at, actor, step, "
    inserting += "look, sample, errors) VALUES ('s', 'a', now(), 'r', 'extend', 1, 2, 0)"
    assert refused(lab["reader"], inserting)
    assert len(server_rows(lab["superuser"], "audit_steps")) == 1


def test_on_postgresql_a_reviewer_granted_before_step_0002_may_record_audits(
    lab: dict[str, str],
) -> None:
    """A project at step 0001 whose owner granted a reviewer: once the owner's npc_nb
    brings it to 0002, the reviewer reads and writes the new tables, as the grant says
    of every table a later step adds."""
    with psycopg.connect(lab["superuser"], autocommit=True) as con:  # the project at 0001
        con.execute(f"DROP TABLE {SCHEMA}.audits, {SCHEMA}.audit_members, {SCHEMA}.audit_steps")
        con.execute(f"DELETE FROM {SCHEMA}._migrations WHERE name = '0002'")
    gc.collect()  # the fixture's store (held by a reference cycle) opens no more
    owner = open_as(lab, "owner")
    assert owner.memories().empty  # the owner's first read applies step 0002
    owner.close()
    reviewer = open_as(lab, "reviewer")
    try:
        store = project_store(reviewer)
        audit_rows.insert_audit(store, an_audit(), MEMBERS)
        audit = audit_rows.find_audit(store, "audit-1")
        assert audit is not None and audit["reviewer_role"] == lab["reviewer_role"]
        audit_rows.add_audit_step(store, a_step(audit["id"], 5))
        assert [s["step"] for s in audit_rows.audit_steps(store)] == ["extend"]
    finally:
        reviewer.close()
    with psycopg.connect(lab["superuser"], autocommit=True) as con:
        steps = con.execute(f"SELECT name FROM {SCHEMA}._migrations ORDER BY name").fetchall()
    assert steps == [("0001",), ("0002",)]


def test_on_postgresql_a_member_a_reviewer_adds_later_is_never_batch_approved(
    lab: dict[str, str],
) -> None:
    """A reviewer role may insert into audit_members (it starts audits), so it can add a
    card proposed after the audit began to its batch, at the end of the seeded order:
    the audit must see its batch no longer matches its record and refuse the rest."""
    owner = open_as(lab, "owner")
    try:
        plain_cards(owner, 20)
        audit = owner.audit(tolerance=0.2, looks=1)
        late = propose(owner, "The interim analysis is scheduled for March")
        population = audit.result().population
        with psycopg.connect(lab["reviewer"], autocommit=True) as con:
            con.execute(
                f"INSERT INTO {SCHEMA}.audit_members (audit_id, memory_id, position) "
                "VALUES (%s, %s, %s)",
                (audit.id, late, population),
            )
        decide_sample(owner, audit)
        with pytest.raises(npc_nb.AuditError, match="batch was changed"):
            audit.approve_rest(by="owner")
        assert status_of(owner, late) == "pending_approval"
        assert owner.decisions().query("action == 'approve_all'").empty
    finally:
        owner.close()


def test_on_postgresql_a_forged_approve_rest_step_does_not_close_the_audit(
    lab: dict[str, str],
) -> None:
    """A reviewer role may insert audit steps (it signs off, extends): pointing an
    approve_rest step at an ordinary approve-all batch must not make the audit read as
    approved, nor stop its rest from being approved."""
    owner = open_as(lab, "owner")
    try:
        plain_cards(owner, 20)
        others = plain_cards(owner, 3, npc="critic")
        audit = owner.audit(npc="analyst", tolerance=0.2, looks=1)
        ordinary = owner.approve_all(preview=owner.preview_approve_all(npc="critic"))
        assert sorted(ordinary.memory_ids) == sorted(others)
        with psycopg.connect(lab["reviewer"], autocommit=True) as con:
            con.execute(
                f"INSERT INTO {SCHEMA}.audit_steps (id, audit_id, occurred_at, actor, step, "
                "look, sample, errors, batch_id) VALUES ('forged', %s, now(), 'reviewer', "
                "'approve_rest', 1, 0, 0, %s)",
                (audit.id, ordinary.batch_id),
            )
        assert audit.result().status == "reviewing"
        decide_sample(owner, audit)
        batch = audit.approve_rest(by="owner")
        assert audit.result().approved == len(batch.memory_ids) > 0
    finally:
        owner.close()
