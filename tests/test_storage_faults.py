"""A full disk, a read-only folder and unreadable settings are clear errors, and nothing
acknowledged is lost.

Sessions and CI run as root, for whom every folder is writable, so the read-only test
runs its child process as the unprivileged ``nobody`` user, and the full-disk test caps
the child's file size with ``RLIMIT_FSIZE`` (with SIGXFSZ ignored, a write past the cap
fails with EFBIG as on a full disk).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import npc_nb

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
try:
    npc_nb.open(sys.argv[1])
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
