"""Bundles and imports on a shared PostgreSQL store: the same identity as on a file.

A project with every kind of row, exported from its file, imported into a project on
PostgreSQL and exported from there, gives the same checksums, and the PostgreSQL
project shows the same context, metrics and audit log; a bundle from PostgreSQL goes
back into a file just as well. Refusals and merges behave as on a file, and npcpy's
decisions arrive audited through the shared store's review engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import propose
from tests.interop_projects import (
    DATA,
    assert_shows_the_same,
    checksums,
    fill_every_kind,
    what_it_shows,
)


def test_a_bundle_round_trips_through_postgresql(
    nb: npc_nb.Project, tmp_path: Path, postgres_url: str
) -> None:
    fill_every_kind(nb)
    first = nb.export_bundle(tmp_path / "file.zip")
    shared_dir = tmp_path / "shared"
    result = npc_nb.import_bundle(first, shared_dir, create=True, store=postgres_url)
    assert result.inserted["memories"] == len(nb.memories())
    shared = npc_nb.open(shared_dir, store=postgres_url)
    from_pg = shared.export_bundle(tmp_path / "pg.zip")
    assert checksums(from_pg) == checksums(first)
    assert_shows_the_same(what_it_shows(nb), what_it_shows(shared))
    suppressed = shared.add_candidate(
        "The user wants weekly email summaries", category="fact", npc="analyst"
    )
    assert suppressed.action == "suppressed"  # the tombstone is the shared store's now
    fresh = propose(shared, "Decided on the shared store after the import")
    shared.approve(fresh, by="ada")
    assert shared.decisions()["seq"].is_unique
    shared.close()
    back = npc_nb.import_bundle(from_pg, tmp_path / "back", create=True)
    assert back.duplicates == 0
    copy = npc_nb.open(tmp_path / "back")
    assert checksums(copy.export_bundle(tmp_path / "back.zip")) == checksums(first)
    copy.close()


def test_postgresql_refuses_a_nonempty_project_and_merges_on_request(
    nb: npc_nb.Project, tmp_path: Path, postgres_url: str
) -> None:
    nb.approve(propose(nb, "The lab stores ringing data in DuckDB"), by="ada")
    nb.undo(by="ada")
    nb.approve(propose(nb, "The field season starts in April"), by="ada")
    bundle = nb.export_bundle(tmp_path / "b.zip")
    shared_dir = tmp_path / "shared"
    npc_nb.import_bundle(bundle, shared_dir, create=True, store=postgres_url)
    shared = npc_nb.open(shared_dir, store=postgres_url)
    ours = propose(shared, "Only on the server")
    shared.reject(ours, by="grace")
    with pytest.raises(npc_nb.StoreError, match="is not empty"):
        npc_nb.import_bundle(bundle, shared_dir, store=postgres_url)
    other = tmp_path / "other"
    other_nb = npc_nb.open(other, create=True)
    other_nb.approve(propose(other_nb, "From another machine"), by="linus")
    other_nb.undo(by="linus")
    other_nb.approve(propose(other_nb, "From another machine, approved"), by="linus")
    merged = npc_nb.import_bundle(
        other_nb.export_bundle(tmp_path / "other.zip"), shared_dir, into_nonempty=True,
        store=postgres_url,
    )  # fmt: skip
    assert merged.inserted["memories"] == 2 and merged.duplicates == 0
    events = shared.decisions()
    assert events["seq"].is_unique
    undo = events[events["action"] == "undo"]
    assert set(undo["undoes"]) <= set(events["seq"])
    assert "From another machine, approved" in shared.context("analyst")
    again = npc_nb.import_bundle(bundle, shared_dir, into_nonempty=True, store=postgres_url)
    assert sum(again.inserted.values()) == 0 and again.duplicates > 0
    other_nb.close()
    shared.close()


def test_npcpy_decisions_imported_into_postgresql_are_audited(
    project_dir: Path, postgres_url: str
) -> None:
    shared = npc_nb.open(project_dir, store=postgres_url)
    summary = shared.imports.npcpy(DATA / "npcpy" / "lab")
    assert dict(summary.imported) == {
        "human-approved": 1,
        "human-edited": 1,
        "human-rejected": 1,
        "pending_approval": 3,
    }
    decided = shared.decisions().query("action != 'propose'")
    assert set(decided["reviewer"]) == {"imported:npcpy"}
    assert shared.imports.npcpy(DATA / "npcpy" / "lab").already_imported == 8
    shared.close()
