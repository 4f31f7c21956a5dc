"""A caller's write SQL on a shared store (``nb.sql(..., allow_write=True)``), run by
PostgreSQL itself, in PostgreSQL's dialect.

DuckDB cannot parse much of what a lab's owner runs on the server (``GRANT``, ``ALTER
DEFAULT PRIVILEGES``, dollar-quoted bodies), so these statements never meet DuckDB.
``prepare`` splits the text at its top-level semicolons by PostgreSQL's own lexical
rules (string constants with ``''``, ``E'...'`` with backslash escapes, quoted names,
``$tag$`` dollar quotes, ``--`` and nested ``/* */`` comments) and refuses transaction
control before anything runs. With parameters it rewrites the ``?`` placeholders (a
list) or ``$name`` ones (a dict) outside those for psycopg, doubling every ``%``;
without them a statement reaches the server exactly as written. Values are always bound.

``run`` executes the statements one at a time inside the store's transaction, so they
commit together or not at all. A failing statement is a ``QueryError`` naming which one
and quoting the server (credentials hidden); the role lacking a privilege, a lock
waited for too long and a lost server stay the store's ``StoreError``s. PostgreSQL's
warnings (``no privileges were granted for ...``, from a GRANT by a role that may not
grant) are returned, for the caller to hear once the transaction committed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import psycopg

from ..._foundations.redact import redact_text
from ...errors import QueryError
from .dialect import PgResult

__all__ = ["Statement", "prepare", "run"]

#: A statement starting with one of these would end npc_nb's transaction (or nest one).
_TRANSACTION_CONTROL = {"BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT",
                        "RELEASE"}  # fmt: skip
_DOLLAR_QUOTE = re.compile(r"\$(?:[^\W\d]\w*)?\$")
_NAME = re.compile(r"[^\W\d]\w*")
_FIRST_WORDS = re.compile(r"\s*(\w+)(?:\s+(\w+))?")
#: The errors that are the store's to explain: the role, a lock, the server.
_STORE_FAULTS = (psycopg.errors.InsufficientPrivilege, psycopg.OperationalError)


@dataclass(frozen=True)
class Statement:
    """One statement: as written, as psycopg takes it with values, and its placeholders."""

    written: str
    bound: str
    positional: int = 0
    names: frozenset[str] = frozenset()

    @property
    def placeholders(self) -> bool:
        return bool(self.positional or self.names)


def prepare(sql: str, params: Any) -> tuple[list[Statement], list[Any] | dict[str, Any] | None]:
    """The statements of ``sql`` and the values they take; a QueryError for what could
    not run (nothing but comments, transaction control, values that do not fit)."""
    values = _values(params)
    style = None if values is None else "named" if isinstance(values, dict) else "positional"
    statements = _split(sql, style)
    if not statements:
        raise QueryError("The query is empty; write a SQL statement (e.g. SELECT * FROM memories).")
    for statement in statements:
        found = _FIRST_WORDS.match(_code(statement.written))
        words = [w.upper() for w in found.groups() if w] if found else []
        if words[:1] and (words[0] in _TRANSACTION_CONTROL or words == ["PREPARE", "TRANSACTION"]):
            raise QueryError(
                f"Remove {statement.written.strip()!r}: npc_nb runs your statements in one "
                "transaction of its own, committed only if all of them succeed."
            )
    _check_values(statements, values)
    return statements, values


def run(
    raw: psycopg.Connection, statements: list[Statement], values: Any, secrets: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """Run ``statements`` on ``raw`` (inside the store's transaction): the last one's
    result, and the server's warnings."""
    warnings: list[str] = []
    raw.add_notice_handler(
        lambda notice: (
            warnings.append(f"PostgreSQL: {notice.message_primary}")
            if notice.severity_nonlocalized == "WARNING"
            else None
        )
    )
    result, used = pd.DataFrame(), 0
    for number, statement in enumerate(statements, start=1):
        text, bound = statement.written, None
        if statement.placeholders:
            text = statement.bound
            bound = (
                values
                if isinstance(values, Mapping)
                else values[used : used + statement.positional]
            )
            used += statement.positional
        try:
            cursor = raw.execute(text, bound)
        except _STORE_FAULTS:
            raise
        except psycopg.Error as exc:
            raise QueryError(
                f"Statement {number} of {len(statements)} failed in PostgreSQL, and nothing "
                "was written (on a shared store, allow_write SQL runs on the server, in "
                f"PostgreSQL's dialect): {redact_text(str(exc).strip(), *secrets)}"
            ) from exc
        result = PgResult(cursor).df()
    return result, [redact_text(w, *secrets) for w in warnings]


def _values(params: Any) -> list[Any] | dict[str, Any] | None:
    if not params:
        return None
    if isinstance(params, Mapping):
        return dict(params)
    if isinstance(params, Sequence) and not isinstance(params, str | bytes):
        return list(params)
    raise QueryError(
        f"params must be a list (for ? placeholders) or a dict (for $name placeholders), "
        f"not {type(params).__name__}."
    )


def _check_values(statements: list[Statement], values: Any) -> None:
    if isinstance(values, list):
        count = sum(s.positional for s in statements)
        if count != len(values):
            raise QueryError(
                f"The SQL has {count} placeholders but {len(values)} value(s) were given: "
                "pass one value per ?, in order."
            )
    elif isinstance(values, dict):
        missing = sorted(set().union(*(s.names for s in statements)) - set(values))
        if missing:
            raise QueryError(
                f"No value for ${missing[0]}: pass it in the params dict, e.g. "
                f"{{{missing[0]!r}: ...}}."
            )


def _split(sql: str, style: str | None) -> list[Statement]:
    """The statements of ``sql``, split at top-level semicolons; those holding nothing
    but spaces and comments are dropped."""
    splitter = _Splitter(style)
    i = 0
    while i < len(sql):
        i = splitter.step(sql, i)
    splitter.end_statement()
    return splitter.statements


class _Splitter:
    """The statement being read (as written and as bound) and those read before it."""

    def __init__(self, style: str | None) -> None:
        self.style = style
        self.statements: list[Statement] = []
        self._start()

    def _start(self) -> None:
        self.written: list[str] = []
        self.bound: list[str] = []
        self.positional, self.names = 0, set[str]()

    def keep(self, text: str, as_bound: str | None = None) -> None:
        self.written.append(text)
        self.bound.append(as_bound if as_bound is not None else text.replace("%", "%%"))

    def step(self, sql: str, i: int) -> int:
        """Read what starts at ``sql[i]``; where the next thing starts."""
        end = _quoted_end(sql, i)
        if end is not None:  # a literal, quoted name or comment: kept as it is
            self.keep(sql[i:end])
            return end
        char = sql[i]
        if char == ";":
            self.end_statement()
        elif char == "?" and self.style == "positional":
            self.keep(char, "%s")
            self.positional += 1
        elif char == "$" and self.style == "named" and (found := _NAME.match(sql, i + 1)):
            self.keep(sql[i : found.end()], f"%({found.group()})s")
            self.names.add(found.group())
            return found.end()
        else:
            self.keep(char)
        return i + 1

    def end_statement(self) -> None:
        text = "".join(self.written)
        if _code(text).strip():
            bound = "".join(self.bound)
            self.statements.append(Statement(text, bound, self.positional, frozenset(self.names)))
        self._start()


def _quoted_end(sql: str, i: int) -> int | None:
    """Where the literal, quoted name or comment starting at ``sql[i]`` ends (None when
    none starts there); an unterminated one runs to the end, for the server to refuse."""
    char, rest = sql[i], sql[i : i + 2]
    if rest == "--":
        end = sql.find("\n", i)
        return len(sql) if end < 0 else end
    if rest == "/*":
        return _comment_end(sql, i)
    if char == "'":
        escapes = i > 0 and sql[i - 1] in "eE" and (i < 2 or not _in_name(sql[i - 2]))
        return _closing(sql, i, "'", escapes)
    if char == '"':
        return _closing(sql, i, '"', False)
    if char == "$" and not (i > 0 and _in_name(sql[i - 1])):
        found = _DOLLAR_QUOTE.match(sql, i)
        if found:
            close = sql.find(found.group(), found.end())
            return len(sql) if close < 0 else close + len(found.group())
    return None


def _closing(sql: str, start: int, quote: str, escapes: bool) -> int:
    i = start + 1
    while i < len(sql):
        if escapes and sql[i] == "\\":
            i += 2
            continue
        if sql[i] == quote:
            if sql[i + 1 : i + 2] != quote:
                return i + 1
            i += 1  # a doubled quote stands for itself
        i += 1
    return len(sql)


def _comment_end(sql: str, start: int) -> int:
    depth, i = 0, start
    while i < len(sql):
        pair = sql[i : i + 2]
        if pair == "/*":
            depth, i = depth + 1, i + 2
        elif pair == "*/":
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return len(sql)


def _in_name(char: str) -> bool:
    return char.isalnum() or char in "_$"


def _code(text: str) -> str:
    """``text`` with its comments as spaces (literals kept): what a statement says."""
    out, i = [], 0
    while i < len(text):
        end = _quoted_end(text, i)
        if end is not None:
            comment = text[i : i + 2] in ("--", "/*")
            out.append(" " if comment else text[i:end])
            i = end
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
