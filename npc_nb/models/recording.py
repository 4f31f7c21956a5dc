"""Recorded model replies: the ``model_replay`` setting, at the gateway.

Every model call (a chat turn, an extraction, the model judge, the graph's concepts)
goes through ``gateway.complete`` or ``gateway.stream`` with a ``Recording`` from the
project's ``Recorder``. Under ``"record"`` the call is made and its reply kept in the
project store under the request's fingerprint; under ``"replay"`` the first reply
kept under that fingerprint (the first in the recordings' hash chain) is returned,
streamed in chunks as a model would, and the provider is never called: a request
nobody recorded is an ``UnrecordedCallError`` naming the caller, never a live call,
and a reply changed since it was recorded (its link no longer holds) is a
``HistoryChangedError``, never served. ``"off"`` changes nothing.

A re-run (``npc_nb.rerun``, ``npc-nb rerun``) forces the mode from outside the notebook:
its kernel gets ``NPC_NB_RERUN=replay`` (or ``live``, which is ``"off"``), and that wins
over whatever the notebook's own cells configure, so the saved cells run unchanged.

The fingerprint is SHA-256 over canonical JSON (keys sorted, no spaces) of everything
that changes the answer: the model, every message (the persona's directive, the memory
block, the history, the new message), the call's parameters (temperature, max_tokens,
the endpoint without its credentials, ...) and what the caller adds (a turn: the hash
of its memory block). Nothing volatile goes in: no id, no time, no credential, no
timeout or retry count, so the same request next week has the same fingerprint, and a
changed memory state never gets an old reply.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._foundations.ids import new_id
from .._foundations.redact import strip_credentials
from .._foundations.settings import Settings
from .._foundations.utc import utc_now
from ..errors import ConfigError, HistoryChangedError, UnrecordedCallError
from ..store import Store
from ..store.runs import recordings

__all__ = [
    "RERUN_VARIABLE",
    "Completion",
    "RecordedCall",
    "Recorder",
    "Recording",
    "ReplayedStream",
    "effective_mode",
    "fingerprint",
    "replaying_a_rerun",
]

#: Set in a re-run's kernel: "replay" (every call from the recordings) or "live" (every
#: call made, nothing kept), whatever the notebook's cells set ``model_replay`` to.
RERUN_VARIABLE = "NPC_NB_RERUN"
_FORCED = {"replay": "replay", "live": "off"}


def effective_mode(settings: Settings) -> str:
    """``model_replay`` as calls follow it: the re-run's mode when one forces it, else the
    setting."""
    forced = os.environ.get(RERUN_VARIABLE)
    if not forced:
        return settings.model_replay
    if forced not in _FORCED:
        raise ConfigError(
            f"{RERUN_VARIABLE} is {forced!r}: set it to replay or live (npc-nb rerun sets "
            "it in the kernel it starts), or unset it."
        )
    return _FORCED[forced]


def replaying_a_rerun() -> bool:
    """Whether this kernel is a re-run replaying its notebook (``NPC_NB_RERUN=replay``):
    then nothing is called behind the cells (background extraction waits in the queue),
    since a call the recording kernel never made has no reply to replay."""
    return os.environ.get(RERUN_VARIABLE) == "replay"


#: Call options that change nothing in the answer: left out of the fingerprint.
VOLATILE_OPTIONS = frozenset(
    {
        "timeout",
        "request_timeout",
        "num_retries",
        "max_retries",
        "offline_delay",
        "metadata",
        "stream_options",
        "user",
        "logger_fn",
    }
)


@dataclass(frozen=True)
class Recording:
    """How one model call is recorded or replayed: the mode, the store that keeps the
    replies, who is calling (named in an error) and what else the fingerprint covers."""

    mode: str  # "record" or "replay"
    store: Store
    caller: str
    extra: Mapping[str, Any] = field(default_factory=dict)


class Recorder:
    """The project's recordings: a ``Recording`` per call while ``model_replay`` is on."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self._store = store
        self._settings = settings

    @property
    def mode(self) -> str:
        return effective_mode(self._settings)

    def recording(self, caller: str, **extra: Any) -> Recording | None:
        """What a call by ``caller`` does under the setting now (None: nothing)."""
        if self.mode == "off":
            return None
        return Recording(self.mode, self._store, caller, extra)


