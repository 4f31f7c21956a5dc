"""The audited batches' rows (``store.memories.audit_rows``) on both backends: an audit
and its frozen batch written together and read back as written, its steps logged in
order; on PostgreSQL every role is refused UPDATE, DELETE and TRUNCATE on the three
tables, and a reviewer role may record a step (under its own role)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

import npc_nb
from npc_nb.store.contract import Store
from npc_nb.store.memories import audit_rows

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
