"""The schema written once: the baseline ``0001`` builds exactly what the old ladder
(m001..m027) built, on both backends; a store made by the old ladder opens, upgraded
once, with every row; an older one is refused with what moves it; and every closed set
a column holds is a CHECK of the vocabulary on both backends.

The old ladder's schema and stores are committed fixtures (``tests/data/``, written by
``tests/data/make_m027_stores.py`` with the code of that time; compared through
``tests/schema_catalog.py``).
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

import npc_nb
from npc_nb.errors import StoreError
from npc_nb.store.schema.dialect import TABLES
from npc_nb.store.schema.model import OneOf, Table
from tests.schema_catalog import duckdb_catalog, postgres_catalog

DATA = Path(__file__).parent / "data"
#: The folder (so the project, and its PostgreSQL schema) the fixture stores were made in.
FIXTURE_PROJECT = "m027_lab"


def fixture_catalog(backend: str) -> dict[str, list[Any]]:
    return json.loads((DATA / f"schema-m027-{backend}.json").read_text())


def comparable(catalog: dict[str, list[Any]], backend: str) -> dict[str, list[Any]]:
    """A catalog without what rows change (a sequence's value) and, on PostgreSQL,
    without column positions: there the votes' columns now come in DuckDB's order."""
    out = dict(catalog)
    out["sequences"] = [[row[0], row[-1]] for row in catalog["sequences"]]
    if backend == "postgres":
        out["columns"] = sorted([row[0], *row[2:]] for row in catalog["columns"])
        constraints = catalog["constraints"]
        out["constraints"] = sorted([*row[:3], one_of_text(row[3])] for row in constraints)
    return out


def one_of_text(definition: str) -> str:
    """A PostgreSQL CHECK on a closed set, as ``column IN (values)``: PostgreSQL prints
    the one it built from ``IN (...)`` in one form and, after a dump is restored, that
    form's reading in another (``pg_dump`` writes what it prints)."""
    found = re.fullmatch(r"CHECK \(\(\((\w+)\)::text = ANY (.*)\)\)", definition)
    if found is None:
        return definition
    values = re.findall(r"'([^']*)'::character varying", found.group(2))
    return f"{found.group(1)} IN {values}"


def duckdb_store_catalog(path: Path) -> dict[str, list[Any]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return duckdb_catalog(con)


def recorded_steps(con: Any) -> list[str]:
    return [row[0] for row in con.execute("SELECT name FROM _migrations ORDER BY name").fetchall()]


def new_duckdb_store(project_dir: Path) -> Path:
    nb = npc_nb.open(project_dir)
    nb.add_candidate("We use DuckDB", category="fact", npc="analyst")  # the file exists now
    nb.close()
    return project_dir / ".npc_nb" / "memory.duckdb"


#: What step 0002 added: the audits' tables (their columns, keys, CHECKs and triggers).
STEP_0002_TABLES = ("audits", "audit_members", "audit_steps")


def before_0002(catalog: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A catalog without what step 0002 added (a row naming one of its tables first or
    second: a table's own rows, or an index's or a constraint's)."""

    def of_0002(row: list[Any]) -> bool:
        named = [str(v).removeprefix("{schema}.") for v in row[:2]]
        return any(name in STEP_0002_TABLES for name in named)

    return {key: [row for row in rows if not of_0002(row)] for key, rows in catalog.items()}


def test_the_frozen_baseline_builds_exactly_the_schema_the_old_ladder_built(
    tmp_path: Path,
) -> None:
    """Step 0001's DuckDB statements, frozen as package data (what an older bundle is
    staged on), build the m027 schema exactly."""
    from npc_nb.store.schema.migrations import build_frozen_baseline

    path = tmp_path / "baseline.duckdb"
    with duckdb.connect(str(path)) as con:
        build_frozen_baseline(con)
    found = comparable(duckdb_store_catalog(path), "duckdb")
    assert found == comparable(fixture_catalog("duckdb"), "duckdb")


def test_the_frozen_baseline_brought_up_the_ladder_is_the_declaration(tmp_path: Path) -> None:
    """What an older bundle is staged on (the frozen 0001, then each later step) ends
    as a new store's schema: the declaration is the sum of the steps."""
    from npc_nb.store.schema.migrations import apply_migrations

    staged, new = tmp_path / "staged.duckdb", tmp_path / "new.duckdb"
    with duckdb.connect(str(staged)) as con:
        assert apply_migrations(con, only=["0001"]) == ["0001"]
        assert apply_migrations(con) == ["0002"]
        assert recorded_steps(con) == ["0001", "0002"]
    with duckdb.connect(str(new)) as con:
        apply_migrations(con)
    assert duckdb_store_catalog(staged) == duckdb_store_catalog(new)


def test_a_new_duckdb_store_is_the_old_ladders_schema_and_step_0002(project_dir: Path) -> None:
    path = new_duckdb_store(project_dir)
    catalog = duckdb_store_catalog(path)
    found = comparable(before_0002(catalog), "duckdb")
    assert found == comparable(fixture_catalog("duckdb"), "duckdb")
    assert {row[0] for row in catalog["columns"]} >= set(STEP_0002_TABLES)
    with duckdb.connect(str(path), read_only=True) as con:
        assert recorded_steps(con) == ["0001", "0002"]


def project_schema_of(url: str) -> str:
    with psycopg.connect(url, autocommit=True) as con:
        (name,) = con.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'npc_%'"
        ).fetchone()
    return name


def test_a_new_postgresql_store_is_the_old_ladders_schema_and_step_0002(
    project_dir: Path, postgres_url: str
) -> None:
    npc_nb.open(project_dir, store=postgres_url).close()
    schema = project_schema_of(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as con:
        catalog = postgres_catalog(con, schema)
        steps = [r[0] for r in con.execute(f"SELECT name FROM {schema}._migrations").fetchall()]
    found = comparable(before_0002(catalog), "postgres")
    assert found == comparable(fixture_catalog("postgres"), "postgres")
    triggers = {row[1] for row in catalog["triggers"]}
    assert {f"{t}_no_change" for t in STEP_0002_TABLES} <= triggers
    assert sorted(steps) == ["0001", "0002"]


def new_postgres_catalog(tmp_path: Path, url: str) -> dict[str, list[Any]]:
    """The schema of a new project (``fresh``) on the server of ``url``."""
    (tmp_path / "fresh").mkdir()
    npc_nb.open(tmp_path / "fresh", store=url).close()
    with psycopg.connect(url, autocommit=True) as con:
        return comparable(postgres_catalog(con, "npc_fresh"), "postgres")


# -- stores made by the old ladder -------------------------------------------------------


def old_duckdb_store(tmp_path: Path) -> Path:
    """The committed store file made by the old ladder, in a project folder."""
    store = tmp_path / FIXTURE_PROJECT / ".npc_nb" / "memory.duckdb"
    store.parent.mkdir(parents=True)
    with gzip.open(DATA / "store-m027.duckdb.gz", "rb") as packed, store.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return store


def every_row(con: Any, tables: list[str]) -> dict[str, list[tuple]]:
    return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall())) for t in tables}


def duckdb_tables(path: Path) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
            "AND table_name <> '_migrations'"
        ).fetchall()
    return sorted(name for (name,) in rows)


