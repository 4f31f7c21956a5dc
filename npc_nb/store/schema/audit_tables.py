"""The audited batches' tables, declared once for both backends (schema step ``0002``).

An audit approves a batch of open candidates on the evidence of a seeded random sample
of it (``npc_nb.memory.audits``). What it needs to be defended later is written once
and never changed: the audit and its pre-declared plan (``audits``), the batch as it
was frozen at the start, with the cards kept out of it and why (``audit_members``), and
the log of what was done with it (``audit_steps``). Its state now (how many sampled
cards were decided, the errors, the bound) is always read from the memories and the
audit log, never stored. On PostgreSQL the three are append-only for every role and
record the connected role (``pg_extras``), like the votes.
"""

from __future__ import annotations

from ...vocabulary import AUDIT_EXCLUSIONS, AUDIT_STEPS
from .model import Check, Column, OneOf, Table

__all__ = ["AUDIT_TABLES"]


def _between_0_and_1(table: str, column: str) -> Check:
    return Check(f"{column} > 0 AND {column} < 1", f"{table}_{column}_check")


AUDIT_TABLES = (
    Table(
        "audits",
        (
            Column("id", "VARCHAR"),
            Column("name", "VARCHAR", not_null=True),
            Column("started_at", "TIMESTAMP", not_null=True),
            Column("started_by", "VARCHAR", not_null=True),
            Column("npc", "VARCHAR"),
            Column("category", "VARCHAR"),
            Column("conversation_id", "VARCHAR"),
            Column("stratify", "BOOLEAN", not_null=True),
            Column("tolerance", "DOUBLE", not_null=True),
            Column("confidence", "DOUBLE", not_null=True),
            Column("seed", "BIGINT", not_null=True),
            Column("population", "INTEGER", not_null=True),
            Column("looks", "VARCHAR", not_null=True),
            Column("thresholds", "VARCHAR", not_null=True),
            Column("nominal_confidence", "DOUBLE", not_null=True),
            Column("method", "VARCHAR", not_null=True),
            Column("reviewer_role", "VARCHAR", pg_default="SESSION_USER"),
        ),
        primary_key=("id",),
        unique=(("name",),),
        checks=(
            _between_0_and_1("audits", "tolerance"),
            _between_0_and_1("audits", "confidence"),
        ),
        doc="Audited batches: the filters, the seed and the pre-declared sequential plan "
        "(looks and thresholds as JSON arrays). Written once.",
    ),
    Table(
        "audit_members",
        (
            Column("audit_id", "VARCHAR", not_null=True),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("position", "INTEGER"),
            Column("excluded_because", "VARCHAR"),
            Column("stratum", "VARCHAR"),
        ),
        primary_key=("audit_id", "memory_id"),
        checks=(OneOf("excluded_because", AUDIT_EXCLUSIONS),),
        doc="An audit's batch, frozen at its start: each card's place in the seeded random "
        "order (the first looks[j] are the sample at look j), or why it was kept out.",
    ),
    Table(
        "audit_steps",
        (
            Column("id", "VARCHAR"),
            Column("audit_id", "VARCHAR", not_null=True),
            Column("occurred_at", "TIMESTAMP", not_null=True),
            Column("actor", "VARCHAR", not_null=True),
            Column("step", "VARCHAR", not_null=True),
            Column("look", "INTEGER", not_null=True),
            Column("sample", "INTEGER", not_null=True),
            Column("errors", "INTEGER", not_null=True),
            Column("bound", "DOUBLE"),
            Column("batch_id", "VARCHAR"),
            Column("reviewer_role", "VARCHAR", pg_default="SESSION_USER"),
        ),
        primary_key=("id",),
        checks=(OneOf("step", AUDIT_STEPS),),
        doc="What was done with an audit, append-only: a further look, a sign-off, the "
        "rest approved (its batch of the audit log), or the audit given up.",
    ),
)
