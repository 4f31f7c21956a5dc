"""Shared fixtures: every test gets its own project folder and its own user store.

Nothing a test does may touch the real ``~/.npc_nb`` or the developer's settings.
Tests that need a browser or a PostgreSQL server are skipped where they cannot run,
except under CI=true, where that fails them.
Helper functions the test files share are in ``tests/helpers.py``, not here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from tests.helpers import REVIEWER_KERNELS, running_in_ci
from tests.postgres import PostgresServer, PostgresUnavailable, missing_postgres, start_postgres

# Real DuckDB files under a noisy 2-core machine: time limits would only add flakiness.
settings.register_profile(
    "npc_nb", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("npc_nb")


def _missing_browser() -> str | None:
    from tests.jupyterlab import missing_browser  # imported late: it imports nbformat

    return missing_browser()


#: Markers of tests that need something from outside Python: what it is when it cannot
#: run, and why it cannot run here (None when it can).
REQUIREMENTS: dict[str, tuple[str, Callable[[], str | None]]] = {
    "browser": ("a missing browser", _missing_browser),
    "postgres": ("a PostgreSQL server that cannot start", missing_postgres),
}


def unavailable(reason: str, what: str) -> NoReturn:
    """Skip the test, saying what to install, except under CI=true, where CI installs
    everything the tests need and a missing piece fails the run."""
    if running_in_ci():
        pytest.fail(f"{reason}; under CI=true {what} is a failure", pytrace=False)
    pytest.skip(reason)


def _tier(path: Path) -> str:
    """``unit`` under tests/unit (pure logic, ``make check``), else ``integration``."""
    parts = path.parts
    in_unit = any(parts[i : i + 2] == ("tests", "unit") for i in range(len(parts) - 1))
    return "unit" if in_unit else "integration"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked with its tier, by folder (``-m unit``, ``-m integration``); a
    test that uses the PostgreSQL server is a postgres test, marked or not."""
    for item in items:
        item.add_marker(_tier(Path(item.path)))
        if "postgres_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Browser tests need Debian's Chromium and postgres tests a PostgreSQL server:
    without them a test is skipped (or fails under CI=true), see ``unavailable``."""
    for marker, (what, missing) in REQUIREMENTS.items():
        if item.get_closest_marker(marker) is None:
            continue
        reason = missing()
        if reason is not None:
            unavailable(reason, what)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (tests/postgres.py): a throwaway one on loopback,
    or the one NPC_NB_TEST_POSTGRES_URL names; stopped at the end of the session."""
    try:
        server = start_postgres()
    except PostgresUnavailable as error:
        unavailable(str(error), REQUIREMENTS["postgres"][0])
    with server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh, empty database of its own for this test, as the superuser's URL."""
    return postgres_server.new_database()


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


@pytest.fixture(autouse=True)
def reviewer_kernels() -> Iterator[None]:
    """Close the projects ``helpers.as_reviewer`` opened for the test."""
    yield
    while REVIEWER_KERNELS:
        REVIEWER_KERNELS.pop().close()


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
