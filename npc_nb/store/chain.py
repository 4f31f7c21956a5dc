"""Hash chains at work: a chained row linked as it is written, a chain recomputed, one
row's link checked (``schema.chains`` defines the chains, their columns and the hash).

``insert_row`` links every row of a chained table in the transaction that writes it:
the chain's head (its highest ``chain_seq``) is read and the row written after it.
Two writers must not read the same head. A DuckDB file has one writer at a time; on
PostgreSQL the transaction first takes the chain's advisory lock (per schema and
table, held until it ends), so two kernels appending at once still form one chain:
the second waits for the first to commit, then reads its row as the head (any role
may take the lock; a wait past ``lock_timeout`` is an error, never a hang).

``first_break`` checks every link of a chain in one query and says, in words, where
it first breaks: a row with no link (written by SQL, outside npc_nb), a position missing
(a row deleted) or repeated (a row inserted), or a row whose content no longer hashes
to its link (changed since it was written). Later rows are not looked at: after the
first break every link is in doubt.
"""

from __future__ import annotations

from typing import Any

import duckdb

from .schema.chains import (
    CHAIN_KEYS,
    CHAIN_ORDER,
    CHAINED,
    GENESIS,
    digest_sql,
    link,
    sha256_sql,
)

__all__ = [
    "CHAINED",
    "CHAIN_COLUMNS",
    "chain_row",
    "first_break",
    "link_holds",
    "link_unlinked",
    "unlinked",
]

#: The two columns every chained table adds (``m027``).
CHAIN_COLUMNS = ("chain_seq", "chain_hash")
_BATCH = 500


def _lock(con: Any, table: str) -> None:
    """Hold the chain of ``table`` until this transaction ends (PostgreSQL; a DuckDB
    file has a single writer already)."""
    if isinstance(con, duckdb.DuckDBPyConnection):
        return
    con.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended("
        "'npc_nb:chain:' || current_schema() || ':' || ?, 0))",
        [table],
    )


def _head(con: Any, table: str) -> tuple | None:
    """(chain_seq, chain_hash) of the chain's last row, or None for an empty chain. On
    PostgreSQL through ``npc_nb_chain_head`` (it runs as the owner): row-level security
    hides other reviewers' open votes from a reviewer, whose head must still be the
    chain's."""
    if isinstance(con, duckdb.DuckDBPyConnection):
        sql = (
            f"SELECT chain_seq, chain_hash FROM {table} WHERE chain_seq IS NOT NULL "
            "ORDER BY chain_seq DESC LIMIT 1"
        )
        found: tuple | None = con.execute(sql).fetchone()
    else:
        found = con.execute(
            "SELECT chain_seq, chain_hash FROM npc_nb_chain_head(?) WHERE chain_seq IS NOT NULL",
            [table],
        ).fetchone()
    return found


