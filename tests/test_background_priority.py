"""Background work goes behind the cell and the reviewer: a thread marked
``in_background`` (the extraction worker, the panel's look-ahead) starts no new use of a
store's connection while another thread waits for it, so a cell waits for at most one
background statement, never for a whole extraction job."""

from __future__ import annotations

import threading
from pathlib import Path

import npc_nb
from npc_nb.store import in_background
from npc_nb.store.background import background_work
from npc_nb.store.embedded.lease import ConnectionLease
from tests.helpers import wait_until

PATIENCE = 10.0


def _lease(tmp_path: Path) -> ConnectionLease:
    (tmp_path / ".npc_nb").mkdir(mode=0o700)
    return ConnectionLease(tmp_path / ".npc_nb" / "memory.duckdb", lock_timeout=5, idle_release=60)


def _in_thread(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_a_waiting_cell_goes_before_the_rest_of_a_background_job(tmp_path: Path) -> None:
    """A job's statements come one after another, each taking the connection again at
    once: without the cell going first, it would wait for most of the job."""
    lease, order, inside = _lease(tmp_path), [], threading.Event()

    def job() -> None:
        with in_background():
            with lease.connection():
                inside.set()
                wait_until(lambda: lease.foreground_waiting, what="the cell waiting")
                order.append("job 1")
            for step in range(2, 200):
                with lease.connection() as con:
                    con.execute("SELECT 1").fetchall()
                    order.append(f"job {step}")

    worker = _in_thread(job)
    assert inside.wait(PATIENCE)
    with lease.connection():  # this thread is the cell: it waits for job 1 only
        order.append("cell")
    worker.join(PATIENCE)
    assert not worker.is_alive()
    assert order[:3] == ["job 1", "cell", "job 2"]
    lease.release()


def test_background_work_inside_its_own_use_does_not_wait_for_the_cell(tmp_path: Path) -> None:
    """A nested use (a transaction's statements) holds the connection already: waiting
    there for the cell, which waits for it, would hang both."""
    lease, order, inside = _lease(tmp_path), [], threading.Event()

    def job() -> None:
        with in_background(), lease.connection():
            inside.set()
            wait_until(lambda: lease.foreground_waiting, what="the cell waiting")
            with lease.connection():
                order.append("job, nested")

    def cell() -> None:
        with lease.connection():
            order.append("cell")

    worker = _in_thread(job)
    assert inside.wait(PATIENCE)
    waiting = _in_thread(cell)
    for thread in (worker, waiting):
        thread.join(PATIENCE)
        assert not thread.is_alive(), "a thread is stuck waiting for the other"
    assert order == ["job, nested", "cell"]
    lease.release()


def test_a_thread_is_foreground_again_after_its_background_block(tmp_path: Path) -> None:
    lease, holding, seen = _lease(tmp_path), threading.Event(), []

    def holder() -> None:
        with lease.connection():
            holding.set()
            try:
                wait_until(lambda: lease.foreground_waiting == 1, what="the other thread waiting")
                seen.append("counted as a foreground thread")
            except AssertionError as exc:
                seen.append(str(exc))

    with in_background():
        pass
    thread = _in_thread(holder)
    assert holding.wait(PATIENCE)
    with lease.connection():
        pass
    thread.join(PATIENCE)
    assert seen == ["counted as a foreground thread"]
    lease.release()


def test_the_extraction_worker_works_in_the_background(project_dir: Path) -> None:
    """The worker proposes what it extracts on a thread of its own, marked background:
    a matcher it calls sees the mark (a cell's own call does not)."""
    seen: list[tuple[str, bool]] = []

    def matcher(candidate: str, memories: list[str]) -> list[str]:
        seen.append((threading.current_thread().name, background_work()))
        return ["different"] * len(memories)

    nb = npc_nb.open(project_dir, matcher=matcher)
    nb.add_candidate("We keep the survey data in DuckDB", category="fact", npc="analyst")
    nb.add_candidate("We keep the survey data in DuckDB files", category="fact", npc="analyst")
    assert seen == [(threading.current_thread().name, False)]  # the cell's own call
    nb.chat("analyst", "We decided to keep the survey data in DuckDB, as agreed.")
    nb.extraction.wait()
    assert ("npc_nb-extraction", True) in seen[1:]
    nb.close()
