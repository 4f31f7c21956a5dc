"""A researcher's own SQL (``nb.sql``, ``%npc_sql``): read-only unless asked, bound
parameters, and errors that say what went wrong.

Read-only is the engine's doing: the query runs on a connection that opened the file
read-only and may not touch files, extensions or settings (``Store.read_only``). The
statement-type check before it only gives the common mistake a clearer message. On a
PostgreSQL store the store also refuses functions that would send SQL of the caller's
own to the server (``Store.vet_read_only``). With
``allow_write`` the statements run in one transaction of npc_nb's own, and the decision
generation moves, so every cache re-reads. On a PostgreSQL store the server runs them
itself, in PostgreSQL's dialect (``Store.run_writes``): DuckDB, which parses the
statements on a file, cannot parse ``GRANT`` and much else a lab's owner runs there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import pandas as pd

from ..._foundations.store_url import redact_text
from ...errors import QueryError
from ..contract import Connection, Store, frame
from ..notices import EVERYTHING

__all__ = ["run_sql"]

_READ_ONLY_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
_TRANSACTION_CONTROL = {
    duckdb.StatementType.TRANSACTION,
    duckdb.StatementType.ATTACH,
    duckdb.StatementType.DETACH,
}
Params = Sequence[Any] | dict[str, Any] | None


def run_sql(store: Store, sql: str, params: Params, *, allow_write: bool) -> pd.DataFrame:
    """Run a caller's SQL; unless ``allow_write``, only reads, and nothing persists."""
    if allow_write and store.writes_on_server:
        return store.run_writes(_text(sql), params, lambda con: _rewritten(store, con))
    statements = _statements(sql)
    if not allow_write:
        writes = [s.type.name for s in statements if s.type not in _READ_ONLY_STATEMENTS]
        if writes:
            raise QueryError(
                f"Refusing a statement that could change the store ({', '.join(writes)}). "
                "Queries are read-only so analysis cannot corrupt the audit log; pass "
                "allow_write=True (in %%npc_sql: --write) if you really mean to write."
            )
        # The store sees an error first: a damaged file is a StoreError, not the query's.
        with _query_errors(store, read_only=True), store.read_only() as con:
            store.vet_read_only(con, statements)
            return frame(con.execute(sql, params or ()))
    control = [s.query.strip() for s in statements if s.type in _TRANSACTION_CONTROL]
    if control:
        raise QueryError(
            f"Remove {control[0]!r}: npc_nb runs your statements in one transaction "
            "of its own, committed only if all of them succeed."
        )
    with _query_errors(store, read_only=False), store.write() as con:
        result = frame(con.execute(sql, params or ()))
        _rewritten(store, con)
        return result


def _rewritten(store: Store, con: Connection) -> None:
    """The statements may have changed anything: a new epoch, so every cache re-reads."""
    store.bump_generation(con, rewrite=True)
    store.announce(con, EVERYTHING)


def _text(sql: object) -> str:
    if not isinstance(sql, str):
        raise QueryError(f"The query must be SQL text (a str), not {type(sql).__name__}.")
    return sql


def _statements(sql: object) -> list[Any]:
    text = _text(sql)
    with _query_errors(None, read_only=False):
        statements = duckdb.extract_statements(text)
    if not statements:
        raise QueryError(
            "The query is empty; write a SQL statement (e.g. SELECT * FROM v_memories)."
        )
    return statements


@contextmanager
def _query_errors(store: Store | None, *, read_only: bool) -> Iterator[None]:
    """A caller's SQL failing is a QueryError that says why (the engine's error kept)."""
    engine_errors = store.engine_errors if store is not None else (duckdb.Error,)
    try:
        yield
    except engine_errors as exc:
        message = redact_text(str(exc))
        refused = isinstance(exc, duckdb.PermissionException | duckdb.InvalidInputException)
        if read_only and refused:
            raise QueryError(
                f"Refused on the read-only query path: {message.splitlines()[0]}. Queries "
                "are read-only (no files, extensions, settings or writes); pass "
                "allow_write=True (in %%npc_sql: --write) if you really mean to change "
                "the store."
            ) from exc
        raise QueryError(f"The query failed: {message}") from exc