def chain_row(con: Any, table: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its place in the chain and its link, read under the chain's lock in
    the caller's transaction (the row is written in the same one)."""
    _lock(con, table)
    head = _head(con, table)
    position, previous = (int(head[0]), head[1]) if head is not None else (0, GENESIS)
    values = [row.get(column) for column in CHAINED[table]]
    position += 1
    return row | {"chain_seq": position, "chain_hash": link(previous, table, position, values)}


def first_break(con: Any, table: str) -> str | None:
    """Where the chain of ``table`` first breaks, in words; None if it holds. One
    query: each row's link recomputed in SQL from its digest and the stored link of
    the row before it (``schema.chains``), the first row where that fails returned."""
    duck = isinstance(con, duckdb.DuckDBPyConnection)
    key = CHAIN_KEYS[table]
    order = f"chain_seq NULLS LAST, {key}"
    previous = f"lag(chain_hash, 1, '') OVER (ORDER BY {order})"
    recomputed = sha256_sql(f"{previous} || {digest_sql(table, duck)}", duck)
    checked = (
        f"SELECT {key} AS name, chain_seq, chain_hash, "
        f"lag(chain_seq, 1, 0) OVER (ORDER BY {order}) AS before, "
        f"{recomputed} AS recomputed FROM {table}"
    )
    found = con.execute(
        f"SELECT name, chain_seq, chain_hash, before FROM ({checked}) AS c "
        "WHERE chain_seq IS NULL OR chain_hash IS NULL OR chain_seq <> before + 1 "
        "OR recomputed IS DISTINCT FROM chain_hash "
        f"ORDER BY chain_seq NULLS LAST, name LIMIT 1"
    ).fetchone()
    return None if found is None else _broken(table, key, *found)


def _broken(table: str, key: str, name: Any, position: Any, stored: Any, before: Any) -> str:
    """The first broken link, in words."""
    row = f"{table} row {key}={name!r}"
    if position is None or stored is None:
        return (
            f"{row} has no hash: it was written outside npc_nb (by SQL), so nothing vouches for it."
        )
    expected = int(before) + 1
    if position < expected:
        return (
            f"{row} repeats place {position} of the chain: a row was inserted (by SQL) "
            "beside the one npc_nb wrote there."
        )
    if position > expected:
        return (
            f"{row} is at place {position} of the chain, but place {expected} is empty: "
            f"{position - expected} row(s) before it were deleted."
        )
    return (
        f"{row} (place {position} of the chain) was changed after it was written: its "
        f"columns ({', '.join(CHAINED[table])}) no longer hash to its link."
    )


def link_holds(con: Any, table: str, row: dict[str, Any]) -> bool:
    """Whether one row (all its chained columns, ``chain_seq`` and ``chain_hash``)
    still hashes to its link, given the stored link of the row before it."""
    position, stored = row.get("chain_seq"), row.get("chain_hash")
    if position is None or stored is None or position < 1:
        return False  # no link, or a place before the chain's first (a forged "first")
    previous = GENESIS
    if position > 1:
        found = con.execute(
            f"SELECT chain_hash FROM {table} WHERE chain_seq = ?", [position - 1]
        ).fetchone()
        if found is None:
            return False
        previous = found[0]
    values = [row[column] for column in CHAINED[table]]
    return link(previous, table, int(position), values) == stored


def unlinked(con: Any, table: str) -> set[Any]:
    """The keys of the rows of ``table`` that have no link (written outside npc_nb)."""
    key = CHAIN_KEYS[table]
    found = con.execute(f"SELECT {key} FROM {table} WHERE chain_hash IS NULL").fetchall()
    return {name for (name,) in found}


def link_unlinked(con: Any, table: str, keep: set[Any]) -> int:
    """Link, after the chain's head and in the table's order, the rows without a link
    except those of ``keep`` (which were unlinked before: a bundle merge links only
    the rows it wrote, never a row SQL slipped in); how many were linked."""
    _lock(con, table)
    key = CHAIN_KEYS[table]
    head = _head(con, table)
    position, previous = (int(head[0]), head[1]) if head is not None else (0, GENESIS)
    found = con.execute(
        f"SELECT {key}, {', '.join(CHAINED[table])} FROM {table} "
        f"WHERE chain_hash IS NULL ORDER BY {CHAIN_ORDER[table]}"
    ).fetchall()
    links = []
    for name, *values in found:
        if name in keep:
            continue
        position += 1
        previous = link(previous, table, position, values)
        links.append((name, position, previous))
    for start in range(0, len(links), _BATCH):
        batch = links[start : start + _BATCH]
        marks = ", ".join("(?, ?, ?)" for _ in batch)
        con.execute(
            f"UPDATE {table} SET chain_seq = v.s, chain_hash = v.h FROM (VALUES {marks}) "
            f"AS v(k, s, h) WHERE {table}.{key} = v.k",
            [value for row in batch for value in row],
        )
    return len(links)
