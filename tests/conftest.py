"""Shared fixtures: every test gets its own project folder and its own user store.

Nothing a test does may touch the real ``~/.npc_nb`` or the developer's settings.
Helper functions the test files share are in ``tests/helpers.py``, not here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from IPython.core.interactiveshell import InteractiveShell

import npc_nb

# Real DuckDB files under a noisy 2-core machine: time limits would only add flakiness.
settings.register_profile(
    "npc_nb", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("npc_nb")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Browser tests need Debian's Chromium: skipped with what to install when it is
    missing, except under CI=true, where a missing browser fails the run."""
    if item.get_closest_marker("browser") is None:
        return
    from tests.jupyterlab import missing_browser, running_in_ci

    reason = missing_browser()
    if reason is None:
        return
    if running_in_ci():
        pytest.fail(f"{reason}; under CI=true a missing browser is a failure", pytrace=False)
    pytest.skip(reason)


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
def nb(project_dir: Path) -> Iterator[npc_nb.Project]:
    project = npc_nb.open(project_dir)
    yield project
    project.close()


@pytest.fixture
def shell(project_dir: Path) -> Iterator[InteractiveShell]:
    """IPython's shell with the npc_nb extension loaded, its magics on a fresh project."""
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "npc_nb")
    magics = ip.magics_manager.registry["NpcMagics"]
    opened = npc_nb.open(project_dir)  # the magics follow the Project opened last
    yield ip
    opened.close()
    magics._project = None
