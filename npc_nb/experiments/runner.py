"""Running an experiment: every selected exchange re-extracted under every arm, in the
background, resumably.

The work list (``experiment_jobs``, one row per arm and exchange) is made when the
experiment is created, exchange by exchange with the arms in a seeded order within each
(so arms run interleaved: an extraction time says nothing about the arm). A worker
thread, like the extraction worker's, claims one job at a time, asks the arm's
extractor (``arms.Arm.extract``) and proposes each usable item through the memory core
as a candidate of the arm. Each item's row in ``experiment_items`` is written in the
transaction that writes its candidate, so a run a killed kernel interrupted is resumed
by running again: jobs left running are queued again, and their items already proposed
are skipped. A job whose answer cannot be used fails with its error on the work list
(``Experiment.status`` counts failures per arm and shows the last error).
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from .._foundations.results import CandidateOutcome
from .._foundations.settings import Settings
from .._foundations.utc import utc_now
from ..chat.extraction import evidence_source, parse_candidates
from ..errors import CandidateError, InvalidValueError, NpcError
from ..models import gateway
from ..models.recording import Recorder
from ..store import Store, in_background
from ..store.conversations import chat_log
from ..store.experiments import experiment_rows
from .arms import Arm

__all__ = ["Runner"]

_OWNER = f"{socket.gethostname()}:{os.getpid()}"


class Runner:
    """The background run of one experiment in this process."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        recorder: Recorder,
        propose: Callable[..., CandidateOutcome],
        experiment_id: str,
        arms: dict[str, Arm],
    ) -> None:
        self._store, self._settings, self._recorder = store, settings, recorder
        self._propose_candidate = propose
        self._experiment_id = experiment_id
        self._arms = arms  # by arm id
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopping = False
        #: Called after each job (``False``) and when the run ends (``True``): the
        #: notebook's live progress (``progress.LiveProgress.update``).
        self.on_progress: Callable[[bool], None] | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, *, retry_failed: bool = False) -> None:
        """Queue again what a killed run left (and failed jobs, if asked); work on it on
        a thread of its own unless one is running."""
        with self._lock:
            if self.running:
                return
            experiment_rows.requeue_unfinished(
                self._store, self._experiment_id, failed=retry_failed
            )
            experiment_rows.set_state(self._store, self._experiment_id, "running")
            self._stopping = False
            self._thread = threading.Thread(
                target=self._work, name="npc_nb-experiment", daemon=True
            )
            self._thread.start()

    def wait(self, timeout: float | None) -> None:
        thread = self._thread
        if thread is None:
            return
        thread.join(timeout)
        if thread.is_alive():
            raise TimeoutError(
                f"The experiment is still running after {timeout:g} s; call wait() again, "
                "or look at status()."
            )

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping = True
        if self._thread is not None:
            self._thread.join(timeout)

    def _work(self) -> None:
        with contextlib.suppress(Exception), in_background():
            while not self._stopping and (
                job := experiment_rows.claim_next(self._store, self._experiment_id, _OWNER)
            ):
                self._run_safely(job)
                self._progress(final=False)
            if not self._stopping:
                experiment_rows.set_state(self._store, self._experiment_id, "done")
        self._progress(final=True)

    def _progress(self, *, final: bool) -> None:
        """Tell the live display; a display that fails never stops the run."""
        if self.on_progress is not None:
            with contextlib.suppress(Exception):
                self.on_progress(final)

    def _run_safely(self, job: dict) -> None:
        arm = self._arms[job["arm_id"]]
        raw: str | None = None
        try:
            raw = self._answer(arm, job)
            items, skipped = parse_candidates(raw, arm.limit)
            done = experiment_rows.items_done(self._store, job["arm_id"], job["message_id"])
            refused = [self._propose(arm, job, i, item) for i, item in enumerate(items)
                       if i not in done]  # fmt: skip
            skipped += [f"item: {why}" for why in refused if why]
            experiment_rows.finish(
                self._store,
                job,
                state="done",
                now=utc_now(),
                raw_output=raw,
                candidates=len(items),
                error=("skipped: " + "; ".join(skipped))[:2000] if skipped else None,
            )
        except Exception as exc:  # any failure is the job's, recorded, the run goes on
            error = f"{type(exc).__name__}: {exc}"[:2000]
            with contextlib.suppress(Exception):
                experiment_rows.finish(
                    self._store, job, state="failed", now=utc_now(), error=error, raw_output=raw
                )

    def _answer(self, arm: Arm, job: dict) -> str:
        user = chat_log.message(self._store, job["user_message_id"])
        reply = chat_log.message(self._store, job["message_id"])
        if user is None or reply is None:
            raise NpcError("the exchange this job refers to is no longer in the store")
        caller = f"an experiment's extraction of message {job['message_id']}"
        return arm.extract(user["content"], reply["content"], self._settings,
                           self._recorder, caller)  # fmt: skip

    def _propose(self, arm: Arm, job: dict, index: int, item: dict[str, Any]) -> str | None:
        """Propose one item as the arm's candidate; why it was refused, if it was."""
        quote = item.get("evidence_quote")
        source = evidence_source(self._store, job, quote)
        try:
            self._propose_candidate(
                item["statement"],
                category=item["category"],
                npc=job["npc"],
                team=job["team"],
                evidence=quote,
                source_message_id=source,
                conversation_id=job["conversation_id"],
                model=arm.model if arm.extractor is None else arm.config["extractor"],
                provider=gateway.provider_of(arm.model) if arm.extractor is None else None,
                prompt_version=arm.config["prompt_version"],
                confidence=item.get("confidence"),
                experiment_arm=job["arm_id"],
                experiment_item=(job["arm_id"], job["message_id"], index),
            )
        except (CandidateError, InvalidValueError) as exc:  # the model's item is unusable
            return str(exc)
        return None
