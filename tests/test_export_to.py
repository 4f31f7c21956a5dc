"""Approved memories out, in each tool's import shape; nothing else leaves this way.

Each export is read back by npc_nb's own importer of that tool, which is how a user
would bring them home again: what comes back is exactly the approved memories (and
from npcpy, with their statuses and both texts of an edit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import npc_nb
from npc_nb.interop.service import TrustedImportWarning
from tests.helpers import propose


@pytest.fixture
def decided(nb: npc_nb.Project) -> npc_nb.Project:
    nb.approve(propose(nb, "The lab stores ringing data in DuckDB"), by="ada")
    nb.edit(propose(nb, "Coffee is at ten", npc="coder"), "Coffee is at half past ten", by="ada")
    nb.approve(
        propose(nb, "Figures use the lab palette", npc=None, team="methods", scope="team"), by="ada"
    )
    nb.approve(propose(nb, "Every dataset gets a DOI", npc=None, scope="project"), by="ada")
    nb.reject(propose(nb, "The user wants weekly email summaries"), by="ada")
    propose(nb, "Interviews are transcribed by Omar")
    return nb


APPROVED = {
    "The lab stores ringing data in DuckDB",
    "Coffee is at half past ten",
    "Figures use the lab palette",
    "Every dataset gets a DOI",
}


def test_mem0_gets_one_add_call_per_approved_memory(
    decided: npc_nb.Project, tmp_path: Path
) -> None:
    path = decided.exports.to("mem0", tmp_path / "mem0.jsonl")
    calls = [json.loads(line) for line in path.read_text().splitlines()]
    assert {call["messages"] for call in calls} == APPROVED
    assert all(call["infer"] is False and call["user_id"] == decided.name for call in calls)
    coffee = next(c for c in calls if c["messages"] == "Coffee is at half past ten")
    assert coffee["agent_id"] == "coder"
    assert coffee["metadata"]["initial_text"] == "Coffee is at ten"
    assert coffee["metadata"]["status"] == "human-edited"
    assert coffee["metadata"]["approved_by"] == "ada"
    team = next(c for c in calls if c["messages"] == "Figures use the lab palette")
    assert "agent_id" not in team and team["metadata"]["team"] == "methods"


def test_letta_gets_an_agent_file_of_each_personas_approved_memories(
    decided: npc_nb.Project, tmp_path: Path
) -> None:
    path = decided.exports.to("letta", tmp_path / "agents.af")
    document = json.loads(path.read_text())
    assert {"agents", "blocks", "groups", "files", "sources", "tools", "mcp_servers"} <= set(
        document
    )
    agents = {agent["name"]: agent for agent in document["agents"]}
    blocks = {block["id"]: block for block in document["blocks"]}
    analyst = blocks[agents["analyst"]["block_ids"][0]]
    assert analyst["label"] == "approved_memories" and analyst["limit"] >= len(analyst["value"])
    assert set(analyst["value"].splitlines()) == {
        "The lab stores ringing data in DuckDB",
        "Every dataset gets a DOI",
    }
    coder = blocks[agents["coder"]["block_ids"][0]]
    assert "Coffee is at half past ten" in coder["value"]
    fresh = npc_nb.open(tmp_path / "fresh", create=True)
    with pytest.warns(TrustedImportWarning):
        fresh.imports.letta(path, trust=True)
    assert "Coffee is at half past ten" in fresh.context("coder")
    fresh.close()


def test_npcpy_gets_a_knowledge_file_it_loads(decided: npc_nb.Project, tmp_path: Path) -> None:
    path = decided.exports.to("npcpy", tmp_path / "npcpy-project")
    assert path == tmp_path / "npcpy-project" / ".knowledge.yaml"
    fresh = npc_nb.open(tmp_path / "fresh", create=True)
    summary = fresh.imports.npcpy(path.parent)
    assert dict(summary.imported) == {"human-approved": 3, "human-edited": 1}
    memories = fresh.memories().set_index("final_text")
    assert set(memories.index) == APPROVED
    assert memories.loc["Coffee is at half past ten", "initial_text"] == "Coffee is at ten"
    assert memories.loc["Figures use the lab palette", "team"] == "methods"
    with pytest.raises(npc_nb.ConfigError, match="does not overwrite npcpy's memories"):
        decided.exports.to("npcpy", path)
    fresh.close()


def test_only_approved_memories_leave(decided: npc_nb.Project, tmp_path: Path) -> None:
    written = {
        kind: decided.exports.to(kind, tmp_path / kind).read_text()
        for kind in ("mem0", "letta", "npcpy")
    }
    for kind, text in written.items():
        assert "weekly email" not in text and "transcribed by Omar" not in text, kind


def test_an_unknown_kind_names_the_known_ones(decided: npc_nb.Project, tmp_path: Path) -> None:
    with pytest.raises(npc_nb.InvalidValueError, match="Use one of: mem0, letta, npcpy"):
        decided.exports.to("graphiti", tmp_path / "x")
