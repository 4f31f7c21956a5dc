"""SQL for the knowledge graph: which approved memory versions still need concepts,
storing what a model extracted, and reading the graph's rows.

Every read goes through the one approval predicate (``predicates.approved_source``) and
joins concepts on the memory's id AND current text hash: nothing pending, rejected,
superseded or undone can contribute, and an edit's new wording needs its own concepts.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from .._text import clean_text
from ._database import Store
from .predicates import approved_source

__all__ = ["approved_rows", "concept_rows", "missing_versions", "record_concepts"]


def approved_rows(
    store: Store, npc: str | None, category: str | None, as_of: datetime | None
) -> pd.DataFrame:
    """The approved memories the graph shows (id, text, hash, persona, category, ...)."""
    source, params = approved_source(as_of)
    clauses = ["TRUE"]
    if npc is not None:
        clauses.append("npc = $npc")
        params["npc"] = npc
    if category is not None:
        clauses.append("category = $category")
        params["category"] = category
    return store.dataframe(
        "SELECT id, final_text, final_hash, npc, team, scope, category, extractor_model, "
        f"recorded_at, decided_at, decided_by FROM {source} WHERE {' AND '.join(clauses)} "
        "ORDER BY recorded_at, id",
        params,
    )


def missing_versions(store: Store, versions: pd.DataFrame) -> pd.DataFrame:
    """The (id, hash, text) rows of ``versions`` whose concepts were never extracted."""
    if versions.empty:
        return versions
    with store.analysis() as con:
        con.register("wanted_versions", versions[["id", "final_hash", "final_text"]])
        try:
            return con.execute(
                "SELECT w.* FROM wanted_versions w LEFT JOIN concept_extractions x "
                "ON x.memory_id = w.id AND x.memory_hash = w.final_hash "
                "WHERE x.memory_id IS NULL"
            ).df()
        finally:
            con.unregister("wanted_versions")


def record_concepts(
    store: Store, extractions: pd.DataFrame, concepts: pd.DataFrame, relations: pd.DataFrame
) -> None:
    """Store one batch of extractions (with their concepts and relations) atomically."""
    with store.write() as con:
        for table, frame in (("concept_extractions", extractions),
                             ("memory_concepts", concepts),
                             ("concept_relations", relations)):  # fmt: skip
            if frame.empty:
                continue
            columns = list(frame.columns)
            values = ", ".join("?" for _ in columns)
            con.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({values})",
                _python_rows(_storable(frame)),
            )


def _python_rows(frame: pd.DataFrame) -> list[list]:
    """The frame's rows as plain Python values (missing ones None), which both engines bind."""
    plain = frame.astype(object).where(frame.notna(), None)
    return [list(row) for row in plain.itertuples(index=False)]


def _storable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every lone surrogate in its text replaced (``clean_text``). DuckDB
    scanning such a string in a registered DataFrame fails with a fatal error that
    invalidates the whole database for this process, so none may ever reach it."""
    text = [c for c in frame.columns if pd.api.types.is_string_dtype(frame[c].dtype)]
    if not text:
        return frame
    frame = frame.copy()
    for column in text:
        frame[column] = frame[column].map(
            lambda value: clean_text(value) if isinstance(value, str) else value
        )
    return frame


def concept_rows(store: Store, versions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The concepts and relations of exactly these memory versions."""
    if versions.empty:
        empty = pd.DataFrame()
        return empty, empty
    with store.analysis() as con:
        con.register("shown_versions", versions[["id", "final_hash"]])
        try:
            concepts = con.execute(
                "SELECT c.memory_id, c.concept_key, c.concept_label FROM memory_concepts c "
                "JOIN shown_versions v ON v.id = c.memory_id AND v.final_hash = c.memory_hash"
            ).df()
            relations = con.execute(
                "SELECT r.memory_id, r.source_key, r.relation, r.target_key "
                "FROM concept_relations r JOIN shown_versions v "
                "ON v.id = r.memory_id AND v.final_hash = r.memory_hash"
            ).df()
        finally:
            con.unregister("shown_versions")
    return concepts, relations
