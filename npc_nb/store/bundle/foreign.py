"""Another tool's SQLite file, read for an import: npcpy's ``memory_lifecycle``, mem0's
``history``.

The file is someone else's and treated as hostile. It is opened read-only and
immutable (no journal, no lock, nothing written), with ``trusted_schema`` off; only a
plain table is read (a view, a virtual table or anything else under that name is
refused, since a view could run any query); a progress handler stops a read that takes
more than ``MAX_STEPS`` virtual-machine steps; at most ``MAX_ROWS`` rows are read.
Text comes back as bytes, so a record holding bytes that are not UTF-8 is the
importer's to refuse, alone (``interop``), instead of failing the whole read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...errors import ConfigError

__all__ = ["MAX_ROWS", "ForeignTable", "read_foreign_table"]

#: The most rows read from one table (far more memories than any tool keeps).
MAX_ROWS = 1_000_000
#: SQLite virtual-machine steps a read may take (about a second per ten million here).
MAX_STEPS = 500_000_000
_CHECK_EVERY = 100_000


class ForeignTable:
    """The rows read: (rowid, {column: value}) in rowid order, and the columns found."""

    def __init__(self, columns: list[str], rows: list[tuple[int, dict[str, Any]]]) -> None:
        self.columns = columns
        self.rows = rows


def read_foreign_table(
    path: Path, table: str, wanted: Sequence[str], required: Sequence[str]
) -> ForeignTable:
    """The ``wanted`` columns of ``table`` in the SQLite file ``path`` (those it has;
    a missing ``required`` one is a ConfigError naming it)."""
    uri = f"file:{quote(str(path))}?mode=ro&immutable=1"
    try:
        con = sqlite3.connect(uri, uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise ConfigError(f"Cannot open {path} as SQLite: {exc}.") from None
    try:
        return _read(con, path, table, wanted, required)
    except sqlite3.Error as exc:
        raise ConfigError(f"Cannot read the table {table} of {path}: {exc}.") from None
    finally:
        con.close()


def _check_plain_table(con: sqlite3.Connection, path: Path, table: str) -> None:
    """``table`` exists and is a plain table: a view could run any query."""
    kind = con.execute(
        "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE", [table]
    ).fetchone()
    if kind is None:
        raise ConfigError(f"{path} has no table {table}.")
    sql = bytes(kind[1] or b"").decode("utf-8", "replace").lstrip().upper()
    if bytes(kind[0]) != b"table" or sql.startswith("CREATE VIRTUAL"):
        raise ConfigError(f"{path}: {table} is not a plain table; npc_nb reads only tables.")


def _read(
    con: sqlite3.Connection, path: Path, table: str, wanted: Sequence[str], required: Sequence[str]
) -> ForeignTable:
    con.text_factory = bytes
    con.execute("PRAGMA trusted_schema = OFF")
    steps = [0]

    def too_long() -> int:
        steps[0] += _CHECK_EVERY
        return 1 if steps[0] > MAX_STEPS else 0

    con.set_progress_handler(too_long, _CHECK_EVERY)
    _check_plain_table(con, path, table)
    found = [
        bytes(row[1]).decode("utf-8", "replace")
        for row in con.execute(f'PRAGMA table_info("{table}")').fetchall()
    ]
    if missing := [c for c in required if c not in found]:
        raise ConfigError(
            f"{path}: the table {table} lacks the column(s) {', '.join(missing)}; is it "
            "the file the tool wrote?"
        )
    columns = [c for c in wanted if c in found]
    listed = ", ".join(f'"{c}"' for c in columns)
    cursor = con.execute(
        f'SELECT rowid, {listed} FROM "{table}" ORDER BY rowid LIMIT ?', [MAX_ROWS + 1]
    )
    rows = [(int(row[0]), dict(zip(columns, row[1:], strict=True))) for row in cursor]
    if len(rows) > MAX_ROWS:
        raise ConfigError(f"{path}: the table {table} holds more than {MAX_ROWS:,} rows; split it.")
    return ForeignTable(columns, rows)
