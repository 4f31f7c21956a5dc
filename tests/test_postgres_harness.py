"""The PostgreSQL test harness itself: its server, its databases, and when it skips."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import REQUIREMENTS, unavailable
from tests.helpers import run_python, wait_until
from tests.postgres import (
    BINDIR_VARIABLE,
    EXTERNAL_URL_VARIABLE,
    PostgresServer,
    missing_postgres,
)

pytest_plugins = ["pytester"]


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return True
    except OSError:
        return False


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as connection:
        rows = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    return [name for (name,) in rows]


def test_the_session_server_accepts_the_superuser(postgres_server: PostgresServer) -> None:
    with psycopg.connect(postgres_server.url) as connection:
        user, database = connection.execute("SELECT current_user, current_database()").fetchone()
    assert (user, database) == ("postgres", "postgres")
    assert postgres_server.execute("SELECT 1 + %s", [1]) == [(2,)]


def test_a_throwaway_server_listens_on_loopback_only(postgres_server: PostgresServer) -> None:
    if not postgres_server.throwaway:
        pytest.skip(f"{EXTERNAL_URL_VARIABLE} names the server: its settings are its own")
    assert postgres_server.url.startswith("postgresql://postgres@127.0.0.1:")
    assert postgres_server.execute("SHOW listen_addresses") == [("127.0.0.1",)]


def test_every_test_gets_a_fresh_empty_database(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    assert PostgresServer.database_name(postgres_url) != "postgres"
    assert _tables(postgres_url) == []
    postgres_server.execute("CREATE TABLE left_behind (x int)", database=postgres_url)
    another = postgres_server.new_database()
    assert another != postgres_url
    assert _tables(another) == []
    assert _tables(postgres_url) == ["left_behind"]


def test_url_for_connects_as_another_role_with_any_password(
    postgres_server: PostgresServer, postgres_url: str
) -> None:
    database = PostgresServer.database_name(postgres_url)
    role = f"reader_{database}"  # roles are shared by the whole server: one per test
    postgres_server.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD 'p@ss:w/rd'")
    url = postgres_server.url_for(database, user=role, password="p@ss:w/rd")
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT current_user").fetchone() == (role,)


def test_missing_binaries_name_the_package_to_install(tmp_path: Path) -> None:
    reason = missing_postgres({BINDIR_VARIABLE: str(tmp_path)})
    assert reason is not None
    assert "sudo apt-get install postgresql" in reason
    assert EXTERNAL_URL_VARIABLE in reason  # the other way out
    assert missing_postgres({BINDIR_VARIABLE: str(tmp_path), EXTERNAL_URL_VARIABLE: "x"}) is None


POSTGRES_TESTS = """
import pytest

@pytest.mark.postgres
def test_marked():
    pass

def test_using_the_server(postgres_url):
    pass
"""

INNER_CONFTEST = (
    "from tests.conftest import (  # noqa: F401\n"
    "    postgres_server, postgres_url, pytest_collection_modifyitems, pytest_runtest_setup\n"
    ")\n"
)


def _run_inner(pytester: pytest.Pytester, tests: str) -> pytest.RunResult:
    """Run ``tests`` with the real conftest hooks and fixtures, in this process."""
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makeini("[pytest]\nmarkers =\n    postgres: needs a PostgreSQL server\n")
    pytester.makepyfile(tests)
    return pytester.runpytest_inprocess("-p", "no:randomly", "-rs")


@pytest.mark.parametrize(("ci", "outcome"), [("", "skipped"), ("true", "errors")])
def test_postgres_tests_skip_outside_ci_and_error_in_ci_without_binaries(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    ci: str,
    outcome: str,
) -> None:
    """Marked or merely using the server, a test cannot run without PostgreSQL."""
    monkeypatch.setenv(BINDIR_VARIABLE, str(tmp_path / "no-binaries-here"))
    monkeypatch.setenv("CI", ci)
    result = _run_inner(pytester, POSTGRES_TESTS)
    result.assert_outcomes(**{outcome: 2})
    result.stdout.fnmatch_lines(["*sudo apt-get install postgresql*"])


@pytest.fixture
def failing_initdb() -> Iterator[Path]:
    """Server binaries whose initdb fails, where the server's user can run them."""
    folder = Path(tempfile.mkdtemp(prefix="npc_nb-fake-postgres-"))
    folder.chmod(0o755)
    for name, body in [
        ("initdb", "echo 'initdb: the disk is on fire' >&2; exit 1"),
        ("postgres", "exit 1"),
    ]:
        (folder / name).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name).chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.mark.parametrize(("ci", "outcome"), [("", "skipped"), ("true", "errors")])
def test_a_server_that_cannot_start_skips_outside_ci_and_errors_in_ci(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    failing_initdb: Path,
    ci: str,
    outcome: str,
) -> None:
    monkeypatch.setenv(BINDIR_VARIABLE, str(failing_initdb))
    monkeypatch.setenv("CI", ci)
    result = _run_inner(pytester, "def test_using_the_server(postgres_url):\n    pass\n")
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines(["*initdb failed*", "*the disk is on fire*"])


@pytest.fixture
def server_binaries() -> None:
    """For tests that start servers of their own, whichever server the session uses."""
    reason = missing_postgres({})  # {}: not the server NPC_NB_TEST_POSTGRES_URL names
    if reason is not None:
        unavailable(reason, REQUIREMENTS["postgres"][0])


PORT_RECORDING_TEST = """
def test_records_the_port(postgres_server):
    with open("port", "w") as file:
        file.write(str(postgres_server.port))
"""


@pytest.mark.usefixtures("server_binaries")
def test_the_session_server_is_stopped_at_the_end_of_the_session(pytester: pytest.Pytester) -> None:
    result = _run_inner(pytester, PORT_RECORDING_TEST)
    result.assert_outcomes(passed=1)
    port = int((pytester.path / "port").read_text())
    assert not _accepts_connections(port)


@pytest.fixture
def server_tmpdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A TMPDIR for a child's server (reachable by the server's user), to see what is left."""
    folder = Path(tempfile.mkdtemp(prefix="npc_nb-pg-tmpdir-"))
    folder.chmod(0o755)
    monkeypatch.setenv("TMPDIR", str(folder))
    yield folder
    shutil.rmtree(folder)


START_AND_LEAVE = """
import os, signal, sys
from tests.postgres import start_postgres
server = start_postgres()
print(server.port, flush=True)
if sys.argv[-1] == "crash":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.slow
@pytest.mark.usefixtures("server_binaries")
def test_a_server_left_running_stops_when_its_process_exits(
    server_tmpdir: Path, tmp_path: Path
) -> None:
    output = run_python(START_AND_LEAVE, env_home=tmp_path / "home")
    assert isinstance(output, str)
    assert not _accepts_connections(int(output))
    assert list(server_tmpdir.iterdir()) == []  # its files went with it


@pytest.mark.slow
@pytest.mark.usefixtures("server_binaries")
def test_a_server_stops_by_itself_when_its_process_is_killed(
    server_tmpdir: Path, tmp_path: Path
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", START_AND_LEAVE, "crash"],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    port = int(child.stdout.readline())
    child.stdout.close()
    assert child.wait() == -signal.SIGKILL
    wait_until(
        lambda: not _accepts_connections(port) and not list(server_tmpdir.rglob("postmaster.pid")),
        what="the orphaned server's shutdown",
    )
