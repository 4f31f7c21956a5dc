"""The one module that imports litellm, lazily: ``import litellm`` costs seconds.

Everything model-shaped goes through here: chat completions (streamed or not), the
built-in offline provider (``npc_nb/offline``, registered as a litellm custom provider
so it takes the same path as any real model), and the translation of every provider
failure into one ``ModelCallError`` that says what to do about it.

litellm is imported once, under a lock, by whichever comes first: the first model call,
or the background load ``%load_ext npc_nb`` starts (``preload.py``); a call that arrives
during that import waits for it and never starts a second. Before any of this, a call
to a hosted model whose key is missing fails at once, naming the variable to set
(``credentials.missing_keys``), without importing litellm or opening a connection.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .._foundations.redact import has_credentials, redact_text, strip_credentials, url_secrets
from .._foundations.text import clean_text
from ..errors import ModelCallError
from . import offline
from .credentials import missing_keys
from .offline_concepts import offline_concepts
from .recording import Completion, RecordedCall, Recording, ReplayedStream

__all__ = [
    "ENDPOINT_OPTIONS",
    "SECRET_OPTIONS",
    "URL_OPTIONS",
    "Completion",
    "ModelStream",
    "ReplayedStream",
    "client_loaded",
    "complete",
    "endpoint_options",
    "load_client",
    "provider_of",
    "secret_options",
    "stream",
    "supports_cache_breakpoint",
]

_lock = threading.Lock()
_litellm: Any = None
_CACHE_BREAKPOINT_PROVIDERS = ("anthropic", "bedrock", "vertex_ai")
#: Call options that say where a model is: stored with an extraction job so the
#: extraction of a turn goes where the turn went.
ENDPOINT_OPTIONS = (
    "api_base",
    "base_url",
    "api_version",
    "custom_llm_provider",
    "organization",
    "aws_region_name",
    "vertex_project",
    "vertex_location",
)
#: Endpoint options that are URLs: stored without their credentials (a password, a
#: key in the query); the full URL is then kept in memory like a credential.
URL_OPTIONS = ("api_base", "base_url")
#: Call options that carry credentials (litellm's names): kept in memory, never stored.
SECRET_OPTIONS = (
    "api_key",
    "azure_ad_token",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "vertex_credentials",
    "client_secret",
    "extra_headers",
    "headers",
)


def endpoint_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options of a call that name its endpoint (never a secret): a URL keeps its
    scheme, host, port and path only."""
    return {
        k: strip_credentials(v) if k in URL_OPTIONS and isinstance(v, str) else v
        for k, v in options.items()
        if k in ENDPOINT_OPTIONS and v is not None
    }


