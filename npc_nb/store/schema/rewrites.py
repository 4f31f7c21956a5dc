"""The row rewrites both backends' migrations share: a job's endpoint, a memory's keys.

``endpoint_without_credentials`` (``m014``) strips credentials from a stored endpoint;
``rehashed_rows`` (``m019``) recomputes the keys today's normalisation gives a memory's
text. Pure functions over rows: each backend's migration reads the rows and writes
what these return in its own SQL.
"""

from __future__ import annotations

import json

from ..._foundations.redact import has_credentials, strip_credentials

__all__ = ["REHASHED_COLUMNS", "endpoint_without_credentials", "rehashed_rows"]


def endpoint_without_credentials(
    endpoint: str, names: list[str] | None
) -> tuple[str, list[str]] | None:
    """A stored endpoint (JSON) whose URLs held credentials, stripped, and the job's
    secret options with those URLs' names added; None if it held none."""
    options = json.loads(endpoint)
    urls = [
        key for key, value in options.items()
        if isinstance(value, str) and "://" in value and has_credentials(value)
    ]  # fmt: skip
    if not urls:
        return None
    stripped = {key: strip_credentials(v) if key in urls else v for key, v in options.items()}
    return json.dumps(stripped), sorted({*(names or []), *urls})


#: What ``rehashed_rows`` gives for each memory whose stored text keys changed.
REHASHED_COLUMNS = ("id", "old_final", "new_initial", "new_final", "new_norm", "new_terms")


def rehashed_rows(rows: list[tuple]) -> list[tuple]:
    """For memory rows (id, initial text, final text, initial hash, final hash, norm
    text, match text), the new keys of those today's normalisation keys differently
    (``REHASHED_COLUMNS``): both backends' rehash migrations write these."""
    from ..._foundations.terms import content_terms, joined_terms
    from ..._foundations.text import content_hash, normalise

    changed = []
    for memory_id, initial, final, initial_hash, final_hash, norm, terms in rows:
        new = (
            content_hash(initial),
            content_hash(final),
            normalise(final),
            joined_terms(content_terms(initial) | content_terms(final)),
        )
        if new != (initial_hash, final_hash, norm, terms):
            changed.append((memory_id, final_hash, *new))
    return changed
