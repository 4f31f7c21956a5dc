"""SQL for the durable extraction queue: enqueue, claim, finish, recover, report.

A job is claimed by an UPDATE conditional on its still being ``queued`` (it becomes
``running``, attempts + 1, ``claimed_by`` = host:pid), so of two kernels racing for it
exactly one wins, and the other claims the next. A job left ``running`` by a claimer
that no longer lives (``Store.claimant_alive``: a process id on a file, a session lock
on a shared server) is queued again; a live claimer's job is never taken from it, and
its result is recorded only while it still holds the claim.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pandas as pd

from ..contract import Store, rows, scalar

__all__ = [
    "cancel",
    "claim_next",
    "counts",
    "failures",
    "finish",
    "frame",
    "requeue_orphans",
    "retry_failed",
]


def claim_next(store: Store, claimed_by: str, now: datetime) -> dict | None:
    """Claim the oldest queued job for ``claimed_by``; None when nothing is queued."""
    while True:
        with store.write() as con:
            found = rows(
                con,
                "SELECT * FROM extraction_jobs WHERE status = 'queued' "
                "ORDER BY created_at, id LIMIT 1",
            )
            if not found:
                return None
            job = found[0]
            won = con.execute(
                "UPDATE extraction_jobs SET status = 'running', attempts = attempts + 1, "
                "claimed_by = ?, started_at = ?, error = NULL "
                "WHERE id = ? AND status = 'queued' RETURNING id",
                [claimed_by, now, job["id"]],
            ).fetchall()
        if won:  # else another kernel claimed it first: look for the next one
            return job | {
                "status": "running",
                "attempts": job["attempts"] + 1,
                "claimed_by": claimed_by,
            }


def finish(
    store: Store,
    job_id: str,
    *,
    status: str,
    now: datetime,
    error: str | None = None,
    raw_output: str | None = None,
    candidates: int | None = None,
    claimed_by: str | None = None,
) -> None:
    """Record how a run ended: done, failed, or queued again for a retry (only while
    ``claimed_by``, when given, still holds the claim)."""
    with store.write() as con:
        con.execute(
            "UPDATE extraction_jobs SET status = ?, error = ?, raw_output = ?, candidates = ?, "
            "finished_at = ?, claimed_by = NULL WHERE id = ? AND status = 'running' "
            "AND (CAST(? AS VARCHAR) IS NULL OR claimed_by = ?)",
            [status, error, raw_output, candidates, now, job_id, claimed_by, claimed_by],
        )


def requeue_orphans(store: Store, is_alive: Callable[[str], bool]) -> int:
    """Queue again the running jobs whose claimer (``claimed_by``) no longer lives."""
    with store.read() as con:
        running = con.execute(
            "SELECT id, claimed_by FROM extraction_jobs WHERE status = 'running'"
        ).fetchall()
    orphans = [(job_id, owner) for job_id, owner in running if not is_alive(owner or "")]
    requeued = 0
    for job_id, owner in orphans:
        with store.write() as con:  # unless it finished (or moved on) meanwhile
            requeued += len(
                con.execute(
                    "UPDATE extraction_jobs SET status = 'queued', claimed_by = NULL, "
                    "error = 'interrupted: the process running it ended' "
                    "WHERE id = ? AND status = 'running' AND claimed_by IS NOT DISTINCT FROM ? "
                    "RETURNING id",
                    [job_id, owner],
                ).fetchall()
            )
    return requeued


def cancel(store: Store, job_id: str | None = None) -> int:
    """Cancel queued jobs (one, or all); running ones finish on their own."""
    with store.write() as con:
        clause, params = ("AND id = ?", [job_id]) if job_id else ("", [])
        cancelled = con.execute(
            f"UPDATE extraction_jobs SET status = 'cancelled' WHERE status = 'queued' {clause} "
            "RETURNING id",
            params,
        ).fetchall()
    return len(cancelled)


def counts(store: Store) -> dict[str, int]:
    with store.read() as con:
        found = con.execute(
            "SELECT status, count(*) FROM extraction_jobs GROUP BY status"
        ).fetchall()
    return {status: int(n) for status, n in found}


def failures(store: Store) -> list[dict]:
    """The failed jobs, oldest first: id, persona, model, error, when it failed."""
    with store.read() as con:
        return rows(
            con,
            "SELECT id, npc, model, error, finished_at FROM extraction_jobs "
            "WHERE status = 'failed' ORDER BY finished_at, id",
        )


def frame(store: Store) -> pd.DataFrame:
    return store.table(
        "SELECT id, status, attempts, npc, model, prompt_version, candidates, error, "
        "created_at, started_at, finished_at, conversation_id, message_id, claimed_by, "
        "endpoint, raw_output "
        "FROM extraction_jobs ORDER BY created_at, id"
    )


def running_claimed_by(store: Store, claimed_by: str) -> int:
    with store.read() as con:
        count = scalar(
            con,
            "SELECT count(*) FROM extraction_jobs WHERE status = 'running' AND claimed_by = ?",
            [claimed_by],
        )
    return int(count)


def retry_failed(store: Store, job_id: str | None, model: str | None) -> list[str]:
    """Queue failed jobs again (one, or all), attempts reset; with ``model``, that model
    (and its default endpoint) replaces the one the job had. Returns their ids."""
    with store.write() as con:
        clause, params = ("AND id = ?", [job_id]) if job_id else ("", [])
        found = con.execute(
            f"SELECT id FROM extraction_jobs WHERE status = 'failed' {clause}", params
        ).fetchall()
        ids = [job for (job,) in found]
        for job in ids:
            con.execute(
                "UPDATE extraction_jobs SET status = 'queued', attempts = 0, "
                "model = coalesce(?, model), "
                "endpoint = CASE WHEN ? IS NULL THEN endpoint END, "
                "secret_options = CASE WHEN ? IS NULL THEN secret_options END, "
                "error = 'retried: ' || coalesce(error, '') WHERE id = ?",
                [model, model, model, job],
            )
    return ids
