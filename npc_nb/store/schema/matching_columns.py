"""The columns same-fact matching added to memories and re-proposals (``m011``,
``m012``, ``m020``), each statement as its migration ran it.

``JUDGING_COLUMNS`` is shared with ``pg_migrations``: what matching records of its work
on a candidate, the same in both tables on both backends.
"""

from __future__ import annotations

__all__ = ["CARD_COLUMNS", "JUDGING_COLUMNS", "MATCHING_COLUMNS"]

#: ``m011_same_fact_matching``: content terms, insert order, what an update replaces; the
#: matcher's verdict and outcome on a re-proposal.
MATCHING_COLUMNS = (
    "CREATE SEQUENCE memory_insert_seq START 1",
    "ALTER TABLE memories ADD COLUMN insert_seq BIGINT",
    "ALTER TABLE memories ADD COLUMN match_terms VARCHAR[]",
    "ALTER TABLE memories ADD COLUMN updates VARCHAR",
    "ALTER TABLE memories ADD COLUMN differs VARCHAR",
    "ALTER TABLE memories ADD COLUMN match_error VARCHAR",
    # DuckDB cannot add a column with a CHECK; the closed sets are held by the code
    # (matching.VERDICTS, proposal's outcomes) and tested.
    "ALTER TABLE reproposals ADD COLUMN verdict VARCHAR",
    "ALTER TABLE reproposals ADD COLUMN matcher VARCHAR",
    "ALTER TABLE reproposals ADD COLUMN outcome VARCHAR",
)

#: ``m012_one_card_per_fact``: what a card shows of a re-proposal, and when it was listed.
CARD_COLUMNS = (
    "ALTER TABLE reproposals ADD COLUMN evidence VARCHAR",
    "ALTER TABLE reproposals ADD COLUMN flags VARCHAR[]",
    "ALTER TABLE reproposals ADD COLUMN confidence DOUBLE",
    "ALTER TABLE reproposals ADD COLUMN listed_at TIMESTAMP",
)

#: What matching records of its work on a candidate, in both tables (both backends).
JUDGING_COLUMNS = (
    "ALTER TABLE {table} ADD COLUMN match_neighbours VARCHAR;"
    "ALTER TABLE {table} ADD COLUMN match_calls INTEGER;"
    "ALTER TABLE {table} ADD COLUMN match_tokens INTEGER;"
    "ALTER TABLE {table} ADD COLUMN match_ms DOUBLE"
)
