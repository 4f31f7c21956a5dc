"""Background extraction: a durable job queue and one worker thread per store per kernel.

After each exchange a job row is written (``queued``); the cell never waits for it. A
worker thread, started on demand, claims jobs one at a time, asks the extraction model
for candidates, and feeds each to ``add_candidate`` (which applies the tombstones). The
model's raw output is kept on the job. Output that cannot be parsed leaves the job
``queued`` for a bounded number of retries, then ``failed`` with a clear error; items
that are individually unusable (unknown category, empty, too long, nested too deep, a
number too long to convert, a lone surrogate) are skipped and counted in the job's
error, and the rest are kept (``_foundations.json_items`` parses each item on its own). A job a
killed kernel left behind is picked up the next time the project is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .._foundations.ids import new_id
from .._foundations.json_items import OutputError, split_items
from .._foundations.results import CandidateOutcome
from .._foundations.settings import Settings
from .._foundations.text import clean_text, find_evidence
from .._foundations.utc import utc_now
from ..errors import (
    CandidateError,
    InvalidValueError,
    ModelCallError,
    NpcError,
    UnrecordedCallError,
)
from ..models import gateway, offline
from ..models.recording import Recorder, replaying_a_rerun
from ..store import Connection, Store, in_background
from ..store.conversations import chat_log, jobs
from ..store.memories.predicates import Moment
from ..vocabulary import CATEGORIES
from . import prompts
from .job_credentials import JobCredentials, MissingSecretError

__all__ = [
    "Extraction",
    "ExtractionStatus",
    "evidence_source",
    "failure_notice",
    "parse_candidates",
]

MAX_OUTPUT_CHARS = 200_000
#: How long closing a project (or leaving Python) waits for the worker's current job.
STOP_TIMEOUT = 2.0
_HOST = socket.gethostname()


def parse_candidates(raw: str, limit: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Usable candidates from raw model output, and why any items were skipped.

    Raises OutputError when the output as a whole is unusable; one bad item (nested too
    deep, a number too long, a lone surrogate, an unknown category, ...) is skipped."""
    kept, skipped = _candidates(raw, limit)
    return [item for _, item in kept], skipped


def _candidates(raw: str, limit: int) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """The usable candidates with their index in the output, and the skipped items."""
    items, skipped = split_items(raw, "memories", max_chars=MAX_OUTPUT_CHARS)
    kept: list[tuple[int, dict[str, Any]]] = []
    for index, item in items:
        problem = _problem(item)
        if problem:
            skipped.append(f"item {index}: {problem}")
        elif len(kept) < limit:
            kept.append((index, item))
        else:
            skipped.append(f"item {index}: over the limit of {limit}")
    return kept, skipped


def evidence_source(store: Store, job: dict, quote: str | None) -> str:
    """The message a candidate's evidence comes from: the user's, unless the quote is
    found in the reply and not in the user's message (then the reply's)."""
    reply = chat_log.message(store, job["message_id"])
    if quote and reply and find_evidence(quote, reply["content"]):
        user = chat_log.message(store, job["user_message_id"])
        if user and not find_evidence(quote, user["content"]):
            return str(job["message_id"])
    return str(job["user_message_id"])


def failure_notice(failed: list[dict[str, Any]]) -> str | None:
    """What a reply says about extractions that failed since the last one: which
    exchange, and why (the last failure's error, without its class name)."""
    if not failed:
        return None
    why = re.sub(r"^\w+Error: ", "", failed[-1]["error"] or "no error was recorded")
    if len(failed) == 1:
        return (
            f"The memory extraction of the previous exchange with {failed[0]['npc']} failed: {why}"
        )
    return f"The memory extraction of {len(failed)} earlier exchanges failed; the last: {why}"


def _problem(item: object) -> str | None:
    if not isinstance(item, dict):
        return "not an object"
    if not isinstance(item.get("statement"), str) or not item["statement"].strip():
        return "statement missing or not text"
    if item.get("category") not in CATEGORIES:
        return f"unknown category {item.get('category')!r}"
    quote = item.get("evidence_quote")
    if quote is not None and not isinstance(quote, str):
        return "evidence_quote is not text"
    confidence = item.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 1
    ):
        return f"confidence {confidence!r} is not a number from 0 to 1"
    return None


@dataclass(frozen=True)
class ExtractionStatus:
    """How many extraction jobs are in each state."""

    queued: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    cancelled: int = 0

    @property
    def pending(self) -> int:
        return self.queued + self.running

    def __str__(self) -> str:
        parts = [f"{n} {k}" for k, n in vars(self).items() if n]
        return "extraction jobs: " + (", ".join(parts) if parts else "none")

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self)}