def secret_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options of a call that carry credentials: kept in memory, never stored. An
    endpoint URL with credentials in it is one of them."""
    return {
        k: v
        for k, v in options.items()
        if v is not None
        and (
            k in SECRET_OPTIONS or (k in URL_OPTIONS and isinstance(v, str) and has_credentials(v))
        )
    }


def _redact(text: str, options: dict[str, Any]) -> str:
    """``text`` with every secret option's value and every URL credential hidden, so
    no key reaches an error, a job row or a log."""
    known: list[str] = []
    for name, value in secret_options(options).items():
        for secret in value.values() if isinstance(value, dict) else [value]:
            if isinstance(secret, str):
                known += url_secrets(secret) if name in URL_OPTIONS else [secret]
    return redact_text(text, *known)


def client_loaded() -> bool:
    """Whether litellm is loaded, so that a model call starts at once."""
    return _litellm is not None


def load_client() -> None:
    """Import litellm now, if nobody has (``preload.start`` calls this on its thread). A
    failure is not lost: the first model call imports again and reports why."""
    with contextlib.suppress(Exception):
        _lib()


def _import_litellm() -> Any:
    """The import itself (a seam: a test holds it to see what waits for it)."""
    import litellm

    return litellm


def _lib() -> Any:
    """litellm, imported once, quiet, offline-safe, with the offline provider registered."""
    global _litellm
    if _litellm is None:
        with _lock:
            if _litellm is None:
                # Without this, litellm fetches its cost map from the network at import.
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                litellm = _import_litellm()
                litellm.suppress_debug_info = True
                _quiet_logs()
                litellm.custom_provider_map = [
                    *[p for p in litellm.custom_provider_map if p.get("provider") != "npc_nb"],
                    {"provider": "npc_nb", "custom_handler": _offline_handler(litellm)},
                ]
                _litellm = litellm
    return _litellm


def _quiet_logs() -> None:
    """litellm logs every call at INFO; in a notebook that lands in the cell's output.
    Its loggers are set to WARNING unless the user has given them a level already."""
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)


class ModelStream:
    """Text chunks as they arrive; ``result`` is filled once the stream is exhausted
    (and handed to ``on_done``: a recording keeps it)."""

    def __init__(
        self,
        chunks: Iterator[Any],
        model: str,
        started: float,
        options: dict[str, Any],
        on_done: Callable[[Completion], None] | None = None,
    ) -> None:
        self._chunks = chunks
        self._model = model
        self._options = options
        self._started = started
        self._on_done = on_done
        self.result: Completion | None = None

    def __iter__(self) -> Iterator[str]:
        parts: list[str] = []
        usage = None
        try:
            for chunk in self._chunks:
                usage = getattr(chunk, "usage", None) or usage
                delta = chunk.choices[0].delta.content if chunk.choices else None
                if delta:
                    delta = clean_text(delta)
                    parts.append(delta)
                    yield delta
        except Exception as exc:
            raise _translate(exc, self._model, self._options) from None
        self.result = Completion(
            "".join(parts),
            self._model,
            provider_of(self._model),
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
            (time.perf_counter() - self._started) * 1000,
        )
        if self._on_done is not None:
            self._on_done(self.result)


def complete(
    model: str, messages: list[dict], *, recording: Recording | None = None, **options: Any
) -> Completion:
    """One completion, not streamed; with a ``recording``, recorded or replayed
    (``recording``)."""
    if recording is None:
        return _complete(model, messages, options)
    call = RecordedCall(recording, model, messages, options, secret_options(options))
    if recording.mode == "replay":
        return call.replayed(provider_of(model))
    result = _complete(model, messages, options)
    call.keep(result)
    return result


def _complete(model: str, messages: list[dict], options: dict[str, Any]) -> Completion:
    _require_credentials(model, options)
    litellm = _lib()
    started = time.perf_counter()
    try:
        response = litellm.completion(model=model, messages=messages, **options)
    except Exception as exc:
        raise _translate(exc, model, options) from None
    usage = getattr(response, "usage", None)
    return Completion(
        clean_text(response.choices[0].message.content or ""),
        model,
        provider_of(model),
        getattr(usage, "prompt_tokens", None),
        getattr(usage, "completion_tokens", None),
        (time.perf_counter() - started) * 1000,
    )


def stream(
    model: str, messages: list[dict], *, recording: Recording | None = None, **options: Any
) -> ModelStream | ReplayedStream:
    """A streamed completion; the call itself fails fast on a missing key or bad model.
    With a ``recording``, recorded when the stream ends, or replayed."""
    on_done = None
    if recording is not None:
        call = RecordedCall(recording, model, messages, options, secret_options(options))
        if recording.mode == "replay":
            return ReplayedStream(call.replayed(provider_of(model)))
        on_done = call.keep
    _require_credentials(model, options)
    litellm = _lib()
    started = time.perf_counter()
    try:
        chunks = litellm.completion(
            model=model,
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
            **options,
        )
    except Exception as exc:
        raise _translate(exc, model, options) from None
    return ModelStream(iter(chunks), model, started, options, on_done)


def provider_of(model: str) -> str:
    """The provider litellm routes ``model`` to ("openai", "anthropic", "npc_nb", ...)."""
    if offline.is_offline(model):
        return "npc_nb"
    if "/" in model:
        return model.split("/", 1)[0]
    try:
        return str(_lib().get_llm_provider(model)[1])
    except Exception:
        return "unknown"


def supports_cache_breakpoint(model: str) -> bool:
    """Whether the provider honours an explicit prompt-cache breakpoint (cache_control)."""
    return provider_of(model) in _CACHE_BREAKPOINT_PROVIDERS and "claude" in model


def _require_credentials(model: str, options: dict[str, Any]) -> None:
    """Refuse a call whose provider's key is surely missing, before litellm is imported
    and before any connection is attempted."""
    if missing := missing_keys(model, options, _litellm):
        raise _no_credentials(model, missing, "MissingCredentials")


def _no_credentials(model: str, missing: list[str], kind: str) -> ModelCallError:
    where = f"set {' or '.join(missing)}" if missing else "set the provider's API key"
    advice = (
        f"No usable credentials for {model!r}: {where} in the environment "
        "(npc_nb never stores keys)"
    )
    return ModelCallError(advice, model=model, kind=kind, alternative=offline.USE_IN_PYTHON)


def _translate(exc: Exception, model: str, options: dict[str, Any]) -> ModelCallError:
    """One ModelCallError that says what to do. The provider's own exception is not
    chained (``from None``): its text and attributes may hold the key."""
    litellm = _lib()
    name, message = type(exc).__name__, _redact(str(exc), options)
    if (
        isinstance(exc, litellm.AuthenticationError)
        or "Missing credentials" in message
        or ("api_key" in message.lower() and "set" in message.lower())
    ):
        return _no_credentials(model, _missing_keys(model), name)
    if isinstance(exc, litellm.ContextWindowExceededError):
        advice = (
            f"The prompt is too long for {model!r}. Start a new conversation (--new), lower "
            "context_max_chars, or use a model with a larger context window."
        )
    elif isinstance(exc, litellm.RateLimitError):
        advice = f"{model!r} is rate-limited by its provider. Wait a moment and retry."
    elif isinstance(exc, litellm.Timeout):
        advice = f"The call to {model!r} timed out. Retry, or pass a larger timeout=."
    elif isinstance(exc, litellm.APIConnectionError):
        advice = f"Cannot reach the provider of {model!r}. Check the network or api_base."
    elif "LLM Provider NOT provided" in message:
        advice = (
            f"Unknown model {model!r}: name it as provider/model, e.g. 'openai/gpt-4o-mini' "
            "or 'ollama/llama3'."
        )
    else:
        advice = f"The call to {model!r} failed ({name}): {message.splitlines()[0][:300]}"
    return ModelCallError(advice, model=model, kind=name)


def _missing_keys(model: str) -> list[str]:
    try:
        return list(_lib().validate_environment(model).get("missing_keys") or [])
    except Exception:
        return []


def _offline_handler(litellm: Any) -> Any:
    """The offline demo model as a litellm custom provider (streaming included)."""

    class OfflineModel(litellm.CustomLLM):
        def completion(self, *args: Any, **kwargs: Any) -> Any:
            text = _offline_text(kwargs)
            response = kwargs["model_response"]
            response.choices[0].message.content = text
            response.model = offline.MODEL
            prompt = sum(len(offline.message_text(m)) for m in kwargs["messages"]) // 4
            response.usage = litellm.Usage(
                prompt_tokens=prompt,
                completion_tokens=len(text) // 4,
                total_tokens=prompt + len(text) // 4,
            )
            return response

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict]:
            # A line per chunk: litellm spends most of a millisecond on each chunk.
            lines = _offline_text(kwargs).splitlines(keepends=True) or [""]
            for index, line in enumerate(lines):
                last = index == len(lines) - 1
                yield {
                    "text": line,
                    "is_finished": last,
                    "finish_reason": "stop" if last else "",
                    "usage": None,
                    "index": 0,
                    "tool_use": None,
                }

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            return self.completion(*args, **kwargs)

        async def astreaming(self, *args: Any, **kwargs: Any) -> Any:
            for chunk in self.streaming(*args, **kwargs):
                yield chunk

    return OfflineModel()


def _offline_text(kwargs: dict[str, Any]) -> str:
    params = kwargs.get("optional_params") or {}
    if delay := float(params.get("offline_delay") or 0):
        time.sleep(delay)  # lets demos and tests see work happen in the background
    messages = kwargs["messages"]
    if any(offline.CONCEPT_MARKER in offline.message_text(m) for m in messages):
        return offline_concepts(messages)
    if any(offline.JUDGE_MARKER in offline.message_text(m) for m in messages):
        return offline.judge(messages)
    if any(offline.EXTRACTION_MARKER in offline.message_text(m) for m in messages):
        return offline.extract(messages, limit=int(params.get("max_memories", 5)))
    return offline.chat_reply(messages)
