"""``npc_nb.rerun`` and ``npc-nb rerun``: a saved notebook executed again with the
replay forced from outside (its cells unchanged), each code cell reported identical,
changed (with a short diff) or failed; ``live=True`` calls the model again. The shipped
reproducible notebook, saved and re-run, comes back identical and passes strict nbval.

Each notebook runs in a real kernel (nbclient), as Jupyter would run it.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import npc_nb
from npc_nb.cli import main
from tests.helpers import REPO, propose
from tests.saved_notebooks import executed, notebook, saved

#: The study: recorded, unpinned; cell 2 is its %%npc turn, cell 3 shows the memory.
STUDY = (
    "%npc_config model_replay=record",
    "%%npc analyst --new\nWhich font size do I like?",
    'print(sorted(nb.memories(status="approved")["final_text"]))',
)
TURN, MEMORY = 2, 3
#: Strict nbval in a subprocess runs the cells in order, leaving no cache behind.
NO_PLUGINS = ("-p", "no:randomly", "-p", "no:cacheprovider")


@pytest.fixture(scope="module")
def recorded_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project and its notebook, run once with model_replay=record and saved (a kernel
    costs seconds); each test works on a copy."""
    folder = tmp_path_factory.mktemp("rerun")
    project = folder / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NPC_NB_HOME", str(folder / "user-home"))
        patch.setenv("NPC_NB_REVIEWER", "tester")
        nb = npc_nb.open(project)
        nb.approve(propose(nb, "The user prefers large fonts"))
        nb.close()
        # The notebook names its project relative to its folder: a copy opens its own.
        saved(executed(notebook(Path("project"), *STUDY), folder), folder / "study.ipynb")
    return folder