def test_a_duckdb_store_made_by_the_old_ladder_is_upgraded_once_with_every_row(
    tmp_path: Path,
) -> None:
    store = old_duckdb_store(tmp_path)
    tables = duckdb_tables(store)
    with duckdb.connect(str(store), read_only=True) as con:
        before = every_row(con, tables)
        assert len(recorded_steps(con)) == 27
    assert len(before["memory_events"]) > 5 and before["memories"]
    nb = npc_nb.open(store.parent.parent)
    assert set(nb.memories()["status"]) >= {"human-approved", "human-edited", "human-rejected"}
    assert len(nb.decisions()) == len(before["memory_events"])
    nb.close()
    applied = "SELECT applied_at FROM _migrations ORDER BY name"
    with duckdb.connect(str(store), read_only=True) as con:
        assert every_row(con, tables) == before
        upgraded_at = con.execute(applied).fetchall()
        assert recorded_steps(con) == ["0001", "0002"]
    npc_nb.open(store.parent.parent).close()  # once: opening again changes nothing
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute(applied).fetchall() == upgraded_at
    upgraded = comparable(duckdb_store_catalog(store), "duckdb")
    (tmp_path / "fresh").mkdir()
    fresh = new_duckdb_store(tmp_path / "fresh")
    assert upgraded == comparable(duckdb_store_catalog(fresh), "duckdb")


def load_old_postgres_store(url: str) -> str:
    """The committed dump of a project made by the old ladder, loaded; its schema."""
    with gzip.open(DATA / "store-m027-postgres.sql.gz", "rt") as packed:
        script = "\n".join(line for line in packed.read().splitlines()
                           if not line.startswith("\\"))  # fmt: skip
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(script)
    return "npc_" + FIXTURE_PROJECT


