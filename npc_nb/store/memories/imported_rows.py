"""The ``imported_records`` table: which records of another tool were imported, and
what each became.

One row per record read from npcpy, mem0 or Letta, keyed by the source and the
record's own id (``source_key``), so importing the same file again finds every record
already there and imports nothing new. The row names the memory the record became or
matched, the outcome, the source file and time, who imported it and when, and the
source's provenance (user and agent ids, original ids and statuses) as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..contract import Connection, Store, insert_row, one_of

__all__ = ["already_imported", "record_import"]


def already_imported(store: Store, source: str, keys: Sequence[str]) -> set[str]:
    """Which of ``keys`` of ``source`` were imported before."""
    if not store.exists or not keys:
        return set()
    found: set[str] = set()
    with store.read() as con:
        for start in range(0, len(keys), 1000):
            clause, params = one_of("source_key", list(keys[start : start + 1000]), "k")
            found |= {
                str(row[0])
                for row in con.execute(
                    f"SELECT source_key FROM imported_records WHERE source = $source AND {clause}",
                    {"source": source, **params},
                ).fetchall()
            }
    return found


def record_import(con: Connection, row: dict[str, Any]) -> None:
    """Record one imported record (inside the caller's transaction)."""
    insert_row(con, "imported_records", row)
