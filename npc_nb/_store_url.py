"""Where a project's store lives when it is not the embedded file: a PostgreSQL URL, the
project's schema in it, and the one way a URL is shown (its password never is).

A URL may carry a password (``postgresql://ada:secret@host/db``, or
``?password=secret``). Everything that shows a URL (settings' repr, ``%npc_config``,
``Project``'s repr, error messages) goes through ``redact``, and a driver's message
through ``redact_text`` with the URL's own secrets (``_redact`` knows every form); the
URL itself is handed only to psycopg and DuckDB's postgres extension. An ``@`` inside
the user name or password must be written ``%40``: libpq reads the host from the first
``@``, so such a URL is refused before any driver sees it. A password may also come
from ``PGPASSWORD`` or ``~/.pgpass``, which npc_nb never reads.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ._redact import redact_text, redact_url

__all__ = ["SCHEMES", "check_store_url", "project_schema", "redact", "redact_text"]

SCHEMES = ("postgresql", "postgres")
_MAX_SCHEMA = 50  # PostgreSQL keeps 63 bytes of a name; room for the "npc_" prefix


def redact(url: str) -> str:
    """The URL with its password and secret parameters replaced by ``***``."""
    return redact_url(url)


def check_store_url(url: str) -> str:
    """The URL, stripped, if it names a PostgreSQL database; a ValueError (that never
    repeats the password) saying what to write otherwise."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise ValueError(
            f"{redact_text(url)!r} is not a valid URL; write postgresql://user@host:port/database"
        ) from None
    if parts.scheme not in SCHEMES or not parts.path.strip("/"):
        raise ValueError(
            f"{redact_text(url)!r} is not a PostgreSQL URL; write "
            "postgresql://user@host:port/database (or leave store unset for the embedded file)"
        )
    if parts.netloc.count("@") > 1:
        raise ValueError(
            f"The user name or password of {redact_text(url)!r} holds an unencoded @, and "
            "libpq would read the host from the first one: write each @ inside them as "
            "%40 (a password p@ss as p%40ss)"
        )
    return url


def project_schema(project: str) -> str:
    """The PostgreSQL schema that holds one project: ``npc_`` and the project's name in
    lower case, anything but letters, digits and ``_`` turned into ``_``. Always a safe
    identifier, so it may reach SQL text."""
    cleaned = re.sub(r"[^a-z0-9_]+", "_", project.strip().lower()).strip("_")
    if not cleaned:
        raise ValueError(
            f"The project name {project!r} has no letters or digits; set the project "
            "setting (NPC_NB_PROJECT) to a name such as 'lab_memory'."
        )
    return "npc_" + cleaned[:_MAX_SCHEMA]
