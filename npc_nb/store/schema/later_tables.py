"""Whole tables later migrations add: concepts (``m005``), match labels (``m012``) and
imported records (``m017``), each statement as its migration ran it.

The tables of reproducible runs (``runs_tables``), of votes (``votes_table``) and of
experiments (``experiment_tables``) have modules of their own, shared with
``pg_migrations``; these are the DuckDB migrations' alone.
"""

from __future__ import annotations

from ...vocabulary import IMPORT_OUTCOMES, IMPORT_SOURCES
from .initial_tables import one_of

__all__ = ["CONCEPT_TABLES", "IMPORTED_RECORDS_TABLE", "MATCH_LABELS_TABLE"]

#: ``m005_concepts``: the knowledge graph's rows, keyed by memory id and text version.
CONCEPT_TABLES = (
    """CREATE TABLE concept_extractions (
            memory_id VARCHAR NOT NULL,
            memory_hash VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            extracted_at TIMESTAMP NOT NULL,
            error VARCHAR,
            PRIMARY KEY (memory_id, memory_hash)
        )""",
    """CREATE TABLE memory_concepts (
            memory_id VARCHAR NOT NULL,
            memory_hash VARCHAR NOT NULL,
            concept_key VARCHAR NOT NULL,
            concept_label VARCHAR NOT NULL
        )""",
    """CREATE TABLE concept_relations (
            memory_id VARCHAR NOT NULL,
            memory_hash VARCHAR NOT NULL,
            source_key VARCHAR NOT NULL,
            relation VARCHAR NOT NULL,
            target_key VARCHAR NOT NULL
        )""",
    "CREATE INDEX memory_concepts_memory ON memory_concepts (memory_id)",
)

#: ``m012_one_card_per_fact``: a reviewer's label on an automatic outcome, one per
#: re-proposal, naming the card it became.
MATCH_LABELS_TABLE = """CREATE TABLE match_labels (
            reproposal_id VARCHAR PRIMARY KEY,
            label VARCHAR NOT NULL CHECK (label IN ('split', 'requeued')),
            new_memory_id VARCHAR NOT NULL,
            labelled_by VARCHAR NOT NULL,
            labelled_at TIMESTAMP NOT NULL
        )"""

#: ``m017_imported_records``: one row per record of another tool that was read.
IMPORTED_RECORDS_TABLE = f"""CREATE TABLE imported_records (
            source VARCHAR NOT NULL {one_of("source", IMPORT_SOURCES)},
            source_key VARCHAR NOT NULL,
            memory_id VARCHAR NOT NULL,
            outcome VARCHAR NOT NULL {one_of("outcome", IMPORT_OUTCOMES)},
            source_file VARCHAR,
            source_time TIMESTAMP,
            details VARCHAR,
            imported_by VARCHAR NOT NULL,
            imported_at TIMESTAMP NOT NULL,
            PRIMARY KEY (source, source_key)
        )"""
