"""The staged rows of a bundle written into a project's store, in one transaction.

Into an **empty** project (every bundled table empty; refused otherwise, naming what is
there) every row is written as it was, the audit log's ``seq`` and the memories'
``insert_seq`` included, and the sequences that number them then start after the
largest: exporting the project again gives the same tables, checksum for checksum.

**Merged** into a project that holds rows (``merge=True``), a row whose primary key is
already there is a duplicate, skipped and counted; in a table without one (the audit
log, concepts, injections) a row equal in every column to one already there is. The
numbers a sequence gives (``contract._SEQUENCED``) are local to a store, so merged rows
get new ones from the target's sequence (audit events in their old order), and a
column that names such a number follows it: ``SEQUENCE_REFERENCES`` lists those naming
one row (an undo's ``undoes``), ``SEQUENCE_RANGES`` those naming a range of rows (a
snapshot's events: above ``event_floor`` up to ``event_seq``). A table a column refers
to is written first, and its map from old numbers to new is kept (a temporary table)
until every table is written, then dropped (on PostgreSQL temporary tables outlive the
transaction in the pooled session; a failure rolls their creation back). A new table
whose column names a sequenced number must be listed in one of them.

A merged range is exact when every row in it was new here: its rows keep their order
and are numbered after all the target's own, so the range maps to the new numbers
between them (the target's own rows, lower, fall outside it). A range holding a row
that was already here (a bundle of the same project merged before) cannot be one
range of this store: it is written as ``-1, -1``, which readers refuse.

A merge keeps the target's decisions (``decided``): a memory already here keeps its
audit trail as well as its row (the bundle's events and votes of it are not written),
and the incoming approvals the interop service held are put back in the review queue.

Merged rows of a hash-chained table (``chain``) come without their link and are
linked after this store's chain's head once every table is written (rows already
without a link before the merge stay so: ``verify`` names them).

Either way the store's decision generation starts a new epoch (every cache reloads)
and this process's neighbour indexes look again. On a DuckDB file the staged file is
attached read-only; on PostgreSQL its rows are copied (``Store.copy_rows``) into
temporary tables of the transaction. The inserts are the same SQL on both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ..._foundations.utc import utc_now
from ...errors import StoreError
from ..chain import CHAIN_COLUMNS, CHAINED, link_unlinked, unlinked
from ..contract import _SEQUENCED as SEQUENCED
from ..contract import Connection, Store, scalar
from ..moving.copy_into import catalog_tables
from .decided import KEPT, drop_kept_views, reopen, without_kept
from .tables import Column, current_schema, quoted, store_home

__all__ = ["SEQUENCE_RANGES", "SEQUENCE_REFERENCES", "Loaded", "load_staged"]

#: Columns naming one number a sequence gave: (table, column) -> the numbered table.
SEQUENCE_REFERENCES = {("memory_events", "undoes"): "memory_events"}
#: Column pairs naming a range of such numbers, (floor, last]: (table, floor, last) ->
#: the numbered table.
SEQUENCE_RANGES = {("snapshots", "event_floor", "event_seq"): "memory_events"}
_ATTACHED = "npc_bundle_in"
_SEQMAP = "npc_bundle_seqmap"
_BATCH = 5000


@dataclass(frozen=True)
class Loaded:
    """Rows written per table, and rows skipped as duplicates (a merge)."""

    inserted: dict[str, int]
    skipped: dict[str, int]


def load_staged(
    store: Store,
    staged: Path,
    *,
    merge: bool,
    project: str,
    kept: Iterable[str] = (),
    held: dict[str, str] | None = None,
    actor: str = "imported:bundle",
) -> Loaded:
    """Write the staged file's rows into ``store`` (see the module docstring); in a
    merge, the ``kept`` memories' trails stay the target's, and the ``held`` incoming
    memories ({id: reason}) are put back in the review queue (``decided``)."""
    columns, keys, _ = current_schema()
    _check_target(store, columns)
    duck = False
    try:
        with store.write() as con:
            duck = isinstance(con, duckdb.DuckDBPyConnection)
            if not merge:
                _refuse_unless_empty(con, columns, project)
            incoming = _incoming(store, con, staged, columns, duck)
            offered_rows = dict(incoming)  # a kept memory's rows count as skipped
            keeping = merge and without_kept(store, con, incoming, kept)
            unlinked_before = {t: unlinked(con, t) for t in CHAINED} if merge else {}
            inserted, skipped = {}, {}
            for table in _referenced_first(columns):
                before = _count(con, quoted(table))
                offered = _count(con, offered_rows[table])
                cols = columns[table]
                key = keys.get(table, [])
                _insert(store, con, table, cols, key, incoming[table], merge, keeping)
                inserted[table] = _count(con, quoted(table)) - before
                skipped[table] = offered - inserted[table]
            _drop_number_maps(con, columns)
            drop_kept_views(con)
            for table, keep in unlinked_before.items():  # merged rows join this chain
                link_unlinked(con, table, keep)
            if not merge:
                _restart_sequences(con, duck)
            reopen(store, con, held or {}, actor=actor, now=utc_now())  # numbered after all
            store.bump_generation(con, rewrite=True)
    finally:
        if duck:
            with store.read() as con:
                con.execute(f"DETACH DATABASE IF EXISTS {_ATTACHED}")
    store.memory_inserts += inserted.get("memories", 0)
    return Loaded(inserted, skipped)


def _referenced_first(columns: dict[str, list[Column]]) -> list[str]:
    """The tables in schema order, except that a table whose numbers another table's
    column names comes before it."""
    referenced = set(SEQUENCE_REFERENCES.values()) | set(SEQUENCE_RANGES.values())
    return sorted(columns, key=lambda table: table not in referenced)


def _referring(table: str) -> tuple[set[str], list[tuple[str, str, str]]]:
    """``table``'s columns naming one number, and its (floor, last, numbered) ranges."""
    one = {column for (t, column) in SEQUENCE_REFERENCES if t == table}
    ranges = [(f, last, named) for (t, f, last), named in SEQUENCE_RANGES.items() if t == table]
    return one, ranges


