"""Settings: priorities of the sources, and clear errors for unknown keys and bad values."""

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


def test_defaults() -> None:
    settings = load_settings()
    assert settings.context_max_chars == 32_000
    assert settings.model is None


def test_priority_arguments_then_environment_then_toml(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_file.write_text('model = "from-toml"\nlock_timeout = 3\nreviewer = "toml-rev"\n')
    monkeypatch.setenv("NPC_NB_MODEL", "from-env")
    settings = load_settings(lock_timeout=1.5)
    assert (settings.model, settings.lock_timeout, settings.reviewer) == ("from-env", 1.5, "tester")


def test_user_home_config_is_read_without_an_explicit_path(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("context_max_chars = 5000\n")
    assert load_settings().context_max_chars == 5000


def test_unknown_toml_key_is_named(config_file: Path) -> None:
    config_file.write_text("modle = 'gpt'\n")
    with pytest.raises(npc_nb.ConfigError, match="unknown setting 'modle'"):
        load_settings()


def test_unknown_environment_key_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NPC_NB_LOCK_TIMEOUTT", "3")
    with pytest.raises(npc_nb.ConfigError, match="NPC_NB_LOCK_TIMEOUTT"):
        load_settings()


def test_unknown_argument_is_named() -> None:
    with pytest.raises(npc_nb.ConfigError, match="unknown setting 'colour'"):
        npc_nb.open(colour="blue")


@pytest.mark.parametrize(
    ("content", "message", "error"),
    [
        ("lock_timeout = 'soon'\n", "lock_timeout = 'soon'", npc_nb.InvalidValueError),
        ("context_max_chars = -5\n", "context_max_chars = -5", npc_nb.InvalidValueError),
        ("near_duplicate_threshold = 101\n", "near_duplicate_threshold", npc_nb.InvalidValueError),
        ("model = [1, 2\n", "Cannot parse the config file", npc_nb.ConfigError),
    ],
)
def test_broken_toml_value_is_a_clear_error(
    config_file: Path, content: str, message: str, error: type[npc_nb.NpcError]
) -> None:
    config_file.write_text(content)
    with pytest.raises(error, match=message) as caught:
        load_settings()
    assert str(config_file) in str(caught.value)


def test_a_dotenv_with_provider_keys_is_fine(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-test\nNPC_NB_CONTEXT_MAX_CHARS=5000\n")
    assert npc_nb.load_settings().context_max_chars == 5000
    (tmp_path / ".env").write_text("NPC_NB_CONTEXT_MAX_CHAR=5000\n")
    with pytest.raises(npc_nb.ConfigError, match="NPC_NB_CONTEXT_MAX_CHAR"):
        npc_nb.load_settings()


def test_a_lowercase_environment_setting_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npc_nb_lock_timeout", "4")
    assert npc_nb.load_settings().lock_timeout == 4
