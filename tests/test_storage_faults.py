"""A full disk, a read-only folder and unreadable settings are clear errors, and nothing
acknowledged is lost.

Sessions and CI run as root, for whom every folder is writable, so the read-only test
runs its child process as the unprivileged ``nobody`` user, and the full-disk test caps
the child's file size with ``RLIMIT_FSIZE`` (with SIGXFSZ ignored, a write past the cap
fails with EFBIG as on a full disk).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

import npc_nb
from npc_nb.cli import main

REPO = Path(__file__).resolve().parents[1]

FULL_DISK = """
import os, resource, signal, sys
import npc_nb
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
nb = npc_nb.open(sys.argv[1])
nb.add_candidate("written before the disk filled", category="fact", npc="analyst")
cap = os.path.getsize(nb.store_path) + 600_000
resource.setrlimit(resource.RLIMIT_FSIZE, (cap, resource.RLIM_INFINITY))
acknowledged = []
for n in range(100_000):
    try:
        outcome = nb.add_candidate(f"memory {n} " + "x" * 300, category="fact", npc="analyst")
    except npc_nb.StoreError as exc:
        print("REFUSED:", exc)
        break
    acknowledged.append(outcome.memory_id)
else:
    raise SystemExit("the cap was never reached")
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
nb.add_candidate("written after space was freed", category="fact", npc="analyst")
print("ACKNOWLEDGED:", " ".join(acknowledged))
"""

READ_ONLY = """
import sys
import npc_nb
nb = npc_nb.open(sys.argv[1])  # opening writes nothing, so it works
print("READ:", len(nb.memories()), "memories")
try:
    nb.add_candidate("a first fact", category="fact", npc="analyst")
except npc_nb.StoreError as exc:
    print("REFUSED:", exc)
