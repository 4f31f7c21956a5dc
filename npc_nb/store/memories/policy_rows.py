"""SQL for ``review_policy``: the lab's review policy, as the list of its changes.

Append-only: setting the policy inserts one row per key set, all in one transaction;
the policy in force is each key's latest row (``schema.lab_tables`` has the table,
``schema.pg_extras`` the trigger that lets only the project's owner insert on PostgreSQL).
"""

from __future__ import annotations

from datetime import datetime

from ..._foundations.ids import new_id
from ..contract import Store, insert_row, rows

__all__ = ["insert_changes", "policy_changes"]


def policy_changes(store: Store) -> list[dict]:
    """Every change of the policy, oldest first."""
    with store.read() as con:
        return rows(con, "SELECT * FROM review_policy ORDER BY set_at, id")


def insert_changes(
    store: Store, values: dict[str, str], *, at: datetime, by: str, role: str | None
) -> None:
    """Record ``values`` ({key: value as text}) as set now by ``by`` (as ``role``)."""
    with store.write() as con:
        for key, value in values.items():
            insert_row(
                con,
                "review_policy",
                {
                    "id": new_id(),
                    "key": key,
                    "value": value,
                    "set_at": at,
                    "set_by": by,
                    "reviewer_role": role,
                },
            )
