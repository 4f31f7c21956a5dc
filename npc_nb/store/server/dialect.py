"""The one dialect seam: the store's queries, written with DuckDB's placeholders (``?``
and ``$name``), run unchanged on a psycopg connection.

The operational queries (``memory_rows``, ``events``, ``jobs``, ...) are written in the
SQL both engines share (``x = ANY($list)``, ``RETURNING``, ``NULLS FIRST``), so the only
difference left is how parameters are written; ``translate`` rewrites them outside
string literals and quoted names. Values are bound client-side (psycopg's
``ClientCursor``): a ``$name IS NULL`` test then needs no type the server would have
to guess, exactly as in DuckDB. The analytical SQL (views, metrics, ``as_of``) never
comes here: it runs in DuckDB over the attached database (``attach``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

__all__ = ["PgConnection", "translate"]

Params = Sequence[Any] | dict[str, Any]


def translate(sql: str, params: Params = ()) -> tuple[str, Params]:
    """``sql`` with ``?`` as ``%s``, ``$name`` as ``%(name)s`` and ``%`` doubled, outside
    quotes; the parameters as psycopg takes them."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(sql):
        char = sql[i]
        if quote is not None:
            out.append(char)
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "%":
            out.append("%%")
        elif char == "?":
            out.append("%s")
        elif char == "$" and i + 1 < len(sql) and (sql[i + 1].isalpha() or sql[i + 1] == "_"):
            end = i + 1
            while end < len(sql) and (sql[end].isalnum() or sql[end] == "_"):
                end += 1
            out.append(f"%({sql[i + 1 : end]})s")
            i = end
            continue
        else:
            out.append(char)
        i += 1
    bound: Params = dict(params) if isinstance(params, dict) else list(params)
    return "".join(out), bound


class PgResult:
    """A psycopg cursor with the one extra a DuckDB result has that callers use: ``df``."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    @property
    def description(self) -> Any:
        return self._cursor.description

    def fetchone(self) -> tuple | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[tuple]:
        return self._cursor.fetchall() if self._cursor.description else []

    def df(self) -> pd.DataFrame:
        columns = [column.name for column in self._cursor.description or ()]
        return pd.DataFrame(self.fetchall(), columns=columns)


class PgConnection:
    """A psycopg connection taking the store's placeholders (see ``translate``)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Params = ()) -> PgResult:
        text, bound = translate(sql, params)
        return PgResult(self.raw.execute(text, bound))

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        text, _ = translate(sql)
        with self.raw.cursor() as cursor:
            cursor.executemany(text, [translate("", row)[1] for row in rows])
