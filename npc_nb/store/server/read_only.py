"""Read-only SQL on a PostgreSQL store reaches the server only through the attached
tables: a researcher's query may not send SQL of its own to the server.

DuckDB's postgres extension can pass any text to the server (``postgres_query``,
``postgres_execute``) or open connections of its own (``postgres_scan``,
``postgres_attach``), and there a "read" can still act: ``pg_notify`` forges a decision
notice, ``pg_advisory_lock`` stalls other kernels, ``set_config`` changes the session.
Read-only transactions stop none of those, so these functions are refused on the
read-only path, with the SQL-running ones of DuckDB itself (``query``,
``json_execute_serialized_sql``), whose text no check could see before it runs.

The check reads the names a statement calls from DuckDB's own parse tree
(``json_serialize_sql``), not from its text: case, quoting, comments, schema-qualified
names, CTEs and subqueries all arrive there as the one name DuckDB will call. A
statement the parser cannot serialise is refused rather than guessed at. An ``EXPLAIN``
(which with ``ANALYZE`` runs its statement) is checked by the statement it explains,
found with DuckDB's tokenizer. The attachment's own server session is read-only as
well (``attach``), so what a check might miss still cannot write.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import duckdb

from ...errors import QueryError

__all__ = ["REFUSED", "refuse_server_sql"]

#: Functions that send SQL of their own to the server (or open connections to it).
SERVER_FUNCTIONS = frozenset(
    {
        "postgres_query",
        "postgres_execute",
        "postgres_attach",
        "postgres_scan",
        "postgres_scan_pushdown",
        "postgres_configure_pool",
        "read_postgres_binary",
    }
)
#: DuckDB functions that run SQL built while the query runs: nothing checks it first.
SQL_RUNNING_FUNCTIONS = frozenset({"query", "json_execute_serialized_sql"})
REFUSED = SERVER_FUNCTIONS | SQL_RUNNING_FUNCTIONS
_EXPLAIN_FLAGS = {"analyze", "analyse", "verbose"}
_FIX = (
    "Query the attached tables and views by name (SELECT * FROM memories); to run SQL in "
    "PostgreSQL itself, pass allow_write=True (in %%npc_sql: --write): it runs as your "
    "database role, in one transaction."
)


def refuse_server_sql(con: duckdb.DuckDBPyConnection, statements: Sequence[Any]) -> None:
    """Raise QueryError if any of ``statements`` (``duckdb.extract_statements``) calls a
    ``REFUSED`` function, or cannot be checked."""
    for statement in statements:
        text = str(statement.query)
        if statement.type == duckdb.StatementType.EXPLAIN:
            text = _explained(text)
        called = sorted(_called(con, text) & REFUSED)
        if called:
            raise QueryError(_refusal(called[0]))


def _refusal(name: str) -> str:
    if name in SQL_RUNNING_FUNCTIONS:
        why = "runs SQL put together while the query runs, which nothing can check first"
    else:
        why = (
            "sends SQL to the PostgreSQL server as it is, where even a read can notify "
            "other kernels, take locks or change settings"
        )
    return f"Refused on the read-only query path: {name}() {why}. {_FIX}"


def _called(con: duckdb.DuckDBPyConnection, text: str) -> set[str]:
    """Every function name in ``text``'s parse tree, in lower case."""
    found = con.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
    tree = json.loads(found[0]) if found else {"error": True}
    if tree.get("error") or not tree.get("statements"):
        reason = tree.get("error_message", "it is not a statement DuckDB can read")
        raise QueryError(
            "Refused on the read-only query path: this statement cannot be checked for "
            f"SQL sent to the PostgreSQL server ({reason}). Write it as a plain SELECT."
        )
    return {name.lower() for name in _function_names(tree)}


def _function_names(node: object) -> Iterator[str]:
    if isinstance(node, dict):
        name = node.get("function_name")
        if isinstance(name, str):
            yield name
        for value in node.values():
            yield from _function_names(value)
    elif isinstance(node, list):
        for value in node:
            yield from _function_names(value)


def _explained(text: str) -> str:
    """The statement an ``EXPLAIN [ANALYZE]`` or ``EXPLAIN (options)`` explains ("" if
    the text is not shaped so: then it is refused as one that cannot be checked)."""
    starts = [start for start, _ in duckdb.tokenize(text)]
    words = [_word(text, start) for start in starts]
    if not words or words[0] != "explain":
        return ""
    at = 1
    if at < len(words) and words[at] == "(":
        at = _closing(words, at) + 1
    while at < len(words) and words[at] in _EXPLAIN_FLAGS:
        at += 1
    return text[starts[at] :] if at < len(words) else ""


def _closing(words: list[str], opening: int) -> int:
    """Where the parenthesis opened at ``opening`` closes (the end if it never does)."""
    depth = 0
    for at in range(opening, len(words)):
        depth += {"(": 1, ")": -1}.get(words[at], 0)
        if depth == 0:
            return at
    return len(words)


def _word(text: str, start: int) -> str:
    """The token at ``start``: a word in lower case, else its first character."""
    found = re.match(r"\w+", text[start:])
    return found.group(0).lower() if found else text[start : start + 1]
