"""Write the m027 fixtures of tests/data/: what npc_nb 0.1.0.dev0 built before its
migrations were squashed into the baseline ``0001``.

Run once, with the code of that time (the ladder m001..m027), from the repository's
root: ``python tests/data/make_m027_stores.py POSTGRES_SUPERUSER_URL``. It writes
``schema-m027-duckdb.json`` and ``schema-m027-postgres.json`` (catalog dumps:
``tests/schema_catalog.py``), ``store-m027.duckdb.gz`` (a project's store file with
rows in every kind of table) and ``store-m027-postgres.sql.gz`` (the same project on
PostgreSQL, as ``pg_dump --inserts`` wrote it). The code that wrote them is gone: the
files are the record of what a store made by it holds. Not run by the tests.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import npc_nb
from tests.schema_catalog import duckdb_catalog, postgres_catalog

DATA = Path(__file__).resolve().parent
PROJECT = "m027_lab"


def fill(nb: npc_nb.Project) -> None:
    """Rows in the tables a day of work fills: turns, memories of every status, the
    audit log, a re-proposal, a snapshot and a recorded reply."""
    nb.npc("analyst", directive="You help.", model="npc_nb/offline")
    ids = [
        nb.add_candidate(text, category="fact", npc="analyst").memory_id
        for text in ("The lab uses DuckDB", "Samples are frozen at -80 °C",
                     "The PI prefers short answers", "Deadline is in March", "Tabs not spaces")
    ]  # fmt: skip
    nb.approve(ids[0])
    nb.edit(ids[1], "Samples are frozen at -80 °C in freezer B")
    nb.reject(ids[2])
    nb.defer(ids[3])
    nb.add_candidate("The PI prefers short answers", category="fact", npc="analyst")
    nb.chat("analyst", "We also decided to use DuckDB for the analysis.")
    nb.snapshot("m027-fixture")


def catalog_json(catalog: dict[str, list]) -> str:
    """A catalog as JSON, one row a line (a diff shows which rows changed)."""
    parts = [
        json.dumps(key)
        + ": [\n"
        + ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
        + "\n]"
        for key, rows in catalog.items()
    ]
    return "{\n" + ",\n".join(parts) + "\n}\n"


def duckdb_fixtures(root: Path) -> None:
    project = root / PROJECT
    (project / ".npc_nb").mkdir(parents=True)
    nb = npc_nb.open(project, model="npc_nb/offline")
    fill(nb)
    nb.close()
    store = project / ".npc_nb" / "memory.duckdb"
    with duckdb.connect(str(store)) as con:
        con.execute("CHECKPOINT")
        catalog = duckdb_catalog(con)
    (DATA / "schema-m027-duckdb.json").write_text(catalog_json(catalog))
    with store.open("rb") as raw, gzip.open(DATA / "store-m027.duckdb.gz", "wb") as packed:
        shutil.copyfileobj(raw, packed)


def postgres_fixtures(root: Path, url: str) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS npc_m027_fixture")
        admin.execute("CREATE DATABASE npc_m027_fixture")
    db_url = url.rsplit("/", 1)[0] + "/npc_m027_fixture"
    project = root / "pg" / PROJECT
    (project / ".npc_nb").mkdir(parents=True)
    nb = npc_nb.open(project, store=db_url, model="npc_nb/offline")
    fill(nb)
    nb.close()
    schema = "npc_" + PROJECT
    with psycopg.connect(db_url, autocommit=True) as con:
        catalog = postgres_catalog(con, schema)
    (DATA / "schema-m027-postgres.json").write_text(catalog_json(catalog))
    dump = subprocess.run(
        ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--schema", schema, db_url],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    with gzip.open(DATA / "store-m027-postgres.sql.gz", "wt") as packed:
        packed.write(dump)


if __name__ == "__main__":
    os.environ.setdefault("NPC_NB_REVIEWER", "fixture")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["NPC_NB_HOME"] = str(Path(folder) / "home")
        duckdb_fixtures(Path(folder))
        postgres_fixtures(Path(folder), sys.argv[1])