def pg_rows(url: str, schema: str) -> tuple[dict[str, list[tuple]], list[str]]:
    with psycopg.connect(url, autocommit=True) as con:
        tables = sorted(
            name for (name,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "AND table_type = 'BASE TABLE' AND table_name <> '_migrations'", [schema]
            ).fetchall()
        )  # fmt: skip
        con.execute(f"SET search_path TO {schema}")
        return every_row(con, tables), recorded_steps(con)


def test_a_postgresql_store_made_by_the_old_ladder_is_upgraded_once_with_every_row(
    tmp_path: Path, postgres_url: str
) -> None:
    schema = load_old_postgres_store(postgres_url)
    before, steps = pg_rows(postgres_url, schema)
    assert len(steps) == 27 and len(before["memory_events"]) > 5
    project = tmp_path / FIXTURE_PROJECT
    project.mkdir()
    nb = npc_nb.open(project, store=postgres_url)
    assert len(nb.decisions()) == len(before["memory_events"])
    assert "The lab uses DuckDB" in nb.context("analyst")
    nb.close()
    after, steps = pg_rows(postgres_url, schema)
    assert steps == ["0001", "0002"]
    assert [after.pop(name) for name in STEP_0002_TABLES] == [[], [], []]
    # the open project's worker ran the queued extraction job: the same job, now done
    jobs_before, jobs_after = before.pop("extraction_jobs"), after.pop("extraction_jobs")
    assert [job[:40] for job in jobs_after] == [job[:40] for job in jobs_before]
    assert after == before
    with psycopg.connect(postgres_url, autocommit=True) as con:
        upgraded = comparable(postgres_catalog(con, schema), "postgres")
    assert upgraded == new_postgres_catalog(tmp_path, postgres_url)


# -- refused: older, newer, changed by hand ---------------------------------------------


def test_a_store_older_than_m027_is_refused_with_the_command_that_moves_it(
    tmp_path: Path,
) -> None:
    store = old_duckdb_store(tmp_path)
    with duckdb.connect(str(store)) as con:
        con.execute("DELETE FROM _migrations WHERE name = 'm027_hash_chains'")
        before = every_row(con, ["_migrations", "memories"])
    with pytest.raises(StoreError, match="m026_blind_votes") as refused:
        npc_nb.open(store.parent.parent).memories()
    assert "bdbfb31" in str(refused.value)
    assert f"npc_nb.open(r'{store.parent.parent}')" in str(refused.value)
    with duckdb.connect(str(store), read_only=True) as con:
        assert every_row(con, ["_migrations", "memories"]) == before


def test_a_store_of_the_old_ladder_changed_by_hand_is_refused(tmp_path: Path) -> None:
    store = old_duckdb_store(tmp_path)
    with duckdb.connect(str(store)) as con:
        con.execute("ALTER TABLE conversations ADD COLUMN mood VARCHAR")
    with pytest.raises(StoreError, match="changed by hand"):
        npc_nb.open(store.parent.parent).memories()


def test_a_store_from_a_newer_npc_nb_is_refused(tmp_path: Path, project_dir: Path) -> None:
    store = new_duckdb_store(project_dir)
    with duckdb.connect(str(store)) as con:
        con.execute("INSERT INTO _migrations VALUES ('0999', now()::TIMESTAMP)")
    with pytest.raises(StoreError, match="newer npc_nb .*0999"):
        npc_nb.open(project_dir).memories()


def test_a_bundle_written_before_m027_is_refused_with_the_command(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="m017_imported_records") as refused:
        npc_nb.import_bundle(DATA / "bundle-m017.zip", tmp_path / "new", create=True)
    assert "bdbfb31" in str(refused.value) and "npc-nb export bundle" in str(refused.value)


# -- every closed set is a CHECK of the vocabulary, on both backends --------------------


CLOSED_SETS = [(t, c) for t in TABLES for c in t.checks if isinstance(c, OneOf)]


def a_row(table: Table, n: int, **chosen: object) -> dict[str, object]:
    """A row every other constraint of ``table`` accepts (values unique by ``n``)."""
    filler = {"VARCHAR": f"x{n}", "BIGINT": n, "INTEGER": n, "DOUBLE": 0.5, "BOOLEAN": True,
              "TIMESTAMP": "2026-01-01 00:00:00", "VARCHAR[]": [], "BLOB": b""}  # fmt: skip
    row = {c.name: filler[c.type] for c in table.columns
           if c.not_null or c.type == "VARCHAR" or c.name in table.primary_key}  # fmt: skip
    for check in table.checks:
        if isinstance(check, OneOf):
            row[check.column] = check.values[0]
    row.pop("reviewer_role", None)  # PostgreSQL writes the connected role
    return {**row, **chosen}


