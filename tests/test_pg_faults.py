"""Faults on the shared store: the server restarting mid-session or not answering at
all, and a kernel killed (SIGKILL) inside a decision or an extraction.

A kill is made deterministic by a lock the test holds: the child blocks inside its
transaction on it, the test sees the child waiting (``pg_locks``), then kills it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

import npc_nb
from tests.helpers import REPO, propose, status_of
from tests.postgres import PostgresServer, start_postgres
from tests.store_worker import run_together

pytestmark = pytest.mark.postgres

#: How long a test waits for a state it caused (a child blocking, a session ending).
PATIENCE = 60.0
#: The bound asserted for "a clear error, never a hang" (the store's own: 3 s, 5 s).
PROMPTLY = 10.0


@pytest.fixture(scope="module")
def own_server(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    """A server of this module's own, which its tests restart."""
    if not postgres_server.throwaway:
        pytest.skip("restarting needs a throwaway server (NPC_NB_TEST_POSTGRES_URL is set)")
    with start_postgres() as server:
        yield server


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.02)


def lock_waiters(url: str) -> int:
    """Sessions waiting for a table lock (a child blocked inside its transaction)."""
    with psycopg.connect(url, autocommit=True) as con:
        found = con.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'relation'"
        ).fetchone()
    return int(found[0]) if found else 0


def end_waiting_sessions(url: str) -> None:
    """End the sessions waiting for a table lock, as a server going away ends them."""
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks "
            "WHERE NOT granted AND locktype = 'relation'"
        )


def advisory_locks(url: str) -> int:
    """Advisory locks held in the database (a claimer's presence, a proposal's text)."""
    with psycopg.connect(url, autocommit=True) as con:
        found = con.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()
    return int(found[0]) if found else 0


def holding(url: str, table: str) -> psycopg.Connection:
    """A transaction that holds ``table`` in SHARE mode: reads pass, writes wait."""
    con = psycopg.connect(url)
    schema = con.execute("SELECT schemaname FROM pg_tables WHERE tablename = %s", [table])
    found = schema.fetchone()
    assert found is not None
    con.execute(f'LOCK TABLE "{found[0]}".{table} IN SHARE MODE')
    return con


def start_worker(*args: str) -> subprocess.Popen:
    """A second kernel (``tests.store_worker``), opened and waiting for "go"."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.store_worker", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=os.environ | {"PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    return proc


def kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def audit_matches_status(nb: npc_nb.Project) -> None:
    """Every memory's status is the one its latest audit event moved it to."""
    memories = nb.memories().set_index("id")["status"]
    events = nb.sql("SELECT memory_id, to_status FROM memory_events ORDER BY seq")
    events = events.groupby("memory_id")["to_status"].last()
    assert memories.to_dict() == events.reindex(memories.index).to_dict()


def test_a_restart_between_operations_goes_unnoticed(
    project_dir: Path, own_server: PostgresServer
) -> None:
    nb = npc_nb.open(project_dir, store=own_server.new_database())
    try:
        memory_id = propose(nb, "We publish on Fridays")
        own_server.restart()
        nb.approve(memory_id)  # the pooled connection the server dropped is not reused
        assert "We publish on Fridays" in nb.context("analyst")
    finally:
        nb.close()


def test_a_restart_during_a_decision_is_a_clear_error_and_the_next_one_reconnects(
    project_dir: Path, own_server: PostgresServer
) -> None:
    url = own_server.new_database()
    nb = npc_nb.open(project_dir, store=url)
    try:
        memory_id = propose(nb, "We publish on Fridays")
        errors: list[Exception] = []

        def approve() -> None:
            try:
                nb.approve(memory_id)
            except Exception as exc:
                errors.append(exc)

        blocker = holding(url, "memory_events")
        decision = threading.Thread(target=approve)
        decision.start()
        wait_until(lambda: lock_waiters(url) == 1, "the decision to wait inside its transaction")
        # A restart ends both sessions, in no fixed order: the decision's goes first, or
        # on a loaded machine the blocker's end could let the decision commit first.
        end_waiting_sessions(url)
        own_server.restart()
        decision.join()
        blocker.close()
        assert len(errors) == 1 and isinstance(errors[0], npc_nb.StoreError)
        message = str(errors[0])
        assert "went away" in message and "Nothing of this operation was saved" in message
        assert "run it again" in message
        assert status_of(nb, memory_id) == "pending_approval"  # the next operation reconnects
        nb.approve(memory_id)
        assert status_of(nb, memory_id) == "human-approved"
        audit_matches_status(nb)
    finally:
        nb.close()


