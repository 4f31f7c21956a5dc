"""Where a project's store lives when it is not the embedded file: a PostgreSQL URL, the
project's schema in it, and the one way a URL is shown (its password never is).

A URL may carry a password (``postgresql://ada:secret@host/db``). Everything that shows
a URL (settings' repr, ``%npc_config``, ``Project``'s repr, error messages) goes through
``redact``; the URL itself is handed only to psycopg and DuckDB's postgres extension.
A password may also come from ``PGPASSWORD`` or ``~/.pgpass``, which npc_nb never reads.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["SCHEMES", "check_store_url", "project_schema", "redact", "redact_text"]

SCHEMES = ("postgresql", "postgres")
_PASSWORD_IN_URL = re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^:/@\s]*:)[^@\s]*(?P<at>@)")
_PASSWORD_IN_DSN = re.compile(r"(?P<head>\bpassword\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)
_MAX_SCHEMA = 50  # PostgreSQL keeps 63 bytes of a name; room for the "npc_" prefix


def redact(url: str) -> str:
    """The URL with its password (if any) replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def redact_text(text: str) -> str:
    """Any URL or ``password=`` pair inside ``text`` (an engine's error) redacted."""
    text = _PASSWORD_IN_URL.sub(r"\g<head>***\g<at>", text)
    return _PASSWORD_IN_DSN.sub(r"\g<head>***", text)


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
