"""``npc_nb.import_bundle(path, folder, create=True)`` imports into ``folder``'s own store
file whatever store the session's settings name (the environment, ``.env``, the config
file), unless ``store=`` is passed to it; and when it refuses, it leaves no folder and no
``.npc_nb/`` behind."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from tests.helpers import propose
from tests.test_pg_projects import schemas

#: A shared store nobody listens on: a session configured with it must never be asked.
ELSEWHERE = "postgresql://nobody@127.0.0.1:9/elsewhere"


def _bundle(nb: npc_nb.Project, tmp_path: Path) -> Path:
    nb.approve(propose(nb, "We store the survey data in DuckDB"), by="ada")
    return nb.export_bundle(tmp_path / "b.zip")


def _name_another_store(where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings that name a shared store and project, from one of their sources."""
    if where == "environment":
        monkeypatch.setenv("NPC_NB_STORE", ELSEWHERE)
        monkeypatch.setenv("NPC_NB_PROJECT", "theirs")
    elif where == ".env":  # in the working directory (the test's tmp_path)
        (tmp_path / ".env").write_text(f"NPC_NB_STORE={ELSEWHERE}\nNPC_NB_PROJECT=theirs\n")
    else:
        config = tmp_path / "config.toml"
        config.write_text(f'store = "{ELSEWHERE}"\nproject = "theirs"\n')
        monkeypatch.setenv("NPC_NB_CONFIG_FILE", str(config))


def _settings_named_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NPC_NB_STORE", "NPC_NB_PROJECT", "NPC_NB_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").unlink(missing_ok=True)


@pytest.mark.parametrize("where", ["environment", ".env", "config file"])
def test_import_bundle_fills_the_folder_it_names_whatever_store_the_settings_name(
    nb: npc_nb.Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    bundle = _bundle(nb, tmp_path)
    _name_another_store(where, tmp_path, monkeypatch)
    result = npc_nb.import_bundle(bundle, tmp_path / "copy", create=True)
    assert result.inserted["memories"] == 1
    assert (tmp_path / "copy" / ".npc_nb" / "memory.duckdb").is_file()
    _settings_named_nothing(tmp_path, monkeypatch)
    copy = npc_nb.open(tmp_path / "copy")
    assert copy.memories(status="approved")["final_text"].tolist() == [
        "We store the survey data in DuckDB"
    ]
    copy.close()


def test_a_refused_import_leaves_no_folder_and_no_store_behind(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"not a bundle")
    with pytest.raises(npc_nb.NpcError):
        npc_nb.import_bundle(damaged, tmp_path / "new", create=True)
    assert not (tmp_path / "new").exists()
    (tmp_path / "existing").mkdir()
    with pytest.raises(npc_nb.NpcError):
        npc_nb.import_bundle(damaged, tmp_path / "existing", create=True)
    assert list((tmp_path / "existing").iterdir()) == []
    with pytest.raises(npc_nb.NpcError):
        npc_nb.import_bundle(tmp_path / "missing.zip", tmp_path / "new", create=True)
    assert not (tmp_path / "new").exists()


def test_a_store_passed_to_import_bundle_is_still_the_one_used(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    bundle = _bundle(nb, tmp_path)
    with pytest.raises(npc_nb.StoreError, match="127.0.0.1"):
        npc_nb.import_bundle(bundle, tmp_path / "copy", create=True, store=ELSEWHERE)
    assert not (tmp_path / "copy").exists()


def test_a_postgresql_project_in_the_settings_is_left_alone(
    nb: npc_nb.Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    """The issue's kernel: its settings name a lab project on a reachable server."""
    bundle = _bundle(nb, tmp_path)
    before = schemas(postgres_url)
    monkeypatch.setenv("NPC_NB_STORE", postgres_url)
    monkeypatch.setenv("NPC_NB_PROJECT", "lab")
    npc_nb.import_bundle(bundle, tmp_path / "copy", create=True)
    assert schemas(postgres_url) == before  # no schema made, nothing written there
    assert (tmp_path / "copy" / ".npc_nb" / "memory.duckdb").is_file()