def _map_of(table: str) -> str:
    """The temporary table mapping ``table``'s old numbers to new ones in a merge."""
    return f"{_SEQMAP}_{table}"


def _drop_number_maps(con: Connection, columns: dict[str, list[Column]]) -> None:
    for table in set(SEQUENCE_REFERENCES.values()) | set(SEQUENCE_RANGES.values()):
        if table in columns:
            con.execute(f"DROP TABLE IF EXISTS {_map_of(table)}")


def _check_target(store: Store, columns: dict[str, list[Column]]) -> None:
    with store.analysis() as con:
        catalog, schema = store_home(con)
        found = catalog_tables(con, catalog, schema)
    missing = sorted(
        name
        for name, cols in columns.items()
        if sorted(found.get(name, [])) != sorted(c.name for c in cols)
    )
    if missing:
        raise StoreError(
            f"The project's store {store.path} lacks tables or columns of this npc_nb's "
            f"schema ({', '.join(missing)}); open it with this npc_nb first. Nothing was "
            "imported."
        )


def _count(con: Connection, relation: str) -> int:
    return int(scalar(con, f"SELECT count(*) FROM {relation}"))


def _refuse_unless_empty(con: Connection, columns: dict[str, list[Column]], project: str) -> None:
    held = {table: _count(con, quoted(table)) for table in columns}
    held = {table: count for table, count in held.items() if count}
    if held:
        listed = ", ".join(f"{count} {table}" for table, count in sorted(held.items()))
        raise StoreError(
            f"The project {project!r} is not empty ({listed}); a bundle is imported into "
            "an empty project. Nothing was imported. Import it into a new project folder "
            "(create=True), or merge it into this one with into_nonempty=True "
            "(--into-nonempty): rows already there, by id, are skipped and counted."
        )


# -- the incoming rows ---------------------------------------------------------------------


def _incoming(
    store: Store, con: Connection, staged: Path, columns: dict[str, list[Column]], duck: bool
) -> dict[str, str]:
    """Each table's staged rows as a relation name the target's SQL can read."""
    if duck:
        literal = str(staged).replace("'", "''")
        con.execute(f"ATTACH '{literal}' AS {_ATTACHED} (READ_ONLY)")
        return {table: f"{_ATTACHED}.main.{quoted(table)}" for table in columns}
    names = {}
    with _reader(staged) as reader:
        for table, cols in columns.items():
            temp = quoted(f"{_ATTACHED}_{table}")
            con.execute(f"CREATE TEMP TABLE {temp} (LIKE {quoted(table)}) ON COMMIT DROP")
            listed = ", ".join(quoted(c.name) for c in cols)
            store.copy_rows(
                con,
                temp,
                [c.name for c in cols],
                _rows(reader, f"SELECT {listed} FROM {quoted(table)}"),
            )
            names[table] = f"pg_temp.{temp}"
    return names


