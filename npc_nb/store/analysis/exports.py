"""SQL for exports: memories and decisions to Parquet or JSON Lines, and a review log
in Prodigy's JSONL shape. Files are written by DuckDB's relation API (the path is a
Python argument, never SQL text)."""

from __future__ import annotations

from pathlib import Path

from ..contract import Store, scalar
from ..memories.predicates import Moment
from .rewind import rewound

__all__ = ["EXPORTS", "REVIEW_LOG_SQL", "write"]

EXPORTS = {
    "memories": "SELECT * FROM v_memories ORDER BY recorded_at, id",
    "decisions": "SELECT * FROM v_decisions ORDER BY seq",
}

#: One line per decision that was not undone, as Prodigy would have recorded it.
REVIEW_LOG_SQL = """
    SELECT e.text_before AS text,
        CASE WHEN e.action IN ('approve', 'edit', 'approve_all') THEN 'accept'
             WHEN e.action = 'reject' THEN 'reject' ELSE 'ignore' END AS answer,
        e.category AS label,
        CASE WHEN e.action = 'edit' THEN e.text_after END AS edited_text,
        e.reviewer AS _annotator_id,
        epoch(e.occurred_at)::BIGINT AS _timestamp,
        e.time_spent_ms AS _time_spent_ms,
        e.action, e.reason, e.batch_id,
        e.memory_id, e.npc, e.scope, e.model, e.prompt_version
    FROM v_decisions e
    WHERE e.action IN ('approve', 'edit', 'approve_all', 'reject', 'skip', 'defer')
      AND NOT e.undone
    ORDER BY e.seq
"""


def write(
    store: Store, sql: str, path: Path, file_format: str, moment: Moment | None = None
) -> int:
    """Write a query's rows (now, or as the store stood at ``moment``) to ``path`` as
    Parquet or JSON Lines; return the row count."""
    sql, params = rewound(sql, moment)
    with store.analysis() as con:
        relation = con.sql(sql, params=params or None)
        try:
            if file_format == "parquet":
                relation.to_parquet(str(path))
            else:
                frame = relation.df()
                frame.to_json(path, orient="records", lines=True, date_format="iso")
            count = scalar(con, f"SELECT count(*) FROM ({sql})", params)
        finally:
            del relation  # a live relation would keep the file lock
    return int(count)
