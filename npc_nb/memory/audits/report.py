"""Audits as the reports state them: a row per audit for ``nb.metrics.audits()``, and
an entry per audit for a bundle's manifest (its sample, errors, bound, tolerance,
status and the batch approved, in JSON values and one plain sentence).

Key design choice: a report is the audit's ``AuditResult`` beside its record, read now
(``AuditService.result``), never stored: an undo of the batch or of a sampled card shows
at once, and a bundle states its audits as they stood when it was written.
"""

from __future__ import annotations

from typing import Any

from .service import AuditService

__all__ = ["REPORT_COLUMNS", "manifest_entries", "report_rows"]

#: The columns of a report row, in ``nb.metrics.audits()``'s order.
REPORT_COLUMNS = (
    "audit", "name", "population", "excluded", "look", "looks", "sample", "reviewed",
    "errors", "bound", "tolerance", "confidence", "nominal_confidence", "meets", "status",
    "approved", "seed", "method", "started_at", "started_by",
)  # fmt: skip
#: What a bundle's manifest states of each audit.
_MANIFEST_KEYS = (
    "name", "id", "population", "excluded", "look", "looks", "sample", "reviewed", "errors",
    "bound", "tolerance", "confidence", "nominal_confidence", "meets", "status", "approved",
    "seed", "method", "started_at", "started_by", "summary",
)  # fmt: skip


def report_rows(service: AuditService) -> list[dict[str, Any]]:
    """One row per audit of the project, oldest first (``REPORT_COLUMNS``)."""
    rows = []
    for record in service.records():
        result = service.result(record)
        facts = {column: getattr(result, column, None) for column in REPORT_COLUMNS}
        rows.append(
            facts
            | {
                "looks": list(result.looks),
                "started_at": record["started_at"],
                "started_by": record["started_by"],
                "summary": result.summary,
            }
        )
    return rows


def manifest_entries(service: AuditService) -> list[dict[str, Any]]:
    """Each audit as a bundle's manifest states it: JSON values, its id as ``id``."""
    entries = []
    for row in report_rows(service):
        entry = row | {"id": row["audit"], "started_at": row["started_at"].isoformat() + "Z"}
        entries.append({key: entry[key] for key in _MANIFEST_KEYS})
    return entries