@contextmanager
def _reader(staged: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(str(staged), read_only=True)
    try:
        yield con
    finally:
        con.close()


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> Iterator[tuple[Any, ...]]:
    cursor = con.execute(sql)
    while batch := cursor.fetchmany(_BATCH):
        yield from batch


# -- the inserts ------------------------------------------------------------------------------


def _insert(
    store: Store,
    con: Connection,
    table: str,
    columns: list[Column],
    key: list[str],
    source: str,
    merge: bool,
    keeping: bool = False,
) -> None:
    names = [c.name for c in columns]
    if merge:  # a merged row is linked into this store's chain afterwards
        names = [n for n in names if n not in CHAIN_COLUMNS]
    listed = ", ".join(quoted(n) for n in names)
    if not merge:
        con.execute(f"INSERT INTO {quoted(table)} ({listed}) SELECT {listed} FROM {source}")
        return
    sequenced = SEQUENCED.get(table)
    renumbered = {sequenced[0]} if sequenced else set()
    references, ranges = _referring(table)
    referring = references | {c for f, last, _ in ranges for c in (f, last)}
    compared = (
        key
        if key and set(key) != renumbered
        else [n for n in names if n not in renumbered | referring]
    )
    new = f"NOT EXISTS (SELECT 1 FROM {quoted(table)} t WHERE {_same(compared)})"
    referenced = table in set(SEQUENCE_REFERENCES.values()) | set(SEQUENCE_RANGES.values())
    if sequenced is None:
        values = [_mapped_value(n, references, ranges) for n in names]
        con.execute(
            f"INSERT INTO {quoted(table)} ({listed}) SELECT {', '.join(values)} "
            f"FROM {source} s WHERE {new}"
        )
    elif not referenced:
        column, sequence = sequenced
        rest = [n for n in names if n != column]
        con.execute(
            f"INSERT INTO {quoted(table)} ({quoted(column)}, {', '.join(map(quoted, rest))}) "
            f"SELECT nextval('{sequence}'), {_from('s', rest)} FROM {source} s WHERE {new}"
        )
    else:
        _insert_renumbered(store, con, table, names, compared, source, references, keeping)


def _mapped_value(name: str, references: set[str], ranges: list[tuple[str, str, str]]) -> str:
    """The SQL value written for the incoming column ``name`` (of ``s``) in a merge: as
    it is, or its number (or its range's end) in this store."""
    if name in references:
        named = next(n for (_, c), n in SEQUENCE_REFERENCES.items() if c == name)
        return f"(SELECT m.new_seq FROM {_map_of(named)} m WHERE m.old_seq = s.{quoted(name)})"
    for floor, last, named in ranges:
        if name in (floor, last):
            return _range_end(floor, last, _map_of(named), name == floor)
    return f"s.{quoted(name)}"


def _range_end(floor: str, last: str, numbers: str, lower: bool) -> str:
    """SQL: the new ``floor`` (``lower``) or ``last`` of an incoming range (floor, last]
    whose numbers ``numbers`` maps; -1 when a row in it was already here (see the
    module docstring)."""
    old_floor, old_last = f"coalesce(s.{quoted(floor)}, 0)", f"s.{quoted(last)}"
    unplaced = (
        f"{old_floor} < 0 OR EXISTS (SELECT 1 FROM {numbers} d WHERE NOT d.fresh "
        f"AND d.old_seq > {old_floor} AND d.old_seq <= {old_last})"
    )
    before = (
        f"coalesce((SELECT min(b.new_seq) - 1 FROM {numbers} b WHERE b.fresh), "
        f"(SELECT coalesce(max(c.new_seq), 0) FROM {numbers} c))"
    )
    new_floor = (
        f"coalesce((SELECT max(f.new_seq) FROM {numbers} f WHERE f.fresh "
        f"AND f.old_seq <= {old_floor}), {before})"
    )
    end = (
        new_floor
        if lower
        else (
            f"coalesce((SELECT max(e.new_seq) FROM {numbers} e WHERE e.fresh "
            f"AND e.old_seq <= {old_last}), {new_floor})"
        )
    )
    return f"CASE WHEN {unplaced} THEN -1 ELSE {end} END"


def _same(columns: list[str]) -> str:
    return " AND ".join(f"t.{quoted(c)} IS NOT DISTINCT FROM s.{quoted(c)}" for c in columns)


def _from(alias: str, names: list[str]) -> str:
    return ", ".join(f"{alias}.{quoted(n)}" for n in names)


def _insert_renumbered(
    store: Store,
    con: Connection,
    table: str,
    names: list[str],
    compared: list[str],
    source: str,
    references: set[str],
    keeping: bool,
) -> None:
    """Merge a sequenced table whose numbers other rows name: duplicates map to the
    number they have here, new rows to fresh numbers in their old order, and the
    naming columns follow the map."""
    column = SEQUENCED[table][0]
    numbers = _map_of(table)
    _number_map(store, con, table, compared, source, keeping)
    rest = [n for n in names if n != column and n not in references]
    follow = {n: f"r_{i}" for i, n in enumerate(sorted(references))}
    joins = " ".join(
        f"LEFT JOIN {numbers} {alias} ON {alias}.old_seq = s.{quoted(n)}"
        for n, alias in follow.items()
    )
    targets = ", ".join(quoted(n) for n in [column, *rest, *follow])
    values = ", ".join(
        ["m.new_seq", *(f"s.{quoted(n)}" for n in rest), *(f"{a}.new_seq" for a in follow.values())]
    )
    con.execute(
        f"INSERT INTO {quoted(table)} ({targets}) SELECT {values} FROM {source} s "
        f"JOIN {numbers} m ON m.old_seq = s.{quoted(column)} {joins} "
        "WHERE m.fresh ORDER BY m.new_seq"
    )  # the map is kept for the tables that name these numbers (_drop_number_maps)


def _number_map(
    store: Store, con: Connection, table: str, compared: list[str], source: str, keeping: bool
) -> None:
    """The temporary map from each incoming row's number to its number here: a
    duplicate's existing one, none for an event of a memory whose trail the target
    keeps (``keeping``: not written, and a range holding it is not exact), or a fresh
    one from the sequence (``fresh``)."""
    column, sequence = SEQUENCED[table]
    mapped = _map_of(table)
    con.execute(f"CREATE TEMP TABLE {mapped} (old_seq BIGINT, new_seq BIGINT, fresh BOOLEAN)")
    con.execute(
        f"INSERT INTO {mapped} SELECT s.{quoted(column)}, min(t.{quoted(column)}), false "
        f"FROM {source} s JOIN {quoted(table)} t ON {_same(compared)} GROUP BY s.{quoted(column)}"
    )
    if keeping and table == "memory_events":
        con.execute(
            f"INSERT INTO {mapped} SELECT s.{quoted(column)}, NULL, false FROM {source} s "
            f"WHERE s.memory_id IN (SELECT memory_id FROM {KEPT}) "
            f"AND s.{quoted(column)} NOT IN (SELECT old_seq FROM {mapped})"
        )
    fresh = [
        int(row[0])
        for row in con.execute(
            f"SELECT s.{quoted(column)} FROM {source} s WHERE s.{quoted(column)} NOT IN "
            f"(SELECT old_seq FROM {mapped}) ORDER BY s.{quoted(column)}"
        ).fetchall()
    ]
    if not fresh:
        return
    numbers = sorted(
        int(row[0])
        for row in con.execute(
            f"SELECT nextval('{sequence}') FROM generate_series(1, {len(fresh)})"
        ).fetchall()
    )
    _rows_into(store, con, mapped, [(o, n, True) for o, n in zip(fresh, numbers, strict=True)])


def _rows_into(
    store: Store, con: Connection, table: str, rows: list[tuple[int, int, bool]]
) -> None:
    """The renumbering map's new rows into its temporary table."""
    names = ["old_seq", "new_seq", "fresh"]
    if not rows:
        return
    if isinstance(con, duckdb.DuckDBPyConnection):
        frame = pd.DataFrame(rows, columns=names)
        con.register("npc_bundle_rows", frame)
        try:
            con.execute(f"INSERT INTO {table} SELECT old_seq, new_seq, fresh FROM npc_bundle_rows")
        finally:
            con.unregister("npc_bundle_rows")
        return
    store.copy_rows(con, table, names, iter(rows))


def _restart_sequences(con: Connection, duck: bool) -> None:
    """Each numbering sequence starts after the largest number written (DuckDB has no
    setval: the sequence is made again)."""
    for table, (column, sequence) in SEQUENCED.items():
        last = int(scalar(con, f"SELECT coalesce(max({quoted(column)}), 0) FROM {quoted(table)}"))
        if duck:
            con.execute(f"CREATE OR REPLACE SEQUENCE {sequence} START {last + 1}")
        else:
            con.execute(f"SELECT setval('{sequence}', {last + 1}, false)")
