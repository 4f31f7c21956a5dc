"""The bundle: every table out in one versioned file, and back in losslessly.

Exported, imported into an empty project and exported again, a project gives the same
checksums, table by table, and the imported project shows the same context to every
persona, the same metrics and the same audit log. A bundle goes only into an empty
project, unless merged (duplicates by id skipped and counted); an old bundle version
stays loadable (a committed fixture); a table of the schema is either in the bundle or
on the documented list of those left behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from npc_nb.store.bundle.tables import EXCLUDED
from tests.helpers import as_reviewer, propose, status_of
from tests.interop_projects import (
    DATA,
    assert_shows_the_same,
    checksums,
    fill_every_kind,
    manifest,
    what_it_shows,
)

BUNDLE_V1 = DATA / "bundle-v1.zip"


@pytest.fixture
def rich(nb: npc_nb.Project) -> npc_nb.Project:
    fill_every_kind(nb)
    return nb


def test_export_import_export_is_the_identity(rich: npc_nb.Project, tmp_path: Path) -> None:
    first = rich.export_bundle(tmp_path / "first.zip")
    result = npc_nb.import_bundle(first, tmp_path / "copy", create=True)
    assert result.duplicates == 0 and result.inserted["memories"] == len(rich.memories())
    copy = npc_nb.open(tmp_path / "copy")
    second = copy.export_bundle(tmp_path / "second.zip")
    assert checksums(second) == checksums(first)
    rows = {name: count for name, (count, _) in checksums(first).items()}
    for table in ("memories", "memory_events", "reproposals", "match_labels", "conversations",
                  "messages", "context_injections", "extraction_jobs", "concept_extractions",
                  "memory_concepts", "concept_relations", "imported_records"):  # fmt: skip
        assert rows[table] > 0, f"the project has no {table} row to carry"
    assert_shows_the_same(what_it_shows(rich), what_it_shows(copy))
    copy.close()


def test_the_imported_project_carries_on_where_the_export_left_off(
    rich: npc_nb.Project, tmp_path: Path
) -> None:
    """Sequences continue after the imported rows; caches and the matcher see them."""
    npc_nb.import_bundle(rich.export_bundle(tmp_path / "b.zip"), tmp_path / "copy", create=True)
    copy = npc_nb.open(tmp_path / "copy")
    suppressed = copy.add_candidate(
        "The user wants weekly email summaries", category="fact", npc="analyst"
    )
    assert suppressed.action == "suppressed"  # the tombstone travelled
    fresh = propose(copy, "A new fact after the import")
    as_reviewer(copy, "ada").approve(fresh)
    seqs = copy.decisions()["seq"].tolist()
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert "A new fact after the import" in copy.context("analyst")
    as_reviewer(copy, "ada").undo()
    assert status_of(copy, fresh) == "pending_approval"
    copy.close()


def test_a_bundle_goes_only_into_an_empty_project(rich: npc_nb.Project, tmp_path: Path) -> None:
    bundle = rich.export_bundle(tmp_path / "b.zip")
    other = npc_nb.open(tmp_path / "other", create=True)
    propose(other, "Something already here")
    before = len(other.memories())
    with pytest.raises(npc_nb.StoreError, match=r"is not empty \(1 memories, 1 memory_events\)"):
        npc_nb.import_bundle(bundle, tmp_path / "other")
    assert len(other.memories()) == before
    other.close()


def test_into_nonempty_merges_keeping_ids_and_counting_duplicates(
    rich: npc_nb.Project, tmp_path: Path
) -> None:
    bundle = rich.export_bundle(tmp_path / "b.zip")
    npc_nb.import_bundle(bundle, tmp_path / "copy", create=True)
    copy = npc_nb.open(tmp_path / "copy")
    extra = propose(copy, "Only in the copy")
    as_reviewer(copy, "ada").approve(extra)
    again = npc_nb.import_bundle(bundle, tmp_path / "copy", into_nonempty=True)
    assert sum(again.inserted.values()) == 0
    assert again.duplicates == sum(rows for rows, _ in checksums(bundle).values())
    assert f"({len(rich.memories())} already there)" in str(again)
    # merged into a project with rows of its own: the bundle's ids, events renumbered
    merged = npc_nb.import_bundle(bundle, tmp_path / "third", create=True)
    assert merged.duplicates == 0
    third = npc_nb.open(tmp_path / "third")
    ours = propose(third, "Only in the third project")
    as_reviewer(third, "grace").reject(ours)
    result = npc_nb.import_bundle(
        copy.export_bundle(tmp_path / "copy.zip"), tmp_path / "third", into_nonempty=True
    )
    assert result.inserted["memories"] == 1  # "Only in the copy"
    assert result.skipped["memories"] == len(rich.memories())
    assert set(rich.memories()["id"]) | {extra, ours} == set(third.memories()["id"])
    events = third.decisions()
    assert events["seq"].is_unique
    assert status_of(third, extra) == "human-approved"
    undone = events[events["action"] == "undo"]
    assert set(undone["undoes"]) <= set(events["seq"])  # an undo names its event's new number
    third.close()
    copy.close()


def test_every_table_travels_or_is_listed_as_left_behind(
    rich: npc_nb.Project, tmp_path: Path
) -> None:
    bundled = set(manifest(rich.export_bundle(tmp_path / "b.zip"))["tables"])
    schema = set(
        rich.sql(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema = 'main'"
        )["table_name"]
    )
    assert bundled | (set(EXCLUDED) & schema) == schema, "a table neither bundled nor excluded"
    assert not bundled & set(EXCLUDED)
    page = (Path(__file__).resolve().parents[1] / "docs" / "bundle.md").read_text()
    assert all(f"`{table}`" in page for table in EXCLUDED), "docs/bundle.md lists each exclusion"


def test_the_manifest_says_what_the_bundle_is(rich: npc_nb.Project, tmp_path: Path) -> None:
    found = manifest(rich.export_bundle(tmp_path / "b.zip"))
    assert found["format"] == "npc_nb-bundle" and found["format_version"] == 1
    assert found["project"] == rich.name and found["npc_nb_version"]
    assert found["migrations"] == ["0001", "0002"] and found["created_at"].endswith("Z")
    memories = found["tables"]["memories"]
    assert memories["rows"] == len(rich.memories()) and len(memories["sha256"]) == 64
    assert ["status", "VARCHAR"] in memories["columns"]
    assert ["flags", "VARCHAR[]"] in memories["columns"]


def test_a_bundle_of_the_first_version_stays_loadable(tmp_path: Path) -> None:
    """tests/data/bundle-v1.zip was written by the first bundle version
    (tests/data/make_bundle_v1.py); every later npc_nb must load it."""
    result = npc_nb.import_bundle(BUNDLE_V1, tmp_path / "old", create=True)
    assert result.format_version == 1
    old = npc_nb.open(tmp_path / "old")
    memories = old.memories().set_index("final_text")
    assert memories.loc["The field season starts on 1 April", "status"] == "human-edited"
    assert memories.loc["The field season starts on 1 April", "initial_text"] == (
        "The field season starts in April"
    )
    assert memories.loc["The user wants weekly email summaries", "status"] == "human-rejected"
    assert "The lab stores ringing data in DuckDB" in old.context("analyst")
    actions = old.decisions()["action"].tolist()
    assert {"propose", "approve", "edit", "reject", "undo"} <= set(actions)
    if not result.upgraded:  # written at today's schema: the identity holds byte for byte
        assert checksums(old.export_bundle(tmp_path / "again.zip")) == checksums(BUNDLE_V1)
    suppressed = old.add_candidate(
        "The user wants weekly email summaries", category="fact", npc="analyst"
    )
    assert suppressed.action == "suppressed"
    old.close()


def test_the_bundle_is_written_whole_and_private(rich: npc_nb.Project, tmp_path: Path) -> None:
    target = rich.export_bundle(tmp_path / "out" / "b.zip")
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["b.zip"]  # no partial file left


def test_a_bundle_path_that_cannot_be_written_is_a_clear_error(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    with pytest.raises(npc_nb.ConfigError, match="it is a folder"):
        nb.export_bundle(tmp_path)


def test_the_bundle_carries_global_memories_no_more_than_a_move(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    """Global memories live in the user's own store, not the project's: the bundle is
    the project's (docs/bundle.md)."""
    shared = propose(nb, "The user is called Ada", npc=None, scope="global")
    as_reviewer(nb, "ada").approve(shared)
    propose(nb, "A project memory")
    found = manifest(nb.export_bundle(tmp_path / "b.zip"))
    assert found["tables"]["memories"]["rows"] == 1


