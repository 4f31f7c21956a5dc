"""Shared fixtures: every test gets its own project folder and its own user store.

Nothing a test does may touch the real ``~/.npc_nb`` or the developer's settings.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import npc_nb

# Real DuckDB files under a noisy 2-core machine: time limits would only add flakiness.
settings.register_profile(
    "npc_nb", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("npc_nb")


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith("NPC_NB_"):
            monkeypatch.delenv(key)
    home = tmp_path / "user-home"
    monkeypatch.setenv("NPC_NB_HOME", str(home))
    monkeypatch.setenv("NPC_NB_REVIEWER", "tester")
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return folder


@pytest.fixture
def nb(project_dir: Path) -> npc_nb.Project:
    project = npc_nb.open(project_dir)
    yield project
    project.close()


def propose(nb: npc_nb.Project, text: str, **fields: object) -> str:
    """Queue a candidate and return its id (fails the test if it was not queued)."""
    fields.setdefault("category", "fact")
    fields.setdefault("npc", "analyst")
    outcome = nb.add_candidate(text, **fields)
    assert outcome.action == "queued", outcome
    return outcome.memory_id


def status_of(nb: npc_nb.Project, memory_id: str) -> str:
    frame = nb.memories()
    return frame.loc[frame["id"] == memory_id, "status"].item()
