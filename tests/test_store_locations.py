"""Stores that never mix: the user store is never a project's store, a typo never makes a
new empty store, and store files are private."""

from __future__ import annotations

import io
import stat
import subprocess
from pathlib import Path

import duckdb
import pytest

import npc_nb
from npc_nb._foundations.locations import make_private, make_wal_private, user_home
from npc_nb.cli import main
from tests.helpers import propose


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with the default user store ``~/.npc_nb`` (no NPC_NB_HOME)."""
    folder = tmp_path / "home"
    (folder / ".npc_nb").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("NPC_NB_HOME")
    return folder


def test_a_notebook_folder_under_home_gets_its_own_store_not_the_user_store(home: Path) -> None:
    notebooks = home / "notebooks"
    notebooks.mkdir()
    nb = npc_nb.open(notebooks)
    assert nb.root == notebooks.resolve()
    assert nb.store_path == notebooks.resolve() / ".npc_nb" / "memory.duckdb"
    nb.approve(propose(nb, "Private to the notebooks folder", scope="project", npc=None))
    nb.close()

    other = home / "elsewhere"
    other.mkdir()
    (other / "pyproject.toml").write_text("")
    elsewhere = npc_nb.open(other)
    assert "Private to the notebooks folder" not in elsewhere.context("analyst")
    elsewhere.close()


def test_the_home_folder_itself_is_refused_as_a_project(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(npc_nb.ConfigError, match="user store"):
        npc_nb.open(home)
    monkeypatch.chdir(home)  # JupyterLab started in ~ with no marker
    with pytest.raises(npc_nb.ConfigError, match="open a project folder|Open a project folder"):
        npc_nb.open()
    assert not (home / ".npc_nb" / "memory.duckdb").exists()


def test_a_user_store_set_by_npc_nb_home_is_no_project_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab = tmp_path / "lab"
    (lab / ".npc_nb").mkdir(parents=True)
    monkeypatch.setenv("NPC_NB_HOME", str(lab / ".npc_nb"))
    (lab / "study").mkdir()
    nb = npc_nb.open(lab / "study")
    assert nb.root == (lab / "study").resolve()
    nb.close()
    with pytest.raises(npc_nb.ConfigError):
        npc_nb.open(lab)


def test_a_missing_project_folder_is_an_error_unless_created(tmp_path: Path) -> None:
    missing = tmp_path / "projcet-typo"
    with pytest.raises(npc_nb.ConfigError, match="projcet-typo"):
        npc_nb.open(missing)
    assert not missing.exists()
    nb = npc_nb.open(missing, create=True)
    assert nb.store_path.exists()
    nb.close()


def test_a_project_path_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text("{}")
    with pytest.raises(npc_nb.ConfigError, match="is a file"):
        npc_nb.open(notebook)


def test_the_cli_never_creates_a_store_for_a_mistyped_project(tmp_path: Path) -> None:
    out = io.StringIO()
    status = main(["review", "--project", str(tmp_path / "typo")], io.StringIO(""), out)
    assert status == 2
    assert "typo" in out.getvalue()
    assert not (tmp_path / "typo").exists()


def test_store_folders_and_files_are_private(nb: npc_nb.Project) -> None:
    propose(nb, "a personal fact")
    folder = nb.store_path.parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = [p for p in folder.iterdir() if p.name.startswith("memory.duckdb")]
    assert files
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}
    global_memory = nb.add_candidate("a global fact", category="fact", npc=None, scope="global")
    assert global_memory.queued
    user_folder = user_home()
    assert stat.S_IMODE(user_folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((user_folder / "memory.duckdb").stat().st_mode) == 0o600


def test_an_existing_store_folder_is_made_private_on_open(project_dir: Path) -> None:
    (project_dir / ".npc_nb").mkdir(mode=0o755)
    (project_dir / ".npc_nb").chmod(0o755)
    nb = npc_nb.open(project_dir)
    assert stat.S_IMODE((project_dir / ".npc_nb").stat().st_mode) == 0o700
    nb.close()


def test_a_folder_where_the_store_file_should_be_is_made_0700_never_0600(
    project_dir: Path,
) -> None:
    """Only regular files get a file's mode: a folder in the file's place (or the
    log's) stays a folder its owner can open and move aside."""
    nb = npc_nb.open(project_dir)
    propose(nb, "a personal fact")
    nb.close()
    store = project_dir / ".npc_nb" / "memory.duckdb"
    store.unlink()
    for path in (store, store.with_name("memory.duckdb.wal")):
        path.mkdir(mode=0o755)
        path.chmod(0o755)
    with pytest.raises(npc_nb.StoreError, match="Move it aside"):
        npc_nb.open(project_dir)
    assert stat.S_IMODE(store.stat().st_mode) == 0o700
    assert stat.S_IMODE(store.with_name("memory.duckdb.wal").stat().st_mode) == 0o700


def test_making_a_store_private_never_follows_a_link(project_dir: Path, tmp_path: Path) -> None:
    """The store refuses symlinked paths before it makes anything private; and making
    private itself changes a link's target never, whoever calls it."""
    folder = project_dir / ".npc_nb"
    folder.mkdir(mode=0o700)
    outside = tmp_path / "outside.duckdb"
    outside.write_bytes(b"somebody else's file")
    outside.chmod(0o644)
    (folder / "memory.duckdb").symlink_to(outside)
    (folder / "memory.duckdb.wal").symlink_to(outside)
    with pytest.raises(npc_nb.SymlinkedStoreError):
        npc_nb.open(project_dir)
    make_private(folder)
    make_wal_private(folder)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644
    linked = tmp_path / "linked-store"
    linked.symlink_to(folder, target_is_directory=True)
    folder.chmod(0o755)
    make_private(linked)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_a_relative_home_survives_a_change_of_directory(
    tmp_path: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NPC_NB_HOME", "relative-home")
    nb = npc_nb.open(project_dir)
    nb.approve(propose(nb, "global fact", scope="global", npc=None))
    monkeypatch.chdir(project_dir)
    assert "global fact" in nb.context("analyst")
    assert not (project_dir / "relative-home").exists()
    nb.close()


def test_opening_a_folder_creates_nothing_and_every_read_finds_an_empty_store(
    tmp_path: Path, isolated_home: Path
) -> None:
    folder = tmp_path / "field-notes"
    folder.mkdir()
    nb = npc_nb.open(folder)
    made = npc_nb.open(tmp_path / "made", create=True)  # an empty store that exists
    try:
        for read in ("memories", "decisions", "reproposals", "review_queue"):
            frame, expected = getattr(nb, read)(), getattr(made, read)()
            assert frame.empty
            assert frame.dtypes.to_dict() == expected.dtypes.to_dict(), read
        assert nb.metrics.approval_rate().dtypes.equals(made.metrics.approval_rate().dtypes)
        assert nb.context("analyst") == ""
        assert nb.sql("SELECT count(*) AS n FROM v_memories")["n"].item() == 0
        assert nb.extraction.status() == made.extraction.status()
        assert "0 memory candidate(s)" in str(nb.status())
        exported = nb.exports.tables(tmp_path / "out")
        read = duckdb.execute("SELECT count(*) FROM read_parquet(?)", [str(exported["memories"])])
        assert read.fetchone() == (0,)
        assert nb.preview_approve_all().count == 0 and nb.graph.networkx().number_of_nodes() == 0
        assert list(folder.iterdir()) == []
        assert not isolated_home.exists()  # nor the user store
    finally:
        nb.close()
        made.close()
    assert list(folder.iterdir()) == []


def test_the_first_write_creates_the_store_with_a_gitignore(tmp_path: Path) -> None:
    folder = tmp_path / "field-notes"
    folder.mkdir()
    nb = npc_nb.open(folder)
    memory = propose(nb, "We count birds at dawn")
    assert nb.store_path.exists()
    assert (folder / ".npc_nb" / ".gitignore").read_text().splitlines()[-1] == "*"
    nb.approve(memory)
    assert "We count birds at dawn" in nb.context("analyst")
    nb.close()


def test_create_true_creates_the_store_at_once(tmp_path: Path) -> None:
    existing = tmp_path / "existing"
    existing.mkdir()
    for folder in (existing, tmp_path / "new" / "project"):
        nb = npc_nb.open(folder, create=True)
        assert nb.store_path == folder / ".npc_nb" / "memory.duckdb"
        assert nb.store_path.exists()
        assert (folder / ".npc_nb" / ".gitignore").exists()
        nb.close()


def test_git_add_takes_nothing_from_the_stores(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "analysis.py").write_text("print('hello')\n")
    nb = npc_nb.open(repo)
    nb.approve(propose(nb, "a project fact"))
    nb.approve(propose(nb, "a global fact", scope="global", npc=None))
    nb.chat("analyst", "We decided to use DuckDB.", model="npc_nb/offline")
    nb.extraction.wait()
    nb.close()
    subprocess.run([*git, "add", "."], check=True)
    staged = subprocess.run(
        [*git, "diff", "--cached", "--name-only"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert staged == ["analysis.py"]
    assert (isolated_home / ".gitignore").read_text().splitlines()[-1] == "*"  # the user store


def test_a_store_made_before_the_gitignore_gets_one_on_its_next_write(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    propose(nb, "an early fact")
    nb.close()
    ignore = project_dir / ".npc_nb" / ".gitignore"
    ignore.unlink()
    again = npc_nb.open(project_dir)
    propose(again, "a later fact")
    assert ignore.read_text().splitlines()[-1] == "*"
    again.close()


def test_a_gitignore_of_ones_own_in_the_store_folder_is_kept(project_dir: Path) -> None:
    (project_dir / ".npc_nb").mkdir()
    (project_dir / ".npc_nb" / ".gitignore").write_text("memory.duckdb*\n")
    nb = npc_nb.open(project_dir)
    propose(nb, "a fact")
    nb.close()
    assert (project_dir / ".npc_nb" / ".gitignore").read_text() == "memory.duckdb*\n"