def test_an_import_prints_what_it_wrote(rich: npc_nb.Project, tmp_path: Path) -> None:
    bundle = rich.export_bundle(tmp_path / "b.zip")
    result = npc_nb.import_bundle(bundle, tmp_path / "copy", create=True)
    shown = result._repr_mimebundle_()
    assert "memories" in shown["text/plain"] and "<pre>" in shown["text/html"]
    assert str(len(rich.memories())) in str(result)


def test_a_bundle_moved_elsewhere_still_imports(rich: npc_nb.Project, tmp_path: Path) -> None:
    bundle = rich.export_bundle(tmp_path / "b.zip")
    moved = tmp_path / "elsewhere" / "copy of b.zip"
    moved.parent.mkdir()
    shutil.copy(bundle, moved)
    result = npc_nb.import_bundle(str(moved), tmp_path / "copy", create=True)
    assert result.inserted["memories"] == len(rich.memories())


def test_a_new_folder_inside_a_project_becomes_a_project_of_its_own(
    rich: npc_nb.Project, project_dir: Path
) -> None:
    """import_bundle(create=True) into a folder that does not exist yet, inside this
    project's folder, makes that folder a new project: it never merges into the
    project around it."""
    bundle = rich.export_bundle(project_dir / "lab.zip")
    before = len(rich.memories())
    result = npc_nb.import_bundle(bundle, project_dir / "copy", create=True)
    assert result.inserted["memories"] == before == len(rich.memories())
    inner = npc_nb.open(project_dir / "copy")
    assert inner.root == project_dir / "copy" and len(inner.memories()) == before
    inner.close()


