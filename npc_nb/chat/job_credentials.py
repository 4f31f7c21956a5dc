"""The credentials of queued extraction jobs: held in this process only, never stored.

A turn may carry credentials (``api_key=``, ``extra_headers=``, an ``api_base`` whose
URL holds a password or a key): its job stores the endpoint without them and only the
*names* of those options (``secret_options``), while their values stay here, keyed by
job id. A job whose credentials this process lacks (the kernel restarted) is refused
with ``MissingSecretError``, which names what is missing, what the store kept, and
``nb.extraction.retry(job_id, name=...)``: the one way to give them again.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import NpcError
from ..models import gateway

__all__ = ["JobCredentials", "MissingSecretError"]


class MissingSecretError(NpcError):
    """A job's turn had credentials that this process no longer holds."""


class JobCredentials:
    """Job id -> the credential options of its turn, in memory only."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, Any]] = {}

    def keep(self, job_id: str, secrets: dict[str, Any] | None) -> None:
        """Hold ``secrets`` for ``job_id`` (nothing if there are none)."""
        if secrets:
            self._held[job_id] = dict(secrets)

    def call_options(self, job: dict) -> dict[str, Any]:
        """Where the job's model is called, with the credentials its turn had (an
        endpoint URL's credentials among them: the store keeps it without them)."""
        stored = json.loads(job["endpoint"]) if job.get("endpoint") else {}
        held = self._held.get(job["id"], {})
        missing = [name for name in job.get("secret_options") or [] if name not in held]
        if missing:
            raise MissingSecretError(_missing_message(job["id"], missing, stored))
        return stored | held


def _missing_message(job_id: str, missing: list[str], stored: dict[str, Any]) -> str:
    """Why a job cannot run: which credentials of its turn this process lacks, and how
    to give them again."""
    urls = [name for name in missing if name in gateway.URL_OPTIONS]
    keys = [name for name in missing if name not in urls]
    why = [f"{', '.join(f'{k}=' for k in keys)} passed to chat()"] if keys else []
    why += [
        f"credentials in its {name}= (the store keeps only {stored.get(name)!r})" for name in urls
    ]
    example = ", ".join(
        f"{name}={_with_userinfo(str(stored.get(name) or ''))!r}" if name in urls else f"{name}=..."
        for name in missing
    )
    return (
        f"this exchange was sent with {' and '.join(why)}, and npc_nb never stores "
        "credentials: this process no longer has them (was the kernel restarted?). Retry "
        f"with nb.extraction.retry({job_id!r}, {example}), or set extraction_model to a "
        "model whose key is in the environment and call nb.extraction.retry()."
    )


def _with_userinfo(url: str) -> str:
    """The stored endpoint as a placeholder of the full one: ``http://user:password@host``."""
    scheme, found, rest = url.partition("://")
    return f"{scheme}://user:password@{rest}" if found else "http://user:password@host/v1"