def test_a_server_down_mid_session_is_a_clear_error_within_seconds(
    project_dir: Path, own_server: PostgresServer
) -> None:
    nb = npc_nb.open(project_dir, store=own_server.new_database())
    try:
        memory_id = propose(nb, "We publish on Fridays")
        own_server.pause()
        try:
            began = time.monotonic()
            with pytest.raises(npc_nb.StoreError, match="reachable") as raised:
                nb.approve(memory_id)
            took = time.monotonic() - began
        finally:
            own_server.resume()
        print(f"server down: error after {took:.2f} s: {raised.value}")
        assert took < PROMPTLY
        nb.approve(memory_id)  # back: the same project carries on
        assert status_of(nb, memory_id) == "human-approved"
    finally:
        nb.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port that accepts TCP connections and never says a word (a hung host)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)  # the kernel completes the handshake; nobody ever answers
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("kind", ["closed port", "silent server"])
def test_an_unreachable_server_is_a_clear_error_within_seconds(
    project_dir: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    port = closed_port() if kind == "closed port" else request.getfixturevalue("silent_server")
    began = time.monotonic()
    with pytest.raises(npc_nb.StoreError, match="Is the server running and reachable") as raised:
        npc_nb.open(project_dir, store=f"postgresql://postgres@127.0.0.1:{port}/lab")
    took = time.monotonic() - began
    print(f"{kind}: error after {took:.2f} s: {raised.value}")
    assert took < PROMPTLY


def test_a_kernel_killed_inside_a_decision_leaves_no_status_without_its_event(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    try:
        ids = [propose(nb, f"fact number {n} about the lab") for n in range(3)]
        ids_file = project_dir / "ids.txt"
        ids_file.write_text("\n".join(ids))
        blocker = holding(postgres_url, "memory_events")
        try:
            child = start_worker("decide", str(project_dir), postgres_url, "approve", str(ids_file))
            wait_until(lambda: lock_waiters(postgres_url) == 1, "the child inside its decision")
            kill(child)  # its status UPDATE is done, its audit event not yet
        finally:
            blocker.close()
        assert [status_of(nb, memory_id) for memory_id in ids] == ["pending_approval"] * 3
        audit_matches_status(nb)
        nb.approve(ids[0])  # the dead session's row lock goes with it
        assert status_of(nb, ids[0]) == "human-approved"
        audit_matches_status(nb)
    finally:
        nb.close()


def test_a_kernel_killed_inside_an_extraction_loses_no_job(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, extract_in_background=False)
    try:
        nb.chat("analyst", "We decided to use DuckDB.")
        assert nb.extraction.status().queued == 1
        blocker = holding(postgres_url, "memories")
        try:
            child = start_worker("extract", str(project_dir), postgres_url)
            wait_until(lambda: lock_waiters(postgres_url) == 1, "the child proposing")
            assert nb.extraction.status().running == 1
            assert nb.extraction.recover() == 0  # a live kernel's job is never taken
            kill(child)
        finally:
            blocker.close()
        wait_until(lambda: advisory_locks(postgres_url) == 0, "the killed kernel's sessions to end")
        assert nb.extraction.wait(timeout=60).done == 1  # recovered here, run once
        job = nb.extraction.jobs().iloc[0]
        assert (job["status"], job["attempts"], job["candidates"]) == ("done", 2, 1)
        proposed = nb.memories()
        assert proposed["category"].tolist() == ["decision"]
        assert nb.sql("SELECT action FROM memory_events")["action"].tolist() == ["propose"]
    finally:
        nb.close()


@pytest.mark.slow
def test_two_kernels_racing_for_queued_jobs_run_each_once(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, extract_in_background=False)
    try:
        for n in range(6):
            nb.chat("analyst", f"We decided to use tool number {n}.")
        worker = ["extract", str(project_dir), postgres_url]
        assert all(result["status"] for result in run_together(worker, worker)[0])
        jobs = nb.extraction.jobs()
        assert jobs["status"].tolist() == ["done"] * 6
        assert jobs["attempts"].tolist() == [1] * 6
        assert len(nb.memories()) == 6
    finally:
        nb.close()


def test_a_job_left_by_a_dead_kernel_on_another_machine_is_recovered(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, extract_in_background=False)
    try:
        nb.chat("analyst", "We decided to use DuckDB.")
        with psycopg.connect(postgres_url, autocommit=True) as con:  # claimed, then gone
            con.execute(
                "UPDATE npc_project.extraction_jobs SET status = 'running', attempts = 1, "
                "claimed_by = 'lab-server-7:4242'"
            )
        assert nb.extraction.recover() == 1
        assert nb.extraction.wait(timeout=60).done == 1
        assert nb.memories()["category"].tolist() == ["decision"]
    finally:
        nb.close()
