"""SQL for the audited batches' tables (``audits``, ``audit_members``, ``audit_steps``),
on both backends.

An audit is written once, with its batch, in one transaction (``insert_audit``); what
is done with it later is a new row of ``audit_steps`` (``add_audit_step``); no row is
ever changed or deleted (on PostgreSQL a trigger refuses UPDATE, DELETE and TRUNCATE
for every role, ``schema.pg_extras``). The plan's looks and thresholds are stored as
JSON arrays of integers and read back as lists. Audits live in the project store only:
the user's global store never holds one.

The writers take the caller's transaction (``con``) when given, so a flow can record a
step together with what it did (the rest approved as one batch); without one they open
their own. The readers open their own read.
"""

from __future__ import annotations

import json
from typing import Any

from ..._foundations.ids import new_id
from ..contract import Connection, Store, insert_row, rows

__all__ = [
    "add_audit_step",
    "audit_members",
    "audit_steps",
    "find_audit",
    "insert_audit",
    "list_audits",
]

#: The columns of a member row, in the table's order.
_MEMBER_COLUMNS = ("audit_id", "memory_id", "position", "excluded_because", "stratum")
#: The plan's columns held as JSON arrays.
_JSON_COLUMNS = ("looks", "thresholds")


def insert_audit(
    store: Store,
    audit: dict[str, Any],
    members: list[dict[str, Any]],
    *,
    con: Connection | None = None,
) -> None:
    """Write one audit (``id`` drawn when not given; ``looks`` and ``thresholds`` as
    sequences of integers) and its batch (each member's ``memory_id``, ``position``,
    ``excluded_because`` and ``stratum``), together: both or neither."""
    if con is None:
        with store.write() as own:
            insert_audit(store, audit, members, con=own)
        return
    row = {"id": new_id(), **audit}
    for column in _JSON_COLUMNS:
        if not isinstance(row[column], str):
            row[column] = json.dumps([int(value) for value in row[column]])
    insert_row(con, "audits", row)
    listed = [
        tuple(member.get(c, row["id"] if c == "audit_id" else None) for c in _MEMBER_COLUMNS)
        for member in members
    ]
    store.copy_rows(con, "audit_members", _MEMBER_COLUMNS, listed)


def _decoded(audit: dict[str, Any]) -> dict[str, Any]:
    return {**audit, **{c: json.loads(audit[c]) for c in _JSON_COLUMNS}}


def find_audit(store: Store, name_or_id: str) -> dict[str, Any] | None:
    """The audit named ``name_or_id`` (or with that id), its plan's lists decoded; None
    when there is none."""
    with store.read() as con:
        found = rows(
            con, "SELECT * FROM audits WHERE name = ? OR id = ? ORDER BY name = ? DESC",
            [name_or_id, name_or_id, name_or_id],
        )  # fmt: skip
    return _decoded(found[0]) if found else None


def list_audits(store: Store) -> list[dict[str, Any]]:
    """Every audit, oldest first, its plan's lists decoded."""
    with store.read() as con:
        found = rows(con, "SELECT * FROM audits ORDER BY started_at, id")
    return [_decoded(audit) for audit in found]


def audit_members(store: Store, audit_id: str) -> list[dict[str, Any]]:
    """An audit's batch in its seeded random order (``position``), then the cards kept
    out of it (by memory id)."""
    with store.read() as con:
        return rows(
            con,
            "SELECT * FROM audit_members WHERE audit_id = ? "
            "ORDER BY position IS NULL, position, memory_id",
            [audit_id],
        )


def add_audit_step(store: Store, step: dict[str, Any], *, con: Connection | None = None) -> None:
    """Record one step of an audit (``id`` drawn when not given)."""
    if con is None:
        with store.write() as own:
            add_audit_step(store, step, con=own)
        return
    insert_row(con, "audit_steps", {"id": new_id(), **step})


def audit_steps(store: Store, audit_id: str | None = None) -> list[dict[str, Any]]:
    """The steps of one audit (or of every audit), in the order they happened."""
    where, params = ("WHERE audit_id = ?", [audit_id]) if audit_id is not None else ("", [])
    with store.read() as con:
        return rows(con, f"SELECT * FROM audit_steps {where} ORDER BY occurred_at, id", params)
