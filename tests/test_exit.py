"""A clean exit: closing a project, or leaving Python, stops the extraction worker first.

A worker thread still inside DuckDB or a model call while the interpreter tears down
made the process abort (SIGABRT, exit code 134) in about half the runs of a script that
chats and exits without waiting. Now ``close()`` and interpreter exit let the worker
finish its job (or leave it queued for the next open) before anything is torn down.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import npc_nb

REPO = Path(__file__).resolve().parents[1]
CHAT_AND_LEAVE = """
import sys
import npc_nb
nb = npc_nb.open(sys.argv[1], offline_delay=float(sys.argv[2]))
nb.chat("analyst", "We decided to use DuckDB. I prefer tea over coffee.")
"""


def _run(project: Path, home: Path, delay: float = 0.0) -> subprocess.CompletedProcess:
    env = {**os.environ, "NPC_NB_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHAT_AND_LEAVE), str(project), str(delay)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_a_script_that_chats_and_leaves_without_waiting_exits_cleanly_every_time(
    project_dir: Path, isolated_home: Path
) -> None:
    codes = [_run(project_dir, isolated_home).returncode for _ in range(10)]
    assert codes == [0] * 10
    nb = npc_nb.open(project_dir)
    status = nb.extraction.wait(timeout=120)
    assert status.failed == 0 and status.done == 10
    nb.close()


def test_a_job_still_in_a_model_call_at_exit_is_finished_by_the_next_open(
    project_dir: Path, isolated_home: Path
) -> None:
    done = _run(project_dir, isolated_home, delay=30.0)  # extraction far slower than exit
    assert done.returncode == 0, done.stderr
    nb = npc_nb.open(project_dir)
    assert nb.extraction.wait(timeout=120).done == 1
    assert len(nb.review_queue()) == 2
    nb.close()


def test_close_stops_the_worker_and_the_project_keeps_working(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir)
    nb.chat("analyst", "We decided to use DuckDB.")
    nb.close()
    worker = nb.extraction._thread
    assert worker is None or not worker.is_alive()
    nb.chat("analyst", "I prefer tea over coffee.")  # reopens on use
    assert nb.extraction.wait(timeout=60).failed == 0
    assert len(nb.review_queue()) == 2
    nb.close()
