"""Importing npcpy's memories keeps its decisions, audited as imported.

tests/data/npcpy/lab/.knowledge.yaml was written by npcpy 2.1.25's own KnowledgeStore
(tests/data/npcpy/generate_with_npcpy.py): one memory of each status, and repeats of
the rejected and the pending one. tests/data/npcpy/memory_lifecycle.db is an older
npcpy's SQLite table, built from its documented columns (tests/data/make_fixtures.py).
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

import npc_nb
from tests.interop_projects import DATA, imports

#: When the copied knowledge file was last written: the time its decisions are given.
FILE_TIME = datetime(2027, 1, 15, 9, 30)


@pytest.fixture
def knowledge(tmp_path: Path) -> Path:
    """A copy of npcpy's file, last written at ``FILE_TIME``."""
    folder = tmp_path / "npcpy-project"
    shutil.copytree(DATA / "npcpy" / "lab", folder)
    stamp = FILE_TIME.replace(tzinfo=UTC).timestamp()
    os.utime(folder / ".knowledge.yaml", (stamp, stamp))
    return folder


def by_text(nb: npc_nb.Project) -> dict[str, dict]:
    return {row["final_text"]: row for row in nb.memories().to_dict(orient="records")}


def test_npcpy_statuses_map_one_to_one(nb: npc_nb.Project, knowledge: Path) -> None:
    summary = nb.imports.npcpy(knowledge)
    assert summary.read == 8 and not summary.skipped
    assert dict(summary.imported) == {
        "human-approved": 1,
        "human-edited": 1,
        "human-rejected": 1,
        "pending_approval": 3,
    }
    assert (summary.merged, summary.suppressed) == (1, 1)  # the repeats went through the matcher
    memories = by_text(nb)
    assert memories["The lab uses DuckDB for the analysis store"]["status"] == "human-approved"
    assert memories["The user wants weekly email summaries"]["status"] == "human-rejected"
    assert memories["The pilot study has 120 participants"]["status"] == "pending_approval"
    assert memories["The pilot study has 120 participants"]["scope"] == "project"
    assert memories["Every figure uses the lab's colour palette"]["scope"] == "team"
    assert memories["Interviews are transcribed by Omar"]["npc"] == "analyst"


def test_a_rejected_npcpy_memory_is_a_tombstone(nb: npc_nb.Project, knowledge: Path) -> None:
    nb.imports.npcpy(knowledge)
    again = nb.add_candidate(
        "The user wants weekly email summaries", category="fact", npc="analyst"
    )
    assert again.action == "suppressed" and again.matched_status == "human-rejected"
    assert "weekly email" not in nb.context("analyst")


def test_an_edited_npcpy_memory_keeps_both_texts(nb: npc_nb.Project, knowledge: Path) -> None:
    nb.imports.npcpy(knowledge)
    edited = by_text(nb)["The deadline is on 3 May 2026"]
    assert edited["initial_text"] == "The deadline is in May"
    assert edited["status"] == "human-edited"
    assert "The deadline is on 3 May 2026" in nb.context("analyst")
    assert "The lab uses DuckDB for the analysis store" in nb.context("analyst")


def test_pending_npcpy_memories_wait_in_the_queue(nb: npc_nb.Project, knowledge: Path) -> None:
    nb.imports.npcpy(knowledge)
    queued = set(nb.review_queue()["final_text"])
    assert queued == {
        "Interviews are transcribed by Omar",
        "Every figure uses the lab's colour palette",
        "The pilot study has 120 participants",
    }
    card = nb.memories().set_index("final_text").loc["Interviews are transcribed by Omar", "id"]
    repeats = nb.reproposals()
    assert (repeats["memory_id"] == card).sum() == 1  # its repeat, merged into its card


def test_npcpy_decisions_are_audited_as_imported_at_the_file_time(
    nb: npc_nb.Project, knowledge: Path
) -> None:
    nb.imports.npcpy(knowledge)
    events = nb.decisions()
    decided = events[events["action"] != "propose"]
    assert set(decided["reviewer"]) == {"imported:npcpy"}
    assert set(decided["action"]) == {"approve", "edit", "reject"}
    assert (decided["occurred_at"] == FILE_TIME).all()
    assert decided["reason"].str.contains("the original reviewer is unknown").all()
    proposed = events[events["action"] == "propose"].set_index("text_after")
    created = proposed.loc["The lab uses DuckDB for the analysis store", "occurred_at"]
    assert created.year == 2026 and created < FILE_TIME  # the memory keeps npcpy's own time
    rates = nb.metrics.approval_rate()
    assert int(rates["approved"].sum()) == 2  # approved and edited count as approvals


def test_importing_the_same_file_again_imports_nothing_new(
    nb: npc_nb.Project, knowledge: Path
) -> None:
    nb.imports.npcpy(knowledge / ".knowledge.yaml")
    memories, events = len(nb.memories()), len(nb.decisions())
    again = nb.imports.npcpy(knowledge)
    assert again.already_imported == 8 and sum(again.imported.values()) == 0
    assert (len(nb.memories()), len(nb.decisions())) == (memories, events)
    assert "already imported before: 8" in str(again)


def test_the_provenance_of_each_record_is_kept(nb: npc_nb.Project, knowledge: Path) -> None:
    nb.imports.npcpy(knowledge)
    imported = imports(nb)
    assert len(imported) == 8 and set(imported["source"]) == {"npcpy"}
    assert imported["source_key"].is_unique
    edited = imported[imported["outcome"] == "edited"].iloc[0]
    assert '"message_id": "msg-2"' in edited["details"]
    assert '"conversation_id": "conv-1"' in edited["details"]
    assert edited["source_file"].endswith(".knowledge.yaml")


def test_an_older_npcpy_memory_lifecycle_table_imports_the_same_way(nb: npc_nb.Project) -> None:
    summary = nb.imports.npcpy(DATA / "npcpy" / "memory_lifecycle.db")
    assert dict(summary.imported) == {
        "human-approved": 1,
        "human-edited": 1,
        "human-rejected": 1,
        "pending_approval": 1,
    }
    memories = by_text(nb)
    assert (
        memories["Tests run on Python 3.11 and 3.12"]["initial_text"] == "Tests run on Python 3.10"
    )
    assert memories["We deploy with Docker Compose"]["status"] == "human-approved"
    assert memories["We deploy with Docker Compose"]["npc"] == "coder"
    assert nb.imports.npcpy(DATA / "npcpy" / "memory_lifecycle.db").already_imported == 4


def test_a_folder_without_a_knowledge_file_is_a_clear_error(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    with pytest.raises(npc_nb.ConfigError, match="No npcpy knowledge file at"):
        nb.imports.npcpy(tmp_path)


def test_the_summary_renders_itself(nb: npc_nb.Project, knowledge: Path) -> None:
    summary = nb.imports.npcpy(knowledge)
    shown = summary._repr_mimebundle_()
    assert (
        "imported: 6 (1 human-approved, 1 human-edited, 1 human-rejected, 3 pending_approval)"
        in shown["text/plain"]
    )
    assert shown["text/html"].startswith("<pre>")
