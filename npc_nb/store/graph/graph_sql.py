"""SQL for the knowledge graph's concepts: which approved memory versions still need
them, and storing what a model extracted (the graph itself: ``graph_nodes``).

Every read goes through the one approval predicate (``predicates.approved_source``) and
joins concepts on the memory's id AND current text hash: nothing pending, rejected,
superseded or undone can contribute, and an edit's new wording needs its own concepts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pandas as pd

from ..._foundations.text import clean_text
from ..contract import Store
from ..memories.predicates import Moment, approved_source

__all__ = [
    "approved_rows",
    "graph_source",
    "missing_now",
    "missing_versions",
    "record_concepts",
]


def graph_source(
    npc: str | None, category: str | None, as_of: datetime | Moment | None = None
) -> tuple[str, dict[str, Any]]:
    """The approved memories a graph shows (``approved_source``; one persona's or one
    category's when given): a subquery aliased ``approved``, and its parameters."""
    source, params = approved_source(as_of)
    clauses = ["TRUE"]
    for column, value in (("npc", npc), ("category", category)):
        if value is not None:
            clauses.append(f"{column} = ${column}")
            params[column] = value
    return f"(SELECT * FROM {source} WHERE {' AND '.join(clauses)}) AS approved", params


def approved_rows(
    store: Store, npc: str | None, category: str | None, as_of: datetime | Moment | None
) -> pd.DataFrame:
    """The approved memories the graph shows (id, text, hash, persona, category, ...)."""
    source, params = graph_source(npc, category, as_of)
    return store.dataframe(
        "SELECT id, final_text, final_hash, npc, team, scope, category, extractor_model, "
        f"recorded_at, decided_at, decided_by FROM {source} ORDER BY recorded_at, id",
        params,
    )


def missing_now(store: Store, npc: str | None, category: str | None) -> pd.DataFrame:
    """The (id, final_hash, final_text) of the memories approved now (one persona's or
    category's, if given) whose current text has no concepts yet: found in the store,
    so a store whose concepts are all there reads no memory."""
    source, params = graph_source(npc, category)
    with store.analysis() as con:
        return con.execute(
            f"SELECT approved.id, approved.final_hash, approved.final_text FROM {source} "
            "LEFT JOIN concept_extractions x "
            "ON x.memory_id = approved.id AND x.memory_hash = approved.final_hash "
            "WHERE x.memory_id IS NULL ORDER BY approved.recorded_at, approved.id",
            params,
        ).df()


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