def fingerprint(
    model: str, messages: list[dict], options: Mapping[str, Any], extra: Mapping[str, Any]
) -> tuple[str, str]:
    """(SHA-256 hex, the canonical JSON it is taken of) of a request; ``options``
    without their credentials (the gateway leaves those out)."""
    kept = {
        name: strip_credentials(value) if isinstance(value, str) and "://" in value else value
        for name, value in options.items()
        if name not in VOLATILE_OPTIONS and value is not None
    }
    request = {"model": model, "messages": messages, "options": kept, "extra": dict(extra)}
    text = json.dumps(
        request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), text


@dataclass
class Completion:
    """What a model call returned (live, or replayed from a recording)."""

    text: str
    model: str
    provider: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    #: The ``model_recordings`` row the reply was kept in or replayed from (None: neither).
    recording_id: str | None = None


class RecordedCall:
    """One call under a ``Recording``: its fingerprint, and its reply kept or replayed."""

    def __init__(
        self,
        recording: Recording,
        model: str,
        messages: list[dict],
        options: Mapping[str, Any],
        secrets: Mapping[str, Any],
    ) -> None:
        self.recording, self.model = recording, model
        public = {k: v for k, v in options.items() if k not in secrets}
        self.key, self.request = fingerprint(model, messages, public, recording.extra)
        self._started = time.perf_counter()

    def replayed(self, provider: str) -> Completion:
        """The first reply recorded for this request; an UnrecordedCallError if none, a
        HistoryChangedError if it no longer matches its hash."""
        found = recordings.first_recording(self.recording.store, self.key)
        if found is not None and not found["intact"]:
            raise HistoryChangedError(
                f"model_replay='replay': the recorded reply for this call "
                f"({self.recording.caller}, model {self.model}, recording {found['id']}) no "
                "longer matches its hash in the recordings' chain: it, or the recording "
                "before it, was changed or deleted (by SQL) after it was recorded, so it is "
                "not served. Nothing was sent to the model. "
                "Run nb.verify() (npc-nb verify) to see what else changed, and restore the "
                "store from a copy you trust, or record the call again into a new project."
            )
        if found is None:
            raise UnrecordedCallError(
                f"model_replay='replay': no reply was recorded for this call "
                f"({self.recording.caller}, model {self.model}, fingerprint {self.key[:12]}): "
                "its request differs from every recorded one (another message, memory "
                "block, history, model or parameter). Nothing was sent to the model. Run "
                "it once with model_replay='record', or set model_replay='off' to call "
                "the model.",
                model=self.model,
                kind="UnrecordedCall",
            )
        latency = (time.perf_counter() - self._started) * 1000
        tokens = (found["prompt_tokens"], found["completion_tokens"])
        return Completion(found["reply"], self.model, provider, *tokens, latency, found["id"])

    def keep(self, result: Completion) -> None:
        """Record ``result`` as the reply to this request (its ``recording_id`` says where)."""
        result.recording_id = new_id()
        recordings.record_reply(
            self.recording.store,
            {
                "id": result.recording_id,
                "fingerprint": self.key,
                "model": self.model,
                "caller": self.recording.caller,
                "request": self.request,
                "reply": result.text,
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "recorded_at": utc_now(),
            },
        )


class ReplayedStream:
    """A recorded reply streamed in chunks as a model sends them (a line at a time, long
    lines in pieces of ``CHUNK`` characters); ``result`` is set once it is read."""

    CHUNK = 64

    def __init__(self, completion: Completion) -> None:
        self._completion = completion
        self.result: Completion | None = None

    def __iter__(self) -> Iterator[str]:
        for line in self._completion.text.splitlines(keepends=True):
            for start in range(0, len(line), self.CHUNK):
                yield line[start : start + self.CHUNK]
        self.result = self._completion