class Extraction:
    """The extraction queue of one project: report, wait for, cancel, run."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        propose: Callable[..., CandidateOutcome],
        *,
        recorder: Recorder | None = None,
        pinned: Callable[[], Moment | None] = lambda: None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._propose_candidate = propose  # the memory core's add_candidate
        self._recorder = recorder  # model_replay: extraction follows it too
        self._pinned = pinned  # a pinned kernel's examples are the snapshot's
        self._idle = threading.Condition()
        self._thread: threading.Thread | None = None
        self._claimed_by = f"{_HOST}:{os.getpid()}"
        self._kicked = False
        self._stopping = False  # set by stop(): claim no further job
        self._credentials = JobCredentials()  # job id -> credentials, memory only
        self._reported: set[tuple[str, Any]] = set()  # failures shown: (job id, finished_at)

    def enqueue(
        self,
        con: Connection,
        *,
        conversation_id: str,
        user_message_id: str,
        message_id: str,
        npc: str,
        team: str | None,
        model: str,
        endpoint: dict[str, Any] | None = None,
        secrets: dict[str, Any] | None = None,
    ) -> str:
        """Queue a job inside the caller's transaction; ``kick()`` once it has committed.

        ``endpoint`` (where the turn's model was called, URLs without credentials) is
        stored on the job; ``secrets`` (its api_key, headers, an endpoint URL with its
        credentials) are kept in this process only, never stored.
        """
        job_id = new_id()
        self._credentials.keep(job_id, secrets)
        chat_log.insert_row(
            con,
            "extraction_jobs",
            {
                "id": job_id,
                "conversation_id": conversation_id,
                "message_id": message_id,
                "user_message_id": user_message_id,
                "npc": npc,
                "team": team,
                "status": "queued",
                "attempts": 0,
                "model": model,
                "prompt_version": prompts.EXTRACTION_VERSION,
                "created_at": utc_now(),
                "endpoint": json.dumps(endpoint) if endpoint else None,
                "secret_options": sorted(secrets) if secrets else None,
            },
        )
        return job_id

    def kick(self) -> None:
        """Start working on queued jobs, when extraction runs in the background."""
        if self._in_background():
            self.start()

    def _in_background(self) -> bool:
        """Whether jobs run behind the cells: as set, except in a re-run replaying its
        notebook (``npc_nb.rerun``), whose kernel leaves them queued, so that no job the
        recording kernel never extracted (it may close first) fails under its replies;
        ``wait()`` still runs them, replayed, when a cell asks."""
        return self._settings.extract_in_background and not replaying_a_rerun()

    def recover(self) -> int:
        """Queue again jobs a dead process (or a dead worker of this one) left running;
        start work if any job is queued."""
        with self._idle:
            worker_alive = self._thread is not None and self._thread.is_alive()
        requeued = jobs.requeue_orphans(
            self._store,
            lambda owner: (
                worker_alive if owner == self._claimed_by else self._store.claimant_alive(owner)
            ),
        )
        if self.status().queued and self._in_background():
            self.start()
        return requeued

    def start(self) -> None:
        """Make sure a worker will look at the queue (starting a thread if none runs)."""
        with self._idle:
            self._kicked = True  # a running worker takes one more look before it exits
            self._stopping = False
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._work, name="npc_nb-extraction", daemon=True
                )
                self._thread.start()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Let the worker finish its current job and end, waiting at most ``timeout``
        seconds. A job still in a model call then stays claimed by this process, which
        is ending or closing: the next open queues it again (nothing is lost)."""
        with self._idle:
            self._stopping = True
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._idle:
            if self._thread is None or not self._thread.is_alive():
                self._stopping = False  # stopped: the queue may be worked again later

    def status(self) -> ExtractionStatus:
        return ExtractionStatus(**jobs.counts(self._store))

    def jobs(self) -> pd.DataFrame:
        """Every job with its status, attempts, error and the model's raw output."""
        return jobs.frame(self._store)

    def unreported_failures(self) -> list[dict[str, Any]]:
        """Failed jobs this process has not yet reported under a reply, oldest first;
        each failure is reported once (a job that fails again after a retry is new)."""
        found = [
            job
            for job in jobs.failures(self._store)
            if (job["id"], job["finished_at"]) not in self._reported
        ]
        self._reported.update((job["id"], job["finished_at"]) for job in found)
        return found

    def cancel(self, job_id: str | None = None) -> int:
        """Cancel one queued job, or all of them; returns how many were cancelled."""
        return jobs.cancel(self._store, job_id)

    def wait(self, timeout: float | None = 60.0) -> ExtractionStatus:
        """Block until no job is queued or running in this process (runs them in this
        thread if extraction is not in the background)."""
        if not self._in_background():
            self.recover()
            self.run_pending()
            return self.status()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.recover()  # a worker that died leaves its job running: queue it again
            with self._idle:
                while self._thread is not None and self._thread.is_alive():
                    if deadline is not None and time.monotonic() >= deadline:
                        raise TimeoutError(
                            f"Extraction still running after {timeout:g} s ({self.status()}); "
                            "call wait() again or look at extraction.jobs()."
                        )
                    self._idle.wait(timeout=0.2)
            status = self.status()
            if not status.queued and not self._running_here():
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(
                    f"Extraction still pending after {timeout:g} s ({status}); call wait() "
                    "again or look at extraction.jobs()."
                )
            time.sleep(0.05)

    def _running_here(self) -> bool:
        return jobs.running_claimed_by(self._store, self._claimed_by) > 0

    def run_pending(self) -> int:
        """Run every queued job in this thread; returns how many ran."""
        ran = 0
        with self._store.claiming(self._claimed_by):  # others can tell this claimer lives
            while not self._stopping and (
                job := jobs.claim_next(self._store, self._claimed_by, utc_now())
            ):
                self._run_safely(job)
                ran += 1
        return ran

    def _work(self) -> None:
        while True:
            # If the store is unreachable (locked, gone), stop; wait() and recover() retry.
            # Behind the cell: its store work goes first whenever it waits for the file.
            with contextlib.suppress(Exception), in_background():
                self.run_pending()
            with self._idle:
                if self._kicked and not self._stopping:  # queued meanwhile: look again
                    self._kicked = False
                    continue
                self._thread = None
                self._idle.notify_all()
                return

    def _run_safely(self, job: dict) -> None:
        """Run a job; whatever happens, leave it done, queued for a retry, or failed."""
        try:
            self._run(job)
        except Exception as exc:
            with contextlib.suppress(Exception):  # last resort: record what we can
                jobs.finish(
                    self._store,
                    job["id"],
                    status="failed",
                    now=utc_now(),
                    error=clean_text(f"could not record the result: {exc}")[:2000],
                    claimed_by=self._claimed_by,
                )

    def _run(self, job: dict) -> None:
        raw: str | None = None
        settings = self._settings
        try:
            raw = self._call_model(job)
            items, skipped = _candidates(raw, settings.max_memories_per_exchange)
            outcomes = [(index, self._propose(job, item)) for index, item in items]
            skipped += [f"item {i}: {why}" for i, why in outcomes if isinstance(why, str)]
            added = sum(1 for _, outcome in outcomes if outcome is True)
            error = f"skipped {len(skipped)}: " + "; ".join(skipped)[:2000] if skipped else None
            jobs.finish(
                self._store,
                job["id"],
                status="done",
                now=utc_now(),
                error=error,
                raw_output=raw,
                candidates=added,
                claimed_by=self._claimed_by,
            )
        except (OutputError, ModelCallError, NpcError) as exc:
            if isinstance(exc, ModelCallError):  # the way round is a setting, not model=
                exc = exc.instead(offline.USE_IN_EXTRACTION)
            retry = job["attempts"] < settings.extraction_attempts
            retry = retry and not isinstance(exc, MissingSecretError | UnrecordedCallError)
            jobs.finish(
                self._store,
                job["id"],
                status="queued" if retry else "failed",
                now=utc_now(),
                error=f"{type(exc).__name__}: {exc}"[:2000],
                raw_output=raw,
                claimed_by=self._claimed_by,
            )
            if retry and isinstance(exc, ModelCallError):  # rate limits, timeouts: back off
                time.sleep(settings.extraction_retry_delay * 2 ** (job["attempts"] - 1))

    def _call_model(self, job: dict) -> str:
        user = chat_log.message(self._store, job["user_message_id"])
        reply = chat_log.message(self._store, job["message_id"])
        if user is None or reply is None:
            raise NpcError("the exchange this job refers to is no longer in the store")
        settings = self._settings
        examples = chat_log.few_shot_examples(
            self._store, job["npc"], job["team"], per_kind=3, as_of=self._pinned()
        )
        messages = prompts.extraction_messages(
            user["content"], reply["content"], examples, settings.max_memories_per_exchange
        )
        options = self._credentials.call_options(job)
        if offline.is_offline(job["model"]):
            options = {
                "max_memories": settings.max_memories_per_exchange,
                "offline_delay": settings.offline_delay,
            }
        caller = f"the extraction of an exchange with {job['npc']} (message {job['message_id']})"
        recording = self._recorder.recording(caller) if self._recorder is not None else None
        return gateway.complete(job["model"], messages, recording=recording, **options).text

    def retry(self, job_id: str | None = None, **secrets: Any) -> int:
        """Queue failed jobs again (all, or one) with the current settings; returns how
        many. Credentials a job's turn had (``api_key=...``, or ``api_base=...`` whole
        when its URL held a password or key) can be given again here."""
        model = self._settings.extraction_model
        retried = jobs.retry_failed(self._store, job_id, model)
        for retried_id in retried:
            self._credentials.keep(retried_id, secrets)
        if retried:
            self.kick()
        return len(retried)

    def _propose(self, job: dict, item: dict) -> bool | str:
        """True if queued, False if merged or suppressed, else why it was refused."""
        quote = item.get("evidence_quote")
        source = evidence_source(self._store, job, quote)
        try:
            outcome = self._propose_candidate(
                item["statement"],
                category=item["category"],
                npc=job["npc"],
                team=job["team"],
                evidence=quote,
                source_message_id=source,
                conversation_id=job["conversation_id"],
                model=job["model"],
                provider=gateway.provider_of(job["model"]),
                prompt_version=job["prompt_version"],
                confidence=item.get("confidence"),
            )
        except (CandidateError, InvalidValueError) as exc:  # the model's item is unusable
            return str(exc)
        return outcome.queued
