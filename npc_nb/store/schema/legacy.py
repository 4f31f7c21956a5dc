"""Stores made before the baseline: upgraded once, or refused with what moves them.

The first development versions of npc_nb built the schema with twenty-seven
migrations, ``m001_initial`` to ``m027_hash_chains``, recorded by name in
``_migrations``. The baseline ``0001`` builds exactly the schema they left, so a store
that records all twenty-seven is upgraded in place, once: its tables and columns are
checked to be that schema (``M027_COLUMNS``: a fingerprint of every table's column
names, the same on both backends), then its records are replaced by ``0001`` in one
transaction. No row of data is read or written. A store that records only some of
them (made by an older development version) is refused, naming the command that
brings it to ``m027`` first; so is a bundle written at one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..._foundations.utc import utc_now
from ...errors import StoreError

__all__ = [
    "BASELINE",
    "LAST_LADDER_COMMIT",
    "LEGACY_STEPS",
    "M027_COLUMNS",
    "as_steps",
    "column_fingerprint",
    "legacy_records",
    "refuse_legacy",
    "upgrade_legacy",
]

#: The step the old ladder's end becomes.
BASELINE = "0001"

#: The old ladder, in order: a store that records all of it holds the baseline's schema.
LEGACY_STEPS = (
    "m001_initial", "m002_store_state", "m003_extraction_queue", "m004_analytics_views",
    "m005_concepts", "m006_text_change", "m007_utc_approval", "m008_rehash_unmasked",
    "m009_injections_by_message", "m010_job_endpoint", "m011_same_fact_matching",
    "m012_one_card_per_fact", "m013_match_terms_as_text",
    "m014_endpoints_without_credentials", "m015_proposal_locks", "m016_approved_wording",
    "m017_imported_records", "m018_reproducible_runs", "m019_rehash_values",
    "m020_judged_neighbours", "m021_votes", "m022_snapshot_event_floor", "m023_experiments",
    "m024_reviewer_identity", "m025_review_policy", "m026_blind_votes", "m027_hash_chains",
)  # fmt: skip

#: The last npc_nb commit with the old ladder: it brings an older store to m027.
LAST_LADDER_COMMIT = "bdbfb31"

#: SHA-256 of the m027 schema's "table.column" lines, sorted (``column_fingerprint``).
M027_COLUMNS = "ea289cfb32ebe980c43432e1ea618fef8bd755b9d96bb501b709190114d91b4a"

_LEGACY_NAME = re.compile(r"m\d{3}_\w+")


def legacy_records(recorded: Collection[str]) -> bool:
    """Whether ``recorded`` (a store's or a bundle's step names) are the old ladder's."""
    return any(name in LEGACY_STEPS for name in recorded)


def column_fingerprint(columns: Collection[tuple[str, str]]) -> str:
    """The fingerprint of a schema's (table, column) pairs."""
    lines = sorted(f"{table}.{column}" for table, column in columns)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def refuse_legacy(
    recorded: Collection[str], what: str = "store", opened: str = "r'PROJECT'"
) -> None:
    """Refuse a store or bundle made at an old step before m027, naming what moves it
    (``opened``: the arguments of the ``npc_nb.open`` call that opens the store)."""
    steps = sorted(name for name in recorded if _LEGACY_NAME.fullmatch(name))
    last = steps[-1] if steps else "none"
    fix = (
        "export it again from a project opened by that version (npc-nb export bundle)"
        if what == "bundle"
        else f'run python -c "import npc_nb; npc_nb.open({opened}).close()" with it'
    )
    raise StoreError(
        f"This {what} was made by an early development version of npc_nb (its schema "
        f"stops at {last}, before m027_hash_chains), which this npc_nb cannot upgrade: "
        f"it starts from the baseline {BASELINE}, the schema of m027. Bring it to m027 "
        f"with npc_nb at commit {LAST_LADDER_COMMIT} (pip install it from that commit) "
        f"and {fix}; then open it here. Nothing was changed."
    )


def as_steps(names: Collection[str], what: str = "bundle") -> set[str]:
    """A bundle's (or store's) recorded names as steps of the ladder: the whole old
    ladder is the baseline; part of it is refused (``refuse_legacy``)."""
    if not legacy_records(names):
        return set(names)
    unknown = set(names) - set(LEGACY_STEPS)
    if unknown:  # names no ladder of ours ever had: a newer npc_nb's (refused as such)
        return unknown
    if set(names) != set(LEGACY_STEPS):
        refuse_legacy(names, what)
    return {BASELINE}


def _project_folder(con: Any) -> str:
    """The project folder of a store file (``<project>/.npc_nb/memory.duckdb``)."""
    (path,) = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    return str(Path(path).parent.parent) if path else "PROJECT"


def _columns(con: Any, backend: str, schema: str | None) -> list[tuple[str, str]]:
    mark = "?" if backend == "duckdb" else "%s"
    rows = con.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
        "AND t.table_name = c.table_name WHERE t.table_type = 'BASE TABLE' "
        f"AND c.table_schema = {mark} AND c.table_name NOT IN ('_migrations', '_project')",
        [schema or "main"],
    ).fetchall()
    return [(table, column) for table, column in rows]


def upgrade_legacy(
    con: Any, recorded: Collection[str], backend: str, schema: str | None = None
) -> None:
    """Record a store made by the old ladder as at the baseline, once, after checking
    that it holds the baseline's tables and columns; refuse an older one. DuckDB: its
    own transaction; PostgreSQL: the caller's (under the migration lock)."""
    if legacy_records(recorded) and set(recorded) != set(LEGACY_STEPS):
        opened = (
            f"r'{_project_folder(con)}'"
            if backend == "duckdb"
            else "r'PROJECT', store='<the store URL>'"
        )
        refuse_legacy(recorded, "store", opened)
    if column_fingerprint(_columns(con, backend, schema)) != M027_COLUMNS:
        raise StoreError(
            "This store records the migrations up to m027_hash_chains, but its tables "
            "or columns are not the ones they build: it was changed by hand. Restore it "
            "from a backup, or export its memories (npc-nb export bundle) with the npc_nb "
            f"of commit {LAST_LADDER_COMMIT} and import them into a new project. "
            "Nothing was changed."
        )
    mark = "?" if backend == "duckdb" else "%s"
    statements = [
        ("DELETE FROM _migrations", []),
        (f"INSERT INTO _migrations VALUES ({mark}, {mark})", [BASELINE, utc_now()]),
    ]
    if backend != "duckdb":
        for sql, params in statements:
            con.execute(sql, params)
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for sql, params in statements:
            con.execute(sql, params)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