# -- snapshots in a merge -------------------------------------------------------------


def _history_with_a_snapshot(nb: npc_nb.Project) -> dict[str, str]:
    """Decisions, a snapshot 'before-merge' between them, and later decisions."""
    ids = {
        "kept": propose(nb, "The field season starts in April"),
        "edited": propose(nb, "The ringing dataset is due Friday"),
        "shared": propose(nb, "Station codes are written in upper case", scope="project"),
        "global": propose(nb, "The user's name is Ada", scope="global", npc=None),
        "later": propose(nb, "Plot counts on a log scale"),
    }
    for name in ("kept", "edited", "shared", "global"):
        nb.approve(ids[name])
    nb.snapshot("before-merge")
    nb.edit(ids["edited"], "The ringing dataset is due Monday")
    nb.approve(ids["later"])
    nb.reject(ids["kept"])
    nb.undo()
    nb.reject(ids["shared"])
    return ids


def _busy_project(folder: Path) -> npc_nb.Project:
    """A project whose own audit log outnumbers the bundle's, with memories the bundle's
    persona sees now (its own, and the project's)."""
    target = npc_nb.open(folder, create=True)
    texts = ["Herons nest in March", "Rails call at dusk", "Gulls ring in blue",
             "Terns arrive late in May", "Grebes dive for perch"]  # fmt: skip
    for text in texts:
        memory = propose(target, text, scope="project")
        target.approve(memory)
        target.undo()
        target.approve(memory)
    target.approve(propose(target, "The analyst reports in metric units"))
    return target


