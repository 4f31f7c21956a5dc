"""Bundles across schema steps: a bundle written at an older step still imports (it is
staged at its own step, from that step's frozen schema, then brought up the ladder as
an old store is), and what a step adds travels: the audits' tables of step 0002 go out
and come back with the rest, the identity included.

``tests/data/bundle-0001.zip`` was written at step 0001 by the npc_nb of commit
``c3ff801`` (``tests/data/make_bundle_0001.py``).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import zipfile
from pathlib import Path

import pytest

import npc_nb
from npc_nb.errors import StoreError
from npc_nb.store.memories import audit_rows
from tests.helpers import propose
from tests.interop_projects import DATA, checksums, manifest

BUNDLE_0001 = DATA / "bundle-0001.zip"
AUDIT_TABLES = ("audits", "audit_members", "audit_steps")


def test_a_bundle_written_at_step_0001_imports_with_its_memories_intact(tmp_path: Path) -> None:
    assert manifest(BUNDLE_0001)["migrations"] == ["0001"]
    result = npc_nb.import_bundle(BUNDLE_0001, tmp_path / "old", create=True)
    assert result.upgraded == ("0002",)
    old = npc_nb.open(tmp_path / "old")
    memories = old.memories().set_index("final_text")
    assert sorted(memories["status"]) == [
        "human-approved", "human-edited", "human-rejected", "pending_approval"
    ]  # fmt: skip
    assert memories.loc["The field season starts on 1 April", "initial_text"] == (
        "The field season starts in April"
    )
    assert "The lab stores ringing data in DuckDB" in old.context("analyst")
    assert set(old.decisions()["action"]) == {"propose", "approve", "edit", "reject"}
    again = manifest(old.export_bundle(tmp_path / "again.zip"))
    assert again["migrations"] == ["0001", "0002"]
    assert {t: again["tables"][t]["rows"] for t in AUDIT_TABLES} == dict.fromkeys(AUDIT_TABLES, 0)
    rows = checksums(BUNDLE_0001)
    assert {t: c for t, c in checksums(tmp_path / "again.zip").items() if t in rows} == rows
    suppressed = old.add_candidate(
        "The user wants weekly email summaries", category="fact", npc="analyst"
    )
    assert suppressed.action == "suppressed"
    old.close()


def test_a_bundle_written_at_step_0001_imports_into_an_existing_project(
    nb: npc_nb.Project,
) -> None:
    propose(nb, "The lab meets on Mondays")
    result = npc_nb.import_bundle(BUNDLE_0001, nb.root, into_nonempty=True)
    assert result.upgraded == ("0002",) and result.inserted["memories"] == 4
    assert len(nb.memories()) == 5
    assert "The field season starts on 1 April" in nb.context("analyst")


def with_steps(bundle: Path, steps: list[str], out: Path) -> Path:
    """A copy of ``bundle`` whose manifest lists ``steps``."""
    with zipfile.ZipFile(bundle) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "manifest.json":
                data = json.dumps({**json.loads(data), "migrations": steps}).encode()
            target.writestr(item, data)
    return out


def test_a_bundle_whose_steps_are_not_a_start_of_the_ladder_is_refused(
    tmp_path: Path,
) -> None:
    changed = with_steps(BUNDLE_0001, ["0002"], tmp_path / "changed.zip")
    with pytest.raises(StoreError, match="not a start of npc_nb's ladder") as refused:
        npc_nb.import_bundle(changed, tmp_path / "new", create=True)
    assert "Nothing was imported" in str(refused.value)
    assert not (tmp_path / "new" / ".npc_nb" / "memory.duckdb").exists()


def an_audit_with_a_step(nb: npc_nb.Project) -> str:
    """An audit of two cards (one kept out) and its first step, written through the
    store's audit rows; its id."""
    batch, kept_out = propose(nb, "The lab meets on Mondays"), propose(nb, "Omar codes")
    store = nb._memory.stores.project
    started = dt.datetime(2026, 12, 7, 10, 0)
    audit = {
        "name": "audit-1", "started_at": started, "started_by": "tester", "npc": "analyst",
        "category": None, "conversation_id": None, "stratify": False, "tolerance": 0.05,
        "confidence": 0.95, "seed": 3, "population": 1, "looks": [1], "thresholds": [0],
        "nominal_confidence": 0.95, "method": "fixed sample", "reviewer_role": None,
    }  # fmt: skip
    members = [
        {"memory_id": batch, "position": 0},
        {"memory_id": kept_out, "excluded_because": "flagged"},
    ]
    audit_rows.insert_audit(store, audit, members)
    found = audit_rows.find_audit(store, "audit-1")
    assert found is not None
    step = {"audit_id": found["id"], "occurred_at": started + dt.timedelta(minutes=5),
            "actor": "tester", "step": "review_rest", "look": 1, "sample": 1, "errors": 1,
            "bound": 1.0}  # fmt: skip
    audit_rows.add_audit_step(store, step)
    return str(found["id"])


def test_the_audit_tables_travel_in_a_bundle_and_come_back_the_same(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    audit_id = an_audit_with_a_step(nb)
    store = nb._memory.stores.project
    written = (audit_rows.list_audits(store), audit_rows.audit_members(store, audit_id),
               audit_rows.audit_steps(store))  # fmt: skip
    first = nb.export_bundle(tmp_path / "first.zip")
    assert {t: checksums(first)[t][0] for t in AUDIT_TABLES} == {
        "audits": 1, "audit_members": 2, "audit_steps": 1
    }  # fmt: skip
    npc_nb.import_bundle(first, tmp_path / "copy", create=True)
    copy = npc_nb.open(tmp_path / "copy")
    copied = copy._memory.stores.project
    read = (audit_rows.list_audits(copied), audit_rows.audit_members(copied, audit_id),
            audit_rows.audit_steps(copied))  # fmt: skip
    assert read == written
    assert checksums(copy.export_bundle(tmp_path / "second.zip")) == checksums(first)
    copy.close()


def test_a_bundle_imported_twice_keeps_one_copy_of_each_audit_row(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    an_audit_with_a_step(nb)
    bundle = nb.export_bundle(tmp_path / "b.zip")
    shutil.copy(bundle, tmp_path / "again.zip")
    npc_nb.import_bundle(bundle, tmp_path / "copy", create=True)
    result = npc_nb.import_bundle(tmp_path / "again.zip", tmp_path / "copy", into_nonempty=True)
    assert [result.inserted[t] for t in AUDIT_TABLES] == [0, 0, 0] and result.duplicates == 8
    copy = npc_nb.open(tmp_path / "copy")
    assert len(audit_rows.audit_steps(copy._memory.stores.project)) == 1
    copy.close()


def test_a_bundle_written_at_step_0001_imports_into_a_postgresql_store(
    tmp_path: Path, postgres_url: str
) -> None:
    result = npc_nb.import_bundle(BUNDLE_0001, tmp_path / "shared", create=True, store=postgres_url)
    assert result.upgraded == ("0002",) and result.inserted["memories"] == 4
    shared = npc_nb.open(tmp_path / "shared", store=postgres_url)
    assert "The field season starts on 1 April" in shared.context("analyst")
    assert sorted(shared.decisions()["action"]) == [
        "approve", "edit", "propose", "propose", "propose", "propose", "reject"
    ]  # fmt: skip
    assert (
        checksums(shared.export_bundle(tmp_path / "again.zip"))["memories"]
        == (checksums(BUNDLE_0001)["memories"])
    )
    shared.close()
