"""SQL for the ``memories`` table: read, insert and update memory rows.

Functions that must share the caller's transaction take its connection (``con``); the
others open their own read on the store. Every approved read goes through
``predicates.approved_source``, every visibility filter through ``predicates.VISIBLE``.

When to use which: this is the operational path (rows as dicts, by id, by hash or in
the queue's order; the rows a DuckDB file's store keeps by id come from ``known_rows``).
The DataFrames a user gets (``nb.memories()``) are ``analysis.frames``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import numpy as np

from ..._foundations.terms import split_terms
from ..._foundations.utc import utc_now
from ...vocabulary import APPROVED_STATUSES
from ..contract import Connection, Store, insert_row, one_of, rows, scalar
from .known_rows import WHOLE
from .predicates import (
    LIVE,
    SCOPE_RANK_SQL,
    VISIBLE,
    approved_at,
    approved_source,
    memories_at,
    visible_to,
)

__all__ = [
    "IndexBatch",
    "Visibility",
    "add_flags",
    "approved_by_id",
    "approved_visible",
    "block_rows",
    "count_open",
    "find_by_hash",
    "get_memory",
    "index_batch",
    "insert_memory",
    "message_content",
    "newest_insert",
    "next_validity_change",
    "open_ids",
    "open_memories",
    "open_order",
    "rejected_visible",
    "rows_by_id",
    "rows_with",
    "set_vectors",
    "statuses",
    "term_keys",
    "update_memory",
]


def get_memory(
    store: Store, memory_id: str, con: Connection | None = None, *, columns: str = "*"
) -> dict | None:
    """The memory's row (only ``columns``, from this package's own SQL), or None. A
    whole row read in a transaction of its own (no ``con``) may come from
    ``store.known``: the row as a review read it ahead, if nothing changed it since."""
    if con is None:
        with store.read() as own:
            known = store.known if columns == WHOLE and not store.writing else None
            kept = known.split([memory_id], WHOLE)[0].get(memory_id) if known is not None else None
            if kept is not None:
                return dict(kept)
            return get_memory(store, memory_id, own, columns=columns)
    read = rows(con, f"SELECT {columns} FROM memories WHERE id = ?", [memory_id])
    return read[0] if read else None


def insert_memory(store: Store, con: Connection, memory: dict[str, Any]) -> int:
    """Insert a memory row; returns its ``insert_seq`` (the neighbour index's order)."""
    seq = insert_row(con, "memories", memory)
    assert seq is not None  # memories are sequenced
    store.memory_inserts += 1  # this process's neighbour indexes look again
    return seq


def update_memory(
    store: Store,
    con: Connection,
    memory_id: str,
    expected_status: str,
    changes: dict,
    *,
    as_read: bool = False,
) -> bool:
    """Apply ``changes`` if the memory still has ``expected_status``; report success.

    Call inside ``write()``. The update is conditional on the status the change was
    planned against, so of two reviewers deciding at once exactly one changes the row:
    on DuckDB the file lock and the lease serialise them (the status is checked in the
    same transaction), on PostgreSQL the second UPDATE waits for the first to commit,
    re-reads the row and matches nothing. ``as_read``: the caller knows nothing was
    written since it read ``expected_status`` (``Store.untouched_since``), so DuckDB
    skips the check.
    """
    assignments = ", ".join(f"{column} = ?" for column in changes)
    values = [*changes.values(), memory_id]
    store.row_changing(memory_id)
    if store.sole_writer:
        # A condition beside the key makes DuckDB scan the table (tens of ms at 100k
        # memories). Nobody else writes in this transaction: check by key, update by key.
        if not as_read:
            found = con.execute("SELECT status FROM memories WHERE id = ?", [memory_id]).fetchone()
            if found is None or found[0] != expected_status:
                return False
        con.execute(f"UPDATE memories SET {assignments} WHERE id = ?", values)
    elif not con.execute(
        f"UPDATE memories SET {assignments} WHERE id = ? AND status = ? RETURNING id",
        [*values, expected_status],
    ).fetchall():
        return False
    store.bump_generation(con)
    return True


def find_by_hash(
    con: Connection, digest: str, npc: str | None, team: str | None, arm: str | None = None
) -> list[dict]:
    """Visible memories whose proposed or final text normalises to ``digest`` (with
    ``arm``, that experiment arm's only: ``predicates.visible_to``).

    Superseded versions are left out: a fact that changes back ("the deadline is
    Friday" again) is news a reviewer should see, not a repeat.
    """
    # Two plain lookups, each served by its hash index, in one statement: an OR, or the
    # visibility filter in the same scan, makes DuckDB read the whole table instead.
    columns = "id, status, scope, npc, team, source_message_id, experiment_arm"
    found = {
        row["id"]: row
        for row in rows(
            con,
            f"SELECT {columns} FROM memories WHERE final_hash = $digest UNION ALL "
            f"SELECT {columns} FROM memories WHERE initial_hash = $digest",
            {"digest": digest},
        )
    }
    return [
        row
        for row in found.values()
        if row["status"] != "superseded" and visible_to(row, npc, team, arm)
    ]


def rejected_visible(con: Connection, npc: str | None, team: str | None) -> list[tuple]:
    """(id, normalised text) of every rejected memory visible to ``npc``."""
    return con.execute(
        f"SELECT id, norm_text FROM memories WHERE status = 'human-rejected' AND {VISIBLE}",
        {"npc": npc, "team": team},
    ).fetchall()


def add_flags(store: Store, con: Connection, memory_id: str, flags: list[str]) -> None:
    """Add flags to a memory (in the caller's transaction; a flag is never lost)."""
    store.row_changing(memory_id)
    found = con.execute("SELECT flags FROM memories WHERE id = ?", [memory_id]).fetchone()
    current = list(found[0] or ()) if found else []
    con.execute(
        "UPDATE memories SET flags = ? WHERE id = ?",
        [current + [flag for flag in dict.fromkeys(flags) if flag not in current], memory_id],
    )


def approved_visible(con: Connection, npc: str, team: str | None) -> list[dict]:
    """Approved memories visible to ``npc``: most specific scope, then newest, first."""
    source, params = approved_source()
    return rows(
        con,
        "SELECT id, final_text, final_hash, norm_text, scope, category, valid_from, "
        f"valid_to, decided_at, {SCOPE_RANK_SQL} AS scope_rank "
        f"FROM {source} WHERE {VISIBLE} ORDER BY scope_rank, decided_at DESC, id",
        params | {"npc": npc, "team": team},
    )


def block_rows(con: Connection, ids: list[str]) -> list[dict]:
    """What the memory block needs of these memories, whatever their status, and what
    decides whether one is approved and visible (looked up by primary key only: a
    filter beside the key would make DuckDB scan the table)."""
    if not ids:
        return []
    return rows(
        con,
        "SELECT id, final_text, final_hash, norm_text, scope, category, valid_from, "
        "valid_to, decided_at, status, superseded_by, npc, team, experiment_arm FROM memories "
        f"WHERE id IN ({', '.join('?' for _ in ids)})",
        ids,
    )


def approved_by_id(store: Store, ids: list[str]) -> list[dict]:
    """Those of these memories that are approved now: id, text and who may see it, in
    the order of ``ids`` (looked up by primary key: the ids are few, the memories may be
    many)."""
    now = utc_now()
    found = _rows_by_id(store, ids)
    return [
        {column: row[column] for column in ("id", "final_text", "scope", "npc", "team")}
        for row in (found.get(memory_id) for memory_id in dict.fromkeys(ids))
        if row is not None and approved_at(row, now)
    ]


#: What a lookup of a few memories by id reads (``approved_by_id``), and what
#: ``store.known`` keeps of each.
_LOOKUP_COLUMNS = (
    "id, status, final_text, final_hash, scope, npc, team, superseded_by, recorded_at, "
    "valid_from, valid_to"
)
#: What a matcher judges of a candidate's neighbours (``rows_by_id``): a third less to
#: read than ``_LOOKUP_COLUMNS`` (ten rows by id, 1.4 to 1.0 ms at 100k memories).
_JUDGED_COLUMNS = "id, status, final_text"


def _rows_by_id(store: Store, ids: list[str], columns: str = _LOOKUP_COLUMNS) -> dict[str, dict]:
    """{id: row} of these memories (``columns``; missing ids left out), by primary
    key. Rows read before and unchanged since come from ``store.known``; the dicts are
    shared with it, so callers copy before they change one."""
    if not ids:
        return {}
    with store.read() as con:
        known = store.known if not store.writing else None
        found, unread = (
            known.split(ids, columns) if known is not None else ({}, list(dict.fromkeys(ids)))
        )
        if unread:
            listed, named = one_of("id", unread, "id")
            read = rows(con, f"SELECT {columns} FROM memories WHERE {listed}", named)
            if known is not None:
                known.keep(read, columns)
            found |= {row["id"]: row for row in read}
    return found


def next_validity_change(con: Connection, npc: str, team: str | None) -> datetime | None:
    """The next moment a visible approved memory enters or leaves its validity window.

    Until then, ``approved_visible`` cannot change without a decision.
    """
    moment = scalar(
        con,
        "SELECT min(CASE WHEN valid_from > $now THEN valid_from ELSE valid_to END) "
        "FROM memories WHERE status = ANY($approved) AND superseded_by IS NULL "
        f"AND (valid_from > $now OR valid_to > $now) AND {VISIBLE}",
        {"npc": npc, "team": team, "approved": list(APPROVED_STATUSES), "now": utc_now()},
    )
    return moment


#: Who may see a memory, as the neighbour index keys it: (scope, npc, team, the
#: experiment arm it belongs to, None for live memory).
Visibility = tuple[str, str | None, str | None, str | None]


@dataclass(frozen=True)
class IndexBatch:
    """Memories for the neighbour index, oldest first, as columns: each memory's
    ``insert_seq``, id and visibility, its content terms as (position in this batch,
    term key) pairs, keyed by ``term_keys``, and its stored sentence vector (``vectors``:
    bytes, or None where none is stored yet)."""

    seqs: np.ndarray
    ids: list[str]
    #: The batch's distinct visibilities (``Visibility``), and each memory's place among
    #: them: a code per memory, not a tuple each (a load makes no object per memory).
    visibilities: list[Visibility]
    visibility: np.ndarray
    term_positions: np.ndarray
    term_keys: np.ndarray
    vectors: list[Any] | None = None

    def __len__(self) -> int:
        return len(self.ids)


def index_batch(store: Store, after_seq: int) -> IndexBatch | None:
    """The memories inserted after ``after_seq`` (None when there are none): what the
    neighbour index loads, incrementally.

    On DuckDB the terms never become Python objects: the engine unnests and keys them
    and hands back two numeric columns (a 100k store loads in a tenth of a second).
    """
    with store.read() as con:
        top = int(scalar(con, "SELECT coalesce(max(insert_seq), 0) FROM memories"))
        if top <= after_seq:
            return None
        bounds = [after_seq, top]  # a memory inserted meanwhile waits for the next load
        if not isinstance(con, duckdb.DuckDBPyConnection):
            return _batch_from_rows(con, bounds)
        # Each memory's visibility as its place among the batch's distinct ones, which
        # the next query lists in the same order (the file is held: nothing changes).
        memories = con.execute(
            f"WITH seen AS ({_VISIBILITIES}), "
            f"placed AS (SELECT *, row_number() OVER (ORDER BY {_VISIBILITY_ORDER}) - 1 "
            "AS visibility FROM seen) "
            "SELECT insert_seq, id, visibility, match_vector FROM memories JOIN placed "
            "ON memories.scope = placed.scope AND memories.npc IS NOT DISTINCT FROM placed.npc "
            "AND memories.team IS NOT DISTINCT FROM placed.team "
            "AND memories.experiment_arm IS NOT DISTINCT FROM placed.experiment_arm "
            "WHERE insert_seq > $after AND insert_seq <= $top",
            {"after": bounds[0], "top": bounds[1]},
        ).fetchnumpy()
        visibilities = con.execute(
            f"{_VISIBILITIES} ORDER BY {_VISIBILITY_ORDER}",
            {"after": bounds[0], "top": bounds[1]},
        ).fetchall()
        pairs = con.execute(
            f"SELECT insert_seq, {TERM_KEY_SQL.format(_STORED_TERMS)} AS term_key "
            "FROM memories "
            "WHERE insert_seq > ? AND insert_seq <= ?",
            bounds,
        ).fetchnumpy()
    order = np.argsort(memories["insert_seq"], kind="stable")
    seqs = memories["insert_seq"][order].astype(np.int64)
    vectors = memories["match_vector"][order]
    return IndexBatch(
        seqs=seqs,
        ids=memories["id"][order].tolist(),
        visibilities=[(scope, npc, team, arm) for scope, npc, team, arm in visibilities],
        visibility=memories["visibility"][order].astype(np.int32),
        term_positions=_positions_of(seqs, pairs["insert_seq"].astype(np.int64)),
        term_keys=pairs["term_key"].astype(np.uint64),
        vectors=list(vectors.tolist()),  # a masked (NULL) vector is None
    )


def _batch_from_rows(con: Any, bounds: list[int]) -> IndexBatch:
    """``index_batch`` on an engine without DuckDB's column fetch (PostgreSQL): rows,
    with the terms keyed here."""
    found = con.execute(
        "SELECT insert_seq, id, scope, npc, team, match_text, match_vector, experiment_arm "
        "FROM memories "
        "WHERE insert_seq > ? AND insert_seq <= ? ORDER BY insert_seq",
        bounds,
    ).fetchall()
    stored = [split_terms(row[5]) for row in found]
    positions = [p for p, terms in enumerate(stored) for _ in terms]
    terms = [term for listed in stored for term in listed]
    visibilities = list(dict.fromkeys((row[2], row[3], row[4], row[7]) for row in found))
    place = {seen: code for code, seen in enumerate(visibilities)}
    return IndexBatch(
        seqs=np.array([row[0] for row in found], dtype=np.int64),
        ids=[row[1] for row in found],
        visibilities=visibilities,
        visibility=np.array(
            [place[(row[2], row[3], row[4], row[7])] for row in found], dtype=np.int32
        ),
        term_positions=np.array(positions, dtype=np.int64),
        term_keys=term_keys(terms),
        vectors=[row[6] for row in found],
    )


def _positions_of(seqs: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` is in ``seqs`` (ascending, every one present)."""
    if not len(seqs):
        return np.empty(0, dtype=np.int64)
    first, span = int(seqs[0]), int(seqs[-1] - seqs[0]) + 1
    if span > 4 * len(seqs) + 1024:  # sparse sequence numbers: search instead
        return np.searchsorted(seqs, wanted)
    where = np.empty(span, dtype=np.int64)  # dense: one lookup table, no search
    where[seqs - first] = np.arange(len(seqs))
    return where[wanted - first]


#: The distinct visibilities (``Visibility``) of the memories an index batch holds.
_VISIBILITIES = (
    "SELECT DISTINCT scope, npc, team, experiment_arm FROM memories "
    "WHERE insert_seq > $after AND insert_seq <= $top"
)
_VISIBILITY_ORDER = "scope, npc NULLS FIRST, team NULLS FIRST, experiment_arm NULLS FIRST"
#: How a content term becomes the neighbour index's key, in SQL (``{}`` is the term):
#: DuckDB's 64-bit hash, the same in the store's queries and in ``term_keys``.
TERM_KEY_SQL = "hash({})"
#: A memory's stored terms, one row each (``_foundations.terms.joined_terms`` undone, in SQL).
_STORED_TERMS = "unnest(string_split(nullif(match_text, ''), ' '))"
_keying = threading.Lock()
_keying_db: list[duckdb.DuckDBPyConnection] = []
#: Keys already computed, by term: a vocabulary repeats, and a query costs a millisecond.
_known_keys: dict[str, int] = {}
_KNOWN_KEYS_MAX = 500_000


def term_keys(terms: Sequence[str]) -> np.ndarray:
    """The index keys of ``terms`` (uint64, in order), exactly as ``TERM_KEY_SQL``
    computes them in a store's query: on a private in-memory DuckDB, once per term."""
    if not terms:
        return np.empty(0, dtype=np.uint64)
    with _keying:
        new = [term for term in dict.fromkeys(terms) if term not in _known_keys]
        if new:
            if len(_known_keys) + len(new) > _KNOWN_KEYS_MAX:
                _known_keys.clear()  # a bound on memory: start again
                new = list(dict.fromkeys(terms))
            _known_keys.update(zip(new, _computed_keys(new).tolist(), strict=True))
        return np.fromiter((_known_keys[term] for term in terms), np.uint64, len(terms))


def _computed_keys(terms: list[str]) -> np.ndarray:
    """``TERM_KEY_SQL`` of each term (call holding ``_keying``)."""
    if not _keying_db:
        _keying_db.append(duckdb.connect())
    found = (
        _keying_db[0]
        .execute(f"SELECT {TERM_KEY_SQL.format('unnest($terms)')} AS key", {"terms": terms})
        .fetchnumpy()
    )
    return found["key"].astype(np.uint64)


def texts_by_id(store: Store, ids: list[str]) -> dict[str, str]:
    """{id: initial text} of these memories (what their stored vector embeds)."""
    found: dict[str, str] = {}
    with store.read() as con:
        for start in range(0, len(ids), 10_000):  # bounded statements on a large backfill
            listed, named = one_of("id", ids[start : start + 10_000], "id")
            found |= dict(con.execute(f"SELECT id, initial_text FROM memories WHERE {listed}",
                                      named).fetchall())  # fmt: skip
    return found


def set_vectors(store: Store, vectors: dict[str, bytes]) -> None:
    """Store sentence vectors of memories that had none (the neighbour index computed
    them once, on its first load of rows from before vectors were stored). Not a
    decision: no generation moves; the rows kept by id are read again."""
    if not vectors:
        return
    with store.write() as con:
        if isinstance(con, duckdb.DuckDBPyConnection):
            import pandas as pd

            frame = pd.DataFrame({"id": list(vectors), "vector": list(vectors.values())})
            con.register("new_vectors", frame)
            try:
                con.execute(
                    "UPDATE memories SET match_vector = v.vector::BLOB FROM new_vectors v "
                    "WHERE memories.id = v.id AND memories.match_vector IS NULL"
                )
            finally:
                con.unregister("new_vectors")
        else:
            con.executemany(
                "UPDATE memories SET match_vector = ? WHERE id = ? AND match_vector IS NULL",
                [(vector, memory_id) for memory_id, vector in vectors.items()],
            )
        if store.known is not None:
            store.known.clear()


def newest_insert(store: Store) -> int:
    """The highest ``insert_seq`` in the store (0 when empty)."""
    with store.read() as con:
        return int(scalar(con, "SELECT coalesce(max(insert_seq), 0) FROM memories"))


def rows_by_id(store: Store, ids: list[str]) -> list[dict]:
    """The id, status and text of these memories, as they are now (any order; missing
    ids left out): what a matcher judges a candidate's neighbours by."""
    return [dict(row) for row in _rows_by_id(store, ids, _JUDGED_COLUMNS).values()]


def rows_with(store: Store, ids: list[str], columns: str) -> list[dict]:
    """``columns`` (this package's own list) of these memories, as they are now (any
    order; missing ids left out): an audit's sampled cards, read by primary key."""
    return [dict(row) for row in _rows_by_id(store, ids, columns).values()]


def statuses(con: Connection, ids: list[str]) -> dict[str, str]:
    """{id: status} of these memories (missing ids left out), in the caller's transaction."""
    if not ids:
        return {}
    found = con.execute(
        f"SELECT id, status FROM memories WHERE id IN ({', '.join('?' for _ in ids)})", ids
    ).fetchall()
    return dict(found)


def message_content(store: Store, message_id: str) -> str | None:
    with store.read() as con:
        found = con.execute("SELECT content FROM messages WHERE id = ?", [message_id]).fetchone()
    return found[0] if found else None


def open_memories(
    store: Store, filters: dict[str, Any], now: datetime, columns: Sequence[str] = ("*",)
) -> list[dict]:
    """Pending and due deferred memories matching the filters, in review order: whole
    rows, or only ``columns`` (reading fewer columns of a large store is much faster).
    Whole rows of listed ``ids`` (the cards a review reads ahead) are kept in
    ``store.known``, so a decision on one of them does not read it again."""
    sql, params = _open_query(filters, now, ", ".join(columns))
    with store.read() as con:
        found = rows(con, sql, params)
        listed = tuple(columns) == (WHOLE,) and filters.get("ids") is not None
        if listed and store.known is not None and not store.writing:
            store.known.keep([dict(row) for row in found], WHOLE)  # never the rows handed out
        return found


def open_order(store: Store, filters: dict[str, Any], now: datetime) -> list[tuple]:
    """(id, skipped_at, recorded_at) of ``open_memories``, in review order, as tuples:
    what merging two stores' queues needs."""
    sql, params = _open_query(filters, now, "id, skipped_at, recorded_at")
    with store.read() as con:
        return con.execute(sql, params).fetchall()


def open_ids(store: Store, filters: dict[str, Any], now: datetime) -> list[str]:
    """The ids of ``open_memories``, in review order: one column and no datetime made,
    fetched from DuckDB as an array (half the time of ``open_order`` at 160,000 open)."""
    sql, params = _open_query(filters, now, "id")
    with store.read() as con:
        result = con.execute(sql, params)
        if isinstance(con, duckdb.DuckDBPyConnection):
            return result.fetchnumpy()["id"].tolist()
        return [memory_id for (memory_id,) in result.fetchall()]


def _open_query(filters: dict[str, Any], now: datetime, columns: str) -> tuple[str, dict]:
    clauses = ["(status = 'pending_approval' OR (status = 'deferred' AND defer_until <= $now))"]
    params: dict[str, Any] = {"now": now}
    if filters.get("arms") is not None:  # an experiment's review: its arms' cards only
        which, arms = one_of("experiment_arm", list(filters["arms"]) or [""], "arm")
        clauses.append(which)
        params |= arms
    else:
        clauses.append(LIVE)
    for column in ("npc", "team", "category", "scope", "conversation_id"):
        if filters.get(column) is not None:
            clauses.append(f"{column} = ${column}")
            params[column] = filters[column]
    listed, table = "", "memories"
    if filters.get("as_of") is not None:  # the queue as it stood then (its clock is now)
        state, then = memories_at(filters["as_of"], _columns_at(columns))
        table = f"({state}) AS as_of"
        params |= then
    elif filters.get("ids") is not None:
        # These memories first, then the other conditions: in one WHERE, DuckDB reads
        # every row's status and filter columns before it looks at the ids.
        which, listed_ids = one_of("id", filters["ids"], "id")
        listed = f"WITH listed AS MATERIALIZED (SELECT * FROM memories WHERE {which}) "
        table = "listed"
        params |= listed_ids
    sql = (
        f"{listed}SELECT {columns} FROM {table} WHERE "
        + " AND ".join(clauses)
        + " ORDER BY skipped_at NULLS FIRST, recorded_at, id"
    )
    return sql, params


#: The columns the open query filters and orders by: a past state must carry them.
_OPEN_COLUMNS = (
    "id",
    "status",
    "defer_until",
    "skipped_at",
    "recorded_at",
    "experiment_arm",
    "npc",
    "team",
    "category",
    "scope",
    "conversation_id",
)


def _columns_at(columns: str) -> tuple[str, ...] | None:
    """The columns a past state of the memories is read with (SQL both engines take);
    None (every column, DuckDB's form) for ``*``."""
    if columns.strip() == WHOLE:
        return None
    return tuple(dict.fromkeys([*(c.strip() for c in columns.split(",")), *_OPEN_COLUMNS]))


def count_open(store: Store, now: datetime) -> int:
    with store.read() as con:
        count = scalar(
            con,
            "SELECT count(*) FROM memories WHERE (status = 'pending_approval' "
            f"OR (status = 'deferred' AND defer_until <= ?)) AND {LIVE}",
            [now],
        )
    return int(count)