def rows_to_try(table: Table, check: OneOf, start: int) -> Iterator[tuple[dict, bool]]:
    """Every value of the vocabulary (accepted), then one outside it (refused)."""
    for n, value in enumerate(check.values, start=start):
        yield a_row(table, n, **{check.column: value}), True
    yield a_row(table, start + len(check.values), **{check.column: "not-in-vocabulary"}), False


def insert_outcomes(insert: Any) -> list[tuple[str, str, object, bool, bool]]:
    """(table, column, value, expected accepted, accepted) for every row tried."""
    out, start = [], 0
    for table, check in CLOSED_SETS:
        for row, expected in rows_to_try(table, check, start):
            out.append((table.name, check.column, row[check.column], expected, insert(table, row)))
        start += len(check.values) + 1
    return out


def test_every_closed_set_is_a_check_of_its_vocabulary_on_duckdb(project_dir: Path) -> None:
    store = new_duckdb_store(project_dir)
    with duckdb.connect(str(store)) as con:

        def insert(table: Table, row: dict[str, object]) -> bool:
            try:
                con.execute(
                    f"INSERT INTO {table.name} ({', '.join(row)}) "
                    f"VALUES ({', '.join('?' * len(row))})", list(row.values())
                )  # fmt: skip
            except duckdb.ConstraintException:
                return False
            return True

        outcomes = insert_outcomes(insert)
    assert len({(t, c) for t, c, *_ in outcomes}) == len(CLOSED_SETS) >= 17
    assert [o for o in outcomes if o[3] != o[4]] == []


def test_every_closed_set_is_a_check_of_its_vocabulary_on_postgresql(
    project_dir: Path, postgres_url: str
) -> None:
    npc_nb.open(project_dir, store=postgres_url).close()
    schema = project_schema_of(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"SET search_path TO {schema}")

        def insert(table: Table, row: dict[str, object]) -> bool:
            try:
                con.execute(
                    f"INSERT INTO {table.name} ({', '.join(row)}) "
                    f"VALUES ({', '.join(['%s'] * len(row))})", list(row.values())
                )  # fmt: skip
            except psycopg.errors.CheckViolation:
                return False
            return True

        outcomes = insert_outcomes(insert)
    assert len({(t, c) for t, c, *_ in outcomes}) == len(CLOSED_SETS) >= 17
    assert [o for o in outcomes if o[3] != o[4]] == []


# -- the recipe for step 0002 ------------------------------------------------------------


def test_a_step_adds_a_declared_column_rendered_from_its_declaration(tmp_path: Path) -> None:
    """What a step 0002 that adds a column runs (``migrations``' recipe): the column's
    ``ALTER TABLE`` rendered from the declaration gives a store the declared schema."""
    from npc_nb.store.schema.dialect import DUCKDB, POSTGRES, add_column
    from npc_nb.store.schema.migrations import apply_migrations

    new, older = tmp_path / "new.duckdb", tmp_path / "older.duckdb"
    for path in (new, older):
        with duckdb.connect(str(path)) as con:
            apply_migrations(con)
    with duckdb.connect(str(older)) as con:
        con.execute("ALTER TABLE snapshots DROP COLUMN event_floor")  # as before a step
        con.execute(add_column("snapshots", "event_floor", DUCKDB))
    assert duckdb_store_catalog(older) == duckdb_store_catalog(new)
    assert add_column("memories", "match_vector", POSTGRES) == (
        "ALTER TABLE memories ADD COLUMN match_vector BYTEA"
    )


def test_a_postgresql_store_older_than_m027_is_refused_with_the_command(
    tmp_path: Path, postgres_url: str
) -> None:
    schema = load_old_postgres_store(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"DELETE FROM {schema}._migrations WHERE name = 'm027_hash_chains'")
    before = pg_rows(postgres_url, schema)
    project = tmp_path / FIXTURE_PROJECT
    project.mkdir()
    with pytest.raises(StoreError, match="m026_blind_votes") as refused:
        npc_nb.open(project, store=postgres_url).memories()
    assert "bdbfb31" in str(refused.value) and "store='<the store URL>'" in str(refused.value)
    assert pg_rows(postgres_url, schema) == before  # nothing changed
