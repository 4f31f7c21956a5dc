"""``npc-nb import`` and ``npc-nb export`` from a terminal: the console script in a
process of its own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import npc_nb
from tests.helpers import REPO, propose
from tests.interop_projects import DATA, checksums


def npc_nb_cli(*args: str | Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NPC_NB_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "npc_nb.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )


def test_a_bundle_exported_and_imported_from_the_command_line(
    nb: npc_nb.Project, project_dir: Path, tmp_path: Path, isolated_home: Path
) -> None:
    nb.approve(propose(nb, "The lab stores ringing data in DuckDB"), by="ada")
    nb.reject(propose(nb, "The user wants weekly email summaries"), by="ada")
    nb.close()
    bundle = tmp_path / "lab.zip"
    out = npc_nb_cli("export", "bundle", bundle, "--project", project_dir, home=isolated_home)
    assert out.returncode == 0, out.stderr
    assert f"Wrote {bundle}" in out.stdout
    copy = tmp_path / "copy"
    out = npc_nb_cli("import", "bundle", bundle, "--project", copy, home=isolated_home)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^  memories +2$", out.stdout, re.M), out.stdout
    again = npc_nb_cli("export", "bundle", tmp_path / "again.zip", "--project", copy,
                       home=isolated_home)  # fmt: skip
    assert again.returncode == 0 and checksums(tmp_path / "again.zip") == checksums(bundle)
    refused = npc_nb_cli("import", "bundle", bundle, "--project", copy, home=isolated_home)
    assert refused.returncode == 2 and "is not empty (2 memories" in refused.stdout
    assert "Traceback" not in refused.stderr
    merged = npc_nb_cli(
        "import", "bundle", bundle, "--project", copy, "--into-nonempty", home=isolated_home
    )
    assert merged.returncode == 0 and "duplicate(s) skipped" in merged.stdout


def test_npcpy_memories_imported_from_the_command_line(
    project_dir: Path, isolated_home: Path
) -> None:
    out = npc_nb_cli("import", "npcpy", DATA / "npcpy" / "lab", "--project", project_dir,
                     home=isolated_home)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (
        "imported: 6 (1 human-approved, 1 human-edited, 1 human-rejected, 3 pending_approval)"
        in out.stdout
    )
    nb = npc_nb.open(project_dir)
    assert set(nb.decisions().query("action != 'propose'")["reviewer"]) == {"imported:npcpy"}
    nb.close()
    trusted = npc_nb_cli("import", "npcpy", DATA / "npcpy" / "lab", "--project", project_dir,
                         "--trust", home=isolated_home)  # fmt: skip
    assert trusted.returncode == 2 and "--trust is for mem0 and letta" in trusted.stdout


def test_trust_from_the_command_line_is_audited_and_warned(
    project_dir: Path, isolated_home: Path
) -> None:
    out = npc_nb_cli("import", "mem0", DATA / "mem0" / "get_all.json", "--project", project_dir,
                     "--trust", home=isolated_home)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Warning: trust=True" in out.stdout and "TrustedImportWarning" in out.stderr
    nb = npc_nb.open(project_dir)
    approvals = nb.decisions().query("action == 'approve'")
    assert len(approvals) == 3 and approvals["reason"].str.contains("trust=True").all()
    assert set(approvals["reviewer"]) == {"tester"}
    nb.close()


def test_letta_pending_and_exports_for_each_tool_from_the_command_line(
    project_dir: Path, tmp_path: Path, isolated_home: Path
) -> None:
    out = npc_nb_cli("import", "letta", DATA / "letta" / "companion.af", "--project",
                     project_dir, home=isolated_home)  # fmt: skip
    assert out.returncode == 0 and "imported: 5 (5 pending_approval)" in out.stdout
    nb = npc_nb.open(project_dir)
    nb.approve(nb.review_queue()["id"].iloc[0], by="ada")
    nb.close()
    for kind, target in (("mem0", "m.jsonl"), ("letta", "a.af"), ("npcpy", "folder")):
        written = npc_nb_cli("export", kind, tmp_path / target, "--project", project_dir,
                             home=isolated_home)  # fmt: skip
        assert written.returncode == 0, written.stderr
    line = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[0])
    assert line["infer"] is False and line["agent_id"] == "companion"


def test_a_missing_file_is_a_clear_error_not_a_traceback(
    project_dir: Path, isolated_home: Path
) -> None:
    out = npc_nb_cli("import", "mem0", "nowhere.json", "--project", project_dir,
                     home=isolated_home)  # fmt: skip
    assert out.returncode == 2 and "No mem0 file at nowhere.json" in out.stdout
    assert "Traceback" not in out.stderr
