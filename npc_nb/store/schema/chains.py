"""Hash chains: which tables are chained, which columns each
row's hash covers, how a row is serialised, and the chain of rows written before.

A chained table is append-only history: the audit log (``memory_events``), the votes
(``votes``) and the recorded model replies (``model_recordings``). Each row carries
its place in its table's chain (``chain_seq``: 1, 2, 3, ... with no gap) and its link
(``chain_hash``):

    line       = table "|" chain_seq "|" field field ...   (the columns ``CHAINED`` lists)
    field      = "~" for an absent value, else <its UTF-8 length in bytes> ":" <its text>
    row digest = SHA-256 hex of the line (UTF-8)
    chain_hash = SHA-256 hex of (the previous row's chain_hash + the row digest)

with "" as the previous hash of the first row; a value's text is itself (text), its
decimal digits (an integer), ``true``/``false`` (a boolean) or ISO 8601 with
microseconds, naive UTC (a time: ``2026-12-07T16:41:22.000000``). A chained column is
of one of those four kinds (a time column is listed in ``TIME_COLUMNS``). Length
prefixes need no escaping, so both engines compute the digest in SQL (``digest_sql``)
exactly as Python does (``row_digest``).
Changing, removing or inserting any row breaks a link, so a recomputation names the
first broken one; each link is checked against the stored link before it, so the
whole check is one query.

The column lists are the contract: a column is covered exactly when it is listed.
Adding one to a chained table is one line here (its name appended to the table's
tuple; a time column also in ``TIME_COLUMNS``). A column added to a chained table
makes rows written before it hash differently, so that change comes with a step of the
ladder that recomputes the table's chain (``chain_links``). A
column left out (the votes' markers ``replaced_by``, ``withdrawn_at``,
``settled_seq``, which a later decision sets) may change without breaking the chain.
Nothing here imports the rest of the store: both backends use it.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "CHAINED",
    "CHAIN_KEYS",
    "CHAIN_ORDER",
    "GENESIS",
    "TIME_COLUMNS",
    "canonical_line",
    "chain_links",
    "digest_sql",
    "link",
    "row_digest",
    "sha256_sql",
]

#: Every chained table and the columns its rows' hashes cover, in hash order.
CHAINED: dict[str, tuple[str, ...]] = {
    "memory_events": (
        "seq",
        "memory_id",
        "occurred_at",
        "actor",
        "action",
        "from_status",
        "to_status",
        "text_before",
        "text_after",
        "reason",
        "batch_id",
        "undoes",
        "lead_time_ms",
        "time_spent_ms",
        "review_session",
        "state_before",
        "wording",
        "vote_id",
    ),
    "votes": (
        "id",
        "memory_id",
        "round",
        "reviewer",
        "decision",
        "final_text",
        "final_hash",
        "wording",
        "reason",
        "defer_until",
        "time_spent_ms",
        "review_session",
        "voted_at",
        "event_seq",
    ),
    "model_recordings": (
        "id",
        "fingerprint",
        "model",
        "caller",
        "request",
        "reply",
        "prompt_tokens",
        "completion_tokens",
        "recorded_at",
    ),
}
#: The order rows written before the chains existed are chained in (``chain_links``).
CHAIN_ORDER = {
    "memory_events": "seq",
    "votes": "event_seq, voted_at, id",
    "model_recordings": "recorded_at, id",
}
#: The "previous hash" of a chain's first row.
GENESIS = ""


def _text(value: Any) -> str | None:
    """A column's value as its line holds it (what both engines read back)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


def canonical_line(table: str, chain_seq: int, values: Sequence[Any]) -> str:
    """The line of one row (``values`` in ``CHAINED[table]`` order)."""
    fields = []
    for value in values:
        text = _text(value)
        fields.append("~" if text is None else f"{len(text.encode('utf-8'))}:{text}")
    return f"{table}|{chain_seq}|{''.join(fields)}"


def row_digest(table: str, chain_seq: int, values: Sequence[Any]) -> str:
    """SHA-256 hex of the row's line."""
    return hashlib.sha256(canonical_line(table, chain_seq, values).encode("utf-8")).hexdigest()


def link(previous: str, table: str, chain_seq: int, values: Sequence[Any]) -> str:
    """The ``chain_hash`` of a row: SHA-256 of the previous hash and its row digest."""
    text = previous + row_digest(table, chain_seq, values)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The columns of a chained table that hold times (the rest hold text or numbers).
TIME_COLUMNS = frozenset({"occurred_at", "defer_until", "voted_at", "recorded_at"})


def digest_sql(table: str, duck: bool) -> str:
    """SQL for a row's digest (``row_digest``) on DuckDB (``duck``) or PostgreSQL."""
    parts = [f"'{table}|'", "CAST(chain_seq AS VARCHAR)", "'|'"]
    for column in CHAINED[table]:
        if column in TIME_COLUMNS:
            text = (
                f"strftime({column}, '%Y-%m-%dT%H:%M:%S.%f')"
                if duck
                else f"to_char({column}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"
            )
        else:
            text = f"CAST({column} AS VARCHAR)"
        size = f"strlen({text})" if duck else f"octet_length({text})"
        parts.append(f"coalesce(CAST({size} AS VARCHAR) || ':' || {text}, '~')")
    return sha256_sql(" || ".join(parts), duck)


def sha256_sql(expression: str, duck: bool) -> str:
    """SQL: the SHA-256 hex of a text ``expression``."""
    if duck:
        return f"sha256({expression})"
    return f"encode(sha256(convert_to({expression}, 'UTF8')), 'hex')"


def chain_links(con: Any, table: str, key: str) -> list[tuple[Any, int, str]]:
    """(key, chain_seq, chain_hash) of every row of ``table`` (keyed by ``key``) chained
    in ``CHAIN_ORDER``, read in the caller's transaction: what a step that recomputes
    a chain writes."""
    columns = ", ".join(CHAINED[table])
    found = con.execute(f"SELECT {key}, {columns} FROM {table} ORDER BY {CHAIN_ORDER[table]}")
    previous, out = GENESIS, []
    for position, (name, *values) in enumerate(found.fetchall(), start=1):
        previous = link(previous, table, position, values)
        out.append((name, position, previous))
    return out


#: The key of each chained table's rows.
CHAIN_KEYS = {"memory_events": "seq", "votes": "id", "model_recordings": "id"}