def test_a_merged_snapshot_reads_exactly_what_it_recorded(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    _history_with_a_snapshot(nb)
    block = nb.context_block("analyst", as_of="before-merge")
    then = nb.memories(status="approved", as_of="before-merge")[["id", "final_text", "scope"]]
    assert len(then) == 4 and "The ringing dataset is due Friday" in block.text
    bundle = nb.export_bundle(tmp_path / "b.zip")
    target = _busy_project(tmp_path / "target")
    assert target.decisions()["seq"].max() > nb.decisions()["seq"].max()
    npc_nb.import_bundle(bundle, tmp_path / "target", into_nonempty=True)
    merged = npc_nb.open(tmp_path / "target")
    again = merged.context_block("analyst", as_of="before-merge")
    assert again.text == block.text and again.hash == block.hash
    read = merged.memories(status="approved", as_of="before-merge")[["id", "final_text", "scope"]]
    pd.testing.assert_frame_equal(
        read.sort_values("id").reset_index(drop=True), then.sort_values("id").reset_index(drop=True)
    )
    (snapshot,) = merged.snapshots().itertuples()
    assert snapshot.hash == nb.snapshots()["hash"].item()
    assert "Herons nest in March" in merged.context("analyst")  # now: both projects' memories
    merged.close()
    target.close()


def test_a_snapshot_a_merge_cannot_place_exactly_is_refused(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    """A second bundle of the same project, merged after the first: its new snapshot
    includes events the first merge already numbered among the target's own."""
    ids = _history_with_a_snapshot(nb)
    first = nb.export_bundle(tmp_path / "first.zip")
    target = _busy_project(tmp_path / "target")
    npc_nb.import_bundle(first, tmp_path / "target", into_nonempty=True)
    nb.approve(ids["shared"], reconsider=True)
    nb.snapshot("second")
    npc_nb.import_bundle(nb.export_bundle(tmp_path / "second.zip"), tmp_path / "target",
                         into_nonempty=True)  # fmt: skip
    merged = npc_nb.open(tmp_path / "target")
    with pytest.raises(npc_nb.StoreError, match="cannot be read exactly in this project"):
        merged.context("analyst", as_of="second")
    with pytest.raises(npc_nb.StoreError, match="second"):
        merged.memories(as_of="second")
    assert "The ringing dataset is due Friday" in merged.context("analyst", as_of="before-merge")
    merged.close()
    target.close()


def test_votes_travel_and_a_card_in_adjudication_stays_out_of_every_prompt(
    project_dir: Path, tmp_path: Path
) -> None:
    """Independent review's votes are rows like any other: a bundle carries them, so the
    copy shows the same votes, the same adjudication queue, and no open card's text."""
    lab = npc_nb.open(project_dir, review_mode="independent")
    agreed = propose(lab, "The lab meets on Mondays")
    as_reviewer(lab, "ada").approve(agreed)
    as_reviewer(lab, "bob").approve(agreed)
    open_card = propose(lab, "We use DuckDB for everything")
    as_reviewer(lab, "ada").approve(open_card)
    as_reviewer(lab, "bob").reject(open_card, reason="not everything")
    first = lab.export_bundle(tmp_path / "first.zip")
    assert checksums(first)["votes"][0] == 4
    npc_nb.import_bundle(first, tmp_path / "copy", create=True)
    copy = npc_nb.open(tmp_path / "copy", review_mode="independent")
    assert checksums(copy.export_bundle(tmp_path / "second.zip")) == checksums(first)
    pd.testing.assert_frame_equal(copy.votes(), lab.votes())
    assert copy.review_queue(adjudicate=True, by="carol")["id"].tolist() == [open_card]
    assert "Mondays" in copy.context("analyst") and "DuckDB" not in copy.context("analyst")
    assert as_reviewer(copy, "carol").approve(open_card).decision == "adjudicate"
    assert "DuckDB" in copy.context("analyst")
    copy.close()
    lab.close()


def test_a_project_with_nothing_in_it_yet_exports_an_empty_bundle(
    project_dir: Path, tmp_path: Path
) -> None:
    """Before its first write a project has no store file: its bundle is the empty
    store's, and exporting it creates nothing in the project."""
    nb = npc_nb.open(project_dir)
    bundle = nb.export_bundle(tmp_path / "empty.zip")
    assert not (project_dir / ".npc_nb" / "memory.duckdb").exists()
    assert {count for count, _ in checksums(bundle).values()} == {0}
    npc_nb.import_bundle(bundle, tmp_path / "copy", create=True)
    copy = npc_nb.open(tmp_path / "copy")
    assert copy.memories().empty and copy.decisions().empty
    copy.close()
    nb.close()