"""


def _run(script: str, *args: str, user: str | None = None, home: Path) -> str:
    command = [sys.executable, "-c", textwrap.dedent(script), *args]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *command]
    env = {**os.environ, "NPC_NB_HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=240, cwd=home.parent
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_full_disk_is_a_clear_error_and_loses_nothing_acknowledged(
    project_dir: Path, tmp_path: Path
) -> None:
    output = _run(FULL_DISK, str(project_dir), home=tmp_path / "home")
    refused = next(line for line in output.splitlines() if line.startswith("REFUSED:"))
    assert "Could not write to the store" in refused and "disk full" in refused
    acknowledged = output.split("ACKNOWLEDGED:", 1)[1].split()
    assert len(acknowledged) > 10
    nb = npc_nb.open(project_dir)
    stored = set(nb.memories()["id"])
    assert set(acknowledged) <= stored
    texts = set(nb.memories()["final_text"])
    assert {"written before the disk filled", "written after space was freed"} <= texts
    assert len(nb.decisions()) == len(stored)  # every memory has its proposal event
    nb.close()


@pytest.fixture
def shared_tmp() -> Path:
    """A folder the unprivileged user can reach (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="npc-nb-ro-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_read_only_project_folder_is_a_clear_error(shared_tmp: Path) -> None:
    project = shared_tmp / "project"
    project.mkdir(mode=0o755)
    (project / "pyproject.toml").write_text("")
    home = shared_tmp / "home"
    home.mkdir(mode=0o777)
    home.chmod(0o777)
    user = "nobody" if os.geteuid() == 0 else None
    if user is None:
        project.chmod(0o555)
    output = _run(READ_ONLY, str(project), user=user, home=home)
    assert "READ: 0 memories" in output
    assert "REFUSED: Cannot create the store folder" in output
    assert "Permission denied" in output
    assert not (project / ".npc_nb").exists()


def test_settings_files_that_are_not_utf8_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_bytes(b"NPC_NB_MODEL=caf\xe9\n")
    with pytest.raises(npc_nb.ConfigError, match="not UTF-8"):
        npc_nb.load_settings()
    (tmp_path / ".env").unlink()
    config = tmp_path / "config.toml"
    config.write_bytes(b'model = "caf\xe9"\n')
    monkeypatch.setenv("NPC_NB_CONFIG_FILE", str(config))
    with pytest.raises(npc_nb.ConfigError, match="not UTF-8"):
        npc_nb.load_settings()


# -- a damaged store -------------------------------------------------------------------


def _written_store(project_dir: Path, memories: int = 20) -> Path:
    """A project store holding ``memories`` queued candidates, closed; its file."""
    nb = npc_nb.open(project_dir, matcher=None)
    for n in range(memories):
        nb.add_candidate(f"Survey site {n} uses tablet model {n * 7}.", category="fact", npc="a")
    nb.close()
    return nb.store_path


def _cut_in_half(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


def _emptied(path: Path) -> None:
    path.write_bytes(b"")


def _overwritten(path: Path) -> None:
    path.write_bytes(os.urandom(path.stat().st_size))


def _a_folder_in_its_place(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _memory_text_damaged(path: Path) -> None:
    """Overwrite the block that holds the memories' text (found through DuckDB's own
    storage map), past its checksum: the file opens, reading the memories fails."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        block = con.execute(
            "SELECT min(block_id) FROM pragma_storage_info('memories') "
            "WHERE column_name = 'final_text' AND block_id >= 0"
        ).fetchone()[0]
        size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
    finally:
        con.close()
    with path.open("r+b") as file:
        file.seek(3 * 4096 + block * size + 512)  # three headers, then the blocks
        file.write(b"\xff" * 4096)


def _says_what_to_do(message: str, path: Path) -> None:
    """One line that names the damaged file and says what to do about it."""
    assert str(path) in message and "\n" not in message
    assert "Move it aside" in message and "backup" in message, message


DAMAGE = [_cut_in_half, _emptied, _overwritten, _a_folder_in_its_place]


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda damage: damage.__name__.strip("_"))
def test_a_damaged_store_is_a_store_error_that_says_what_to_do(
    project_dir: Path, damage: Callable[[Path], None]
) -> None:
    store = _written_store(project_dir)
    damage(store)
    with pytest.raises(npc_nb.StoreError) as refused:
        npc_nb.open(project_dir)
    _says_what_to_do(str(refused.value), store)
    (project_dir / ".npc_nb" / "memory.duckdb").rename(store.with_name("memory.duckdb.damaged"))
    nb = npc_nb.open(project_dir)  # moved aside as told: a new, empty store
    assert nb.memories().empty
    nb.close()


def test_a_damaged_block_is_a_store_error_wherever_it_is_read(
    project_dir: Path, tmp_path: Path
) -> None:
    """Opened before the damage, the project reads it through its own connection, the
    read-only connection of ``nb.sql`` and a move: each says which file and what to do."""
    store = _written_store(project_dir)
    nb = npc_nb.open(project_dir, idle_release=0)  # the file is closed between uses
    assert len(nb.memories()) == 20
    _memory_text_damaged(store)
    with pytest.raises(npc_nb.StoreError) as refused:
        nb.sql("SELECT final_text FROM memories")
    _says_what_to_do(str(refused.value), store)
    with pytest.raises(npc_nb.StoreError) as refused:
        nb.memories()
    _says_what_to_do(str(refused.value), store)
    nb.close()
    out = io.StringIO()
    assert main(["migrate-store", str(project_dir), str(tmp_path / "copy")], stdout=out) == 2
    _says_what_to_do(out.getvalue().strip(), store)
    assert "Nothing was copied" in out.getvalue()


def test_a_move_from_a_damaged_store_says_so_and_copies_nothing(
    project_dir: Path, tmp_path: Path
) -> None:
    store = _written_store(project_dir)
    _cut_in_half(store)
    out = io.StringIO()
    assert main(["migrate-store", str(project_dir), str(tmp_path / "copy")], stdout=out) == 2
    assert out.getvalue().startswith("npc-nb: ")
    _says_what_to_do(out.getvalue().strip(), store)
    assert not (tmp_path / "copy" / ".npc_nb" / "memory.duckdb").exists()


def test_the_review_command_reports_a_damaged_store_in_one_line(
    project_dir: Path, tmp_path: Path
) -> None:
    store = _written_store(project_dir)
    _cut_in_half(store)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "npc_nb.cli", "review", "--project", str(project_dir)],
        input="",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith("npc-nb: ")
    _says_what_to_do(line, store)


KILLED_MID_SESSION = """
import os, sys
import npc_nb
nb = npc_nb.open(sys.argv[1], matcher=None)
for n in range(30):
    nb.add_candidate(f"Written to the log only: site {n}.", category="fact", npc="a")
os._exit(0)  # no close, no checkpoint: the last writes are in the write-ahead log alone
"""


def test_a_write_ahead_log_that_cannot_be_replayed_says_to_move_it_aside(
    project_dir: Path, tmp_path: Path
) -> None:
    _written_store(project_dir)
    _run(KILLED_MID_SESSION, str(project_dir), home=tmp_path / "home")
    log = project_dir / ".npc_nb" / "memory.duckdb.wal"
    written = log.read_bytes()
    log.write_bytes(written[: len(written) // 2] + os.urandom(len(written) - len(written) // 2))
    with pytest.raises(npc_nb.StoreError) as refused:
        npc_nb.open(project_dir)
    message = str(refused.value)
    assert str(log) in message and "\n" not in message
    assert "Move the log aside" in message and "backup" in message, message
    log.rename(log.with_name("memory.duckdb.wal.damaged"))
    nb = npc_nb.open(project_dir)  # as it was at its last checkpoint
    assert len(nb.memories()) == 20
    nb.close()
