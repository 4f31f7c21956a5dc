"""Settings: priorities of the sources, and clear errors for unknown keys and bad values.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_config.py (the fast tier).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from npc_nb._foundations.settings import load_settings


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("NPC_NB_CONFIG_FILE", str(path))
    return path


def test_a_mistyped_setting_names_the_closest_one_wherever_it_was_set(
    project_dir: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(
        npc_nb.ConfigError, match=r"unknown setting 'modle' \(did you mean 'model'\?\)"
    ):
        npc_nb.open(project_dir, modle="openai/gpt-4o-mini")
    config_file.write_text("lock_timout = 3\n")
    with pytest.raises(npc_nb.ConfigError, match=r"did you mean 'lock_timeout'\?"):
        load_settings()
    config_file.write_text("")
    monkeypatch.setenv("NPC_NB_REVIEWR", "ada")
    with pytest.raises(
        npc_nb.ConfigError, match=r"NPC_NB_REVIEWR\. Did you mean NPC_NB_REVIEWER\?"
    ):
        load_settings()
    monkeypatch.delenv("NPC_NB_REVIEWR")
    project = npc_nb.open(project_dir)
    try:
        with pytest.raises(npc_nb.ConfigError) as raised:
            project.configure(history_mesages=4)
        assert str(raised.value).startswith(
            "Unknown setting 'history_mesages'. Did you mean 'history_messages'? Known settings: "
        )
        with pytest.raises(npc_nb.ConfigError) as raised:
            project.configure(colour="blue")  # close to no setting: no guess
        assert "Did you mean" not in str(raised.value)
    finally:
        project.close()


def test_a_broken_config_loses_nothing(
    project_dir: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = npc_nb.open(project_dir)
    memory = project.add_candidate("kept", category="fact", npc="a").memory_id
    project.approve(memory)
    project.close()
    config_file.write_text("lock_timeout = 'soon'\n")
    with pytest.raises(npc_nb.InvalidValueError):
        npc_nb.open(project_dir)
    config_file.write_text("")
    assert "kept" in npc_nb.open(project_dir).context("a")