@pytest.fixture
def study(recorded_study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(recorded_study, tmp_path / "study")
    monkeypatch.setenv("NPC_NB_HOME", str(tmp_path / "study" / "user-home"))
    return tmp_path / "study" / "study.ipynb"


def change_store(study: Path, change: str) -> None:
    nb = npc_nb.open(study.parent / "project")
    try:
        if change == "memory":
            memory = nb.memories(status="approved")["id"].item()
            nb.edit(memory, "The user prefers medium fonts")
        else:
            nb.sql(
                "UPDATE model_recordings SET reply = replace(reply, 'large fonts', 'SMALL fonts')",
                allow_write=True,
            )
    finally:
        nb.close()


def test_a_rerun_replays_every_cell_identically_and_leaves_the_notebook_as_saved(
    study: Path,
) -> None:
    before = study.read_bytes()
    report = npc_nb.rerun(study)
    assert report.cells["status"].tolist() == ["identical"] * 4 and report.identical
    assert study.read_bytes() == before
    assert "study.ipynb re-run, replayed from its recordings: 4 identical" in str(report)


def test_after_a_recording_is_edited_the_rerun_refuses_to_replay_it(
    study: Path, tmp_path: Path
) -> None:
    change_store(study, "recording")
    report = npc_nb.rerun(study, output=tmp_path / "again.ipynb")
    statuses = dict(zip(report.cells["cell"], report.cells["status"], strict=True))
    assert statuses == {0: "identical", 1: "identical", TURN: "failed", MEMORY: "identical"}
    detail = report.cells.set_index("cell").loc[TURN, "detail"]
    assert "no longer matches its hash" in detail  # the edited reply is never served
    again = nbformat.read(tmp_path / "again.ipynb", as_version=4)
    assert "SMALL fonts" not in str(again.cells[TURN].outputs)
    assert not report.identical and "cell 2: failed" in str(report)


def test_after_memory_changed_the_replay_refuses_the_new_request_and_shows_the_change(
    study: Path,
) -> None:
    change_store(study, "memory")
    report = npc_nb.rerun(study).cells.set_index("cell")
    assert report.loc[TURN, "status"] == "failed"
    assert "no reply was recorded" in report.loc[TURN, "detail"]
    assert report.loc[MEMORY, "status"] == "changed"
    assert "+['The user prefers medium fonts']" in report.loc[MEMORY, "detail"]


def test_a_live_rerun_calls_the_model_and_reports_the_drift(study: Path) -> None:
    change_store(study, "memory")
    report = npc_nb.rerun(study, live=True).cells.set_index("cell")
    assert report.loc[TURN, "status"] == "changed"
    assert "+- (npc/fact) The user prefers medium fonts" in report.loc[TURN, "detail"]


def test_npc_nb_rerun_prints_each_cell_and_says_by_its_exit_status(
    study: Path, tmp_path: Path
) -> None:
    out = io.StringIO()
    assert main(["rerun", str(study)], stdout=out) == 0
    assert "cell 2: identical" in out.getvalue()

    change_store(study, "recording")
    out = io.StringIO()
    assert main(["rerun", str(study), "--output", str(tmp_path / "o.ipynb")], stdout=out) == 1
    printed = out.getvalue()
    assert "cell 2: failed" in printed and "no longer matches its hash" in printed
    assert f"saved to {tmp_path / 'o.ipynb'}" in printed

    out = io.StringIO()
    assert main(["rerun", str(tmp_path / "missing.ipynb")], stdout=out) == 2
    assert "No notebook at" in out.getvalue()


def test_the_shipped_reproducible_notebook_saved_reruns_identically_and_passes_strict_nbval(
    tmp_path: Path,
) -> None:
    path = tmp_path / "reproducible.ipynb"
    shutil.copy(REPO / "notebooks" / "reproducible.ipynb", path)
    # A researcher's run, saved: its own cells record the replies.
    saved(executed(nbformat.read(path, as_version=4), tmp_path), path)
    report = npc_nb.rerun(path, output=tmp_path / "replayed.ipynb")
    assert report.identical, str(report)
    strict = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", *NO_PLUGINS, "-q", "replayed.ipynb"],
        cwd=tmp_path,
        env={**os.environ, "NPC_NB_RERUN": "replay"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert strict.returncode == 0, strict.stdout[-3000:]
    assert f"{len(report.results)} passed" in strict.stdout, strict.stdout[-3000:]


def test_a_study_extracting_in_the_background_as_by_default_reruns_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notebook a new user saves: extraction in the background (the default), so its
    kernel may close before the extraction of an exchange ran or was recorded (here, for
    certain: the recording kernel never extracts). The re-run replays the replies and
    leaves extraction in the queue: no note about an extraction it could not replay
    appears under a reply, and no job fails."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.setenv("NPC_NB_HOME", str(tmp_path / "user-home"))
    nb = npc_nb.open(project)
    nb.approve(propose(nb, "The user prefers large fonts"))
    nb.close()
    cells = (
        "import npc_nb\nnb = npc_nb.open('project')\n%load_ext npc_nb",
        "nb.configure(model_replay='record');",
        "%%npc analyst --new\nWhich font size do I like?",
        "%%npc analyst\nAnd which colour?",
    )
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    monkeypatch.setenv("NPC_NB_EXTRACT_IN_BACKGROUND", "false")
    study = saved(executed(book, tmp_path), tmp_path / "study.ipynb")
    monkeypatch.delenv("NPC_NB_EXTRACT_IN_BACKGROUND")
    report = npc_nb.rerun(study)
    assert report.cells["status"].tolist() == ["identical"] * 4, str(report)
    nb = npc_nb.open(project, extract_in_background=False)  # this process runs none
    assert set(nb.extraction.jobs()["status"]) == {"queued"}
    nb.close()


def test_a_rerun_s_kernel_keeps_its_warnings_to_itself(
    study: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The terminal of ``npc-nb rerun`` (or the cell calling ``npc_nb.rerun``) shows the
    report, not the log of the kernel it started ("Kernel is running over TCP ...")."""
    assert npc_nb.rerun(study).identical
    assert "[IPKernelApp] WARNING" not in capfd.readouterr().err
