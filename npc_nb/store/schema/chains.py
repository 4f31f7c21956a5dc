"""Hash chains (``m027_hash_chains``): which tables are chained, which columns each
row's hash covers, how a row is serialised, and the chain of rows written before.

A chained table is append-only history: the audit log (``memory_events``), the votes
(``votes``) and the recorded model replies (``model_recordings``). Each row carries
its place in its table's chain (``chain_seq``: 1, 2, 3, ... with no gap) and a hash
(``chain_hash``) = SHA-256 (hex) of the previous row's ``chain_hash`` (the empty text
before the first row), a newline, and the row's canonical line: the JSON array
``[table, chain_seq, value, ...]`` of the columns ``CHAINED`` lists, in that order
(no spaces, UTF-8; times as naive-UTC ISO 8601 with microseconds; absent values as
null). Changing, removing or inserting any row changes every later hash, so a
recomputation names the first broken link.

The column lists are the contract: a column is covered exactly when it is listed.
Adding one to a chained table is one line here (its name appended to the table's
tuple); rows written before then hash differently, so that change comes with a
migration that recomputes the table's chain (``chain_links``), as ``m027`` does. A
column left out (the votes' markers ``replaced_by``, ``withdrawn_at``,
``settled_seq``, which a later decision sets) may change without breaking the chain.
Nothing here imports the rest of the store: the migrations of both backends use it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "CHAINED",
    "CHAIN_ORDER",
    "GENESIS",
    "CHAIN_KEYS",
    "add_chain_columns",
    "chain_links",
    "canonical_line",
    "link",
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


def _value(value: Any) -> Any:
    """A column's value as the canonical line holds it (what both engines read back)."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds")
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if value is None or isinstance(value, int | float | str):
        return value
    return str(value)


def canonical_line(table: str, chain_seq: int, values: Sequence[Any]) -> str:
    """The canonical line of one row (``values`` in ``CHAINED[table]`` order)."""
    return _ENCODER.encode([table, chain_seq, *map(_value, values)])


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def link(previous: str, table: str, chain_seq: int, values: Sequence[Any]) -> str:
    """The ``chain_hash`` of a row: SHA-256 of the previous hash, a newline and its line."""
    text = previous + "\n" + canonical_line(table, chain_seq, values)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def add_chain_columns(con: Any, table: str) -> None:
    """The chain's two columns on ``table`` (both engines take this SQL)."""
    con.execute(f"ALTER TABLE {table} ADD COLUMN chain_seq BIGINT")
    con.execute(f"ALTER TABLE {table} ADD COLUMN chain_hash VARCHAR")


def chain_links(con: Any, table: str, key: str) -> list[tuple[Any, int, str]]:
    """(key, chain_seq, chain_hash) of every row of ``table`` (keyed by ``key``) chained
    in ``CHAIN_ORDER``, read in the caller's transaction: what ``m027`` writes."""
    columns = ", ".join(CHAINED[table])
    found = con.execute(f"SELECT {key}, {columns} FROM {table} ORDER BY {CHAIN_ORDER[table]}")
    previous, out = GENESIS, []
    for position, (name, *values) in enumerate(found.fetchall(), start=1):
        previous = link(previous, table, position, values)
        out.append((name, position, previous))
    return out


#: The key of each chained table's rows.
CHAIN_KEYS = {"memory_events": "seq", "votes": "id", "model_recordings": "id"}
