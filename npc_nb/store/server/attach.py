"""Analysis on PostgreSQL through DuckDB: the project's schema attached read-only, so
``%npc_sql``, ``nb.sql``, the views, the metrics and ``as_of`` run the same DuckDB SQL on
both backends.

Each connection is an in-memory DuckDB database with the postgres extension loaded from
its pinned wheel (never downloaded), the project's schema attached ``READ_ONLY`` (every
PostgreSQL transaction it opens is read-only too, and so is its server session's default,
``default_transaction_read_only``, for any other), and the analytical views defined in
memory with the very SQL the DuckDB migrations give them, so a view means the same on
both backends by construction. A researcher's query gets a connection of its own that
then turns off file access and locks its configuration (``locked=True``): it writes no
file, reads no file, attaches nothing, and lives only as long as the query.

Measured on loopback (docs/lab.md): opening a connection costs a few milliseconds; a
point query through the extension ~2 ms against well under 1 ms through psycopg, which
is why the operational path (decisions, candidates, context) does not come here.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import duckdb

from ..._foundations.redact import url_secrets
from ..._foundations.store_url import redact_text
from ...errors import StoreError
from ..schema.migrations import apply_migrations

__all__ = ["connect", "read_only_session", "view_definitions"]

_EXTENSION_MISSING = (
    "Reading a PostgreSQL store needs DuckDB's postgres extension from its wheel: "
    "pip install 'npc_nb[postgres]' (duckdb-extension-postgres=={version})."
)


@functools.cache
def _extension_file() -> Path:
    """The extension binary under the name DuckDB expects (``postgres_scanner``): a
    symlink, in a private folder of this process, to the file inside the wheel."""
    spec = importlib.util.find_spec("duckdb_extension_postgres")
    version = duckdb.__version__
    found = None
    if spec is not None and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        found = next(root.glob(f"extensions/v{version}/postgres.duckdb_extension"), None)
    if found is None:
        raise StoreError(_EXTENSION_MISSING.format(version=version))
    folder = Path(tempfile.mkdtemp(prefix="npc_nb-ext-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    link = folder / "postgres_scanner.duckdb_extension"
    os.symlink(found, link)
    return link


def read_only_session(url: str) -> str:
    """``url`` asking the server for read-only transactions by default (libpq's
    ``options``, added to any the URL already has)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    given = [value for key, value in query if key == "options"]
    options = " ".join([*given, "-c default_transaction_read_only=on"])
    query = [(key, value) for key, value in query if key != "options"] + [("options", options)]
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


@functools.cache
def view_definitions() -> tuple[str, ...]:
    """The CREATE VIEW statements of the current schema, as the DuckDB migrations write
    them (read from a migrated in-memory database)."""
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        apply_migrations(con)
        found = con.execute(
            "SELECT sql FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
            "ORDER BY view_name"
        ).fetchall()
    finally:
        con.close()
    return tuple(sql for (sql,) in found)


def connect(url: str, schema: str, *, locked: bool) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with ``schema`` of the database at ``url`` attached read-only
    as the default schema, and the analytical views; ``locked``: no file access and no
    setting changes from here on (a researcher's query)."""
    con = duckdb.connect(
        ":memory:",
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    try:
        con.execute(f"LOAD '{_extension_file()}'")
        literal = read_only_session(url).replace("'", "''")
        con.execute(f"ATTACH '{literal}' AS pg (TYPE postgres, READ_ONLY, SCHEMA '{schema}')")
        con.execute(f"SET search_path = 'memory.main,pg.{schema}'")
        con.execute("SET TimeZone = 'UTC'")
        for statement in view_definitions():
            con.execute(statement)
        if locked:
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise StoreError(
            "Cannot read the PostgreSQL store through DuckDB: "
            f"{redact_text(str(exc), *url_secrets(url))}"
        ) from None
    return con
