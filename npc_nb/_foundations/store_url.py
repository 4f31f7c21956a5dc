"""Where a project's store lives when it is not the embedded file: a PostgreSQL URL, the
project's schema in it, and the one way a URL is shown (its password never is).

A project's schema is a function of its name alone, and one-to-one: two names that
differ (after NFC normalisation and trimming outer spaces) never share a schema. A name
that is already a short, plain identifier (``wetland``, ``cell_atlas``: lower-case
ASCII letters and digits, single ``_`` between them, at most 50 characters) keeps the
schema ``npc_<name>`` earlier versions gave it; any other name gets a readable slug and
a hash of the whole name after ``__``, which no plain name contains
(``npc_grosse_studie__<16 hex>``). The schema records the name it was made for
(``store.pg_project``), so even a hash collision is refused, never shared.

A URL may carry a password (``postgresql://ada:secret@host/db``, or
``?password=secret``). Everything that shows a URL (settings' repr, ``%npc_config``,
``Project``'s repr, error messages) goes through ``redact``, and a driver's message
through ``redact_text`` with the URL's own secrets (``redact`` knows every form); the
URL itself is handed only to psycopg and DuckDB's postgres extension. An ``@`` inside
the user name or password must be written ``%40``: libpq reads the host from the first
``@``, so such a URL is refused before any driver sees it. A password may also come
from ``PGPASSWORD`` or ``~/.pgpass``, which npc_nb never reads.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from urllib.parse import urlsplit

from .redact import redact_text, redact_url

__all__ = [
    "SCHEMES",
    "check_store_url",
    "legacy_schema",
    "project_name",
    "project_schema",
    "redact",
    "redact_text",
]

SCHEMES = ("postgresql", "postgres")
_MAX_SCHEMA = 50  # PostgreSQL keeps 63 bytes of a name; room for the "npc_" prefix
#: Names kept as they are in their schema: what earlier versions mapped one-to-one.
_PLAIN = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
_HASH_CHARS = 16  # 64 bits of SHA-256: a collision is refused anyway (the record)
_MAX_SLUG = 63 - len("npc_") - len("__") - _HASH_CHARS


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


def project_name(project: str) -> str:
    """The project's name as its schema records it: NFC, outer spaces trimmed. A
    ValueError saying what to write when nothing is left."""
    name = unicodedata.normalize("NFC", project).strip()
    if not any(char.isalnum() for char in name):
        raise ValueError(
            f"The project name {project!r} has no letters or digits; set the project "
            "setting (NPC_NB_PROJECT) to a name such as 'lab_memory'."
        )
    return name


def project_schema(project: str) -> str:
    """The PostgreSQL schema that holds one project (see the module docstring): always
    a safe identifier of at most 63 bytes, so it may reach SQL text."""
    name = project_name(project)
    if len(name) <= _MAX_SCHEMA and _PLAIN.fullmatch(name):
        return "npc_" + name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"npc_{_slug(name)}__{digest[:_HASH_CHARS]}"


def _slug(name: str) -> str:
    """A readable ASCII rendering of ``name`` (``Größe-Studie``: ``grosse_studie``)."""
    ascii_text = unicodedata.normalize("NFKD", name.casefold()).encode("ascii", "ignore")
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_text.decode()).strip("_")
    return slug[:_MAX_SLUG].rstrip("_") or "project"


def legacy_schema(project: str) -> str | None:
    """The schema npc_nb gave ``project`` before names mapped one-to-one (lower case,
    anything but ASCII letters, digits and ``_`` as ``_``, cut at 50 characters), where
    a lab that upgraded may still keep it. None if that mapping refused the name."""
    cleaned = re.sub(r"[^a-z0-9_]+", "_", project.strip().lower()).strip("_")
    return "npc_" + cleaned[:_MAX_SCHEMA] if cleaned else None
