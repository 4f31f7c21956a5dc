"""Each project on a PostgreSQL server is its own schema, whatever its name: names map
one-to-one to schemas, each schema records the name it was made for, and a schema that
records another is refused. Plain names keep the schema they always had."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npc_nb
from npc_nb._foundations.store_url import project_schema, redact
from npc_nb.store.moving.move import migrate_store
from npc_nb.store.schema.pg_migrations import apply_pg_migrations
from tests.helpers import propose, run_cli, status_of
from tests.postgres import PostgresServer

#: Two 60-character names that differ only in their last character.
LONG = "longitudinal_survey_of_wetland_bird_counts_2019_2024_wave_"
LONG_NAMES = (LONG + "01", LONG + "02")


def open_project(tmp_path: Path, url: str, name: str, **settings: object) -> npc_nb.Project:
    """``name`` opened on the server at ``url`` from a folder of its own."""
    folder = tmp_path / f"folder{len(list(tmp_path.glob('folder*')))}"
    (folder / ".git").mkdir(parents=True)
    return npc_nb.open(folder, store=url, project=name, **settings)


def schema_of(nb: npc_nb.Project) -> str:
    found = re.search(r"\(schema (\w+)\)", str(nb.store_path))
    assert found, nb.store_path
    return found.group(1)


def recorded(url: str, schema: str) -> list[tuple]:
    """The project ``schema`` records: [(name,)], or [] for none."""
    with psycopg.connect(url, autocommit=True) as con:
        if con.execute("SELECT to_regclass(%s)", [f"{schema}._project"]).fetchone() == (None,):
            return []
        return con.execute(f"SELECT name FROM {schema}._project").fetchall()


@pytest.mark.parametrize(
    "names", [("Größe-Studie", "Grüße-Studie"), LONG_NAMES], ids=["umlauts", "60-chars"]
)
def test_projects_whose_names_fold_alike_never_share_memories(
    names: tuple[str, str], tmp_path: Path, postgres_url: str
) -> None:
    first, second = (open_project(tmp_path, postgres_url, name) for name in names)
    try:
        assert schema_of(first) != schema_of(second)
        memory = propose(first, f"The study {names[0]} counts birds weekly")
        first.approve(memory)
        assert "counts birds weekly" in first.context("analyst")
        assert "counts birds weekly" not in second.context("analyst")
        assert second.review_queue().empty and second.memories().empty
        assert [recorded(postgres_url, schema_of(nb)) for nb in (first, second)] == [
            [(names[0],)],
            [(names[1],)],
        ]
    finally:
        first.close()
        second.close()


def test_plain_names_keep_their_schema_and_others_get_a_stable_one() -> None:
    assert {
        name: project_schema(name)
        for name in ("wetland", "cell_atlas", "ada_global", "2024_pilot", "x" * 50)
    } == {
        "wetland": "npc_wetland",
        "cell_atlas": "npc_cell_atlas",
        "ada_global": "npc_ada_global",
        "2024_pilot": "npc_2024_pilot",
        "x" * 50: "npc_" + "x" * 50,
    }
    # Pinned: a later version must give an existing project the schema it has now.
    assert project_schema("Größe-Studie") == "npc_grosse_studie__fb676ed46c00cbd9"
    assert project_schema("Cell Atlas") == "npc_cell_atlas__0ab373996eff4ddc"
    assert project_schema("研究") == "npc_project__4ff0f1dda80ff593"
    assert all(len(name) == 60 for name in LONG_NAMES)
    assert project_schema(" wetland ") == "npc_wetland"  # outer spaces are not the name
    with pytest.raises(ValueError, match="no letters or digits"):
        project_schema(" - ")


@given(st.text(min_size=1, max_size=90), st.text(min_size=1, max_size=90))
def test_different_names_get_different_safe_schemas(one: str, other: str) -> None:
    def name(text: str) -> str:
        return unicodedata.normalize("NFC", text).strip()

    for text in (one, other):
        if not any(char.isalnum() for char in name(text)):
            return
    first, second = project_schema(one), project_schema(other)
    for schema in (first, second):
        assert re.fullmatch(r"npc_[a-z0-9_]+", schema) and len(schema.encode()) <= 63
    assert (first == second) == (name(one) == name(other))


def test_a_schema_that_records_another_project_is_refused(
    tmp_path: Path, postgres_url: str, postgres_server: PostgresServer
) -> None:
    open_project(tmp_path, postgres_url, "alpha").close()
    postgres_server.execute("ALTER SCHEMA npc_alpha RENAME TO npc_beta", database=postgres_url)
    with pytest.raises(npc_nb.StoreError, match="holds the project 'alpha', not 'beta'"):
        open_project(tmp_path, postgres_url, "beta")
    local = tmp_path / "local"
    (local / ".git").mkdir(parents=True)
    embedded = npc_nb.open(local)
    propose(embedded, "A fact kept on a laptop")
    embedded.close()
    with pytest.raises(npc_nb.StoreError, match="holds the project 'alpha', not 'beta'"):
        migrate_store(local, postgres_url, project="beta", force=True)


def test_a_schema_made_before_records_keeps_working_under_its_plain_name(
    tmp_path: Path, postgres_url: str
) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as con:
        apply_pg_migrations(con, "npc_wetland")  # as earlier versions made it: no record
    assert recorded(postgres_url, "npc_wetland") == []
    nb = open_project(tmp_path, postgres_url, "wetland")
    try:
        assert schema_of(nb) == "npc_wetland"
        assert recorded(postgres_url, "npc_wetland") == [("wetland",)]  # the owner wrote it
    finally:
        nb.close()


def test_an_old_folded_schema_is_not_replaced_in_silence(
    tmp_path: Path, postgres_url: str, postgres_server: PostgresServer
) -> None:
    old = open_project(tmp_path, postgres_url, "gr_e_studie")  # the schema Größe-Studie had
    memory = propose(old, "Größe means size")
    old.close()
    postgres_server.execute("DROP TABLE npc_gr_e_studie._project", database=postgres_url)
    new_schema = project_schema("Größe-Studie")
    with pytest.raises(npc_nb.StoreError) as refused:
        open_project(tmp_path, postgres_url, "Größe-Studie")
    assert f"ALTER SCHEMA npc_gr_e_studie RENAME TO {new_schema};" in str(refused.value)
    postgres_server.execute(
        f"ALTER SCHEMA npc_gr_e_studie RENAME TO {new_schema}", database=postgres_url
    )
    nb = open_project(tmp_path, postgres_url, "Größe-Studie")
    try:
        assert nb.review_queue()["id"].tolist() == [memory]
        assert recorded(postgres_url, new_schema) == [("Größe-Studie",)]
    finally:
        nb.close()


def test_an_old_schema_that_records_its_plain_name_is_left_to_it(
    tmp_path: Path, postgres_url: str
) -> None:
    old = open_project(tmp_path, postgres_url, "gr_e_studie")
    propose(old, "This belongs to gr_e_studie")
    old.close()
    nb = open_project(tmp_path, postgres_url, "Größe-Studie")
    try:
        assert schema_of(nb) == project_schema("Größe-Studie")
        assert nb.review_queue().empty
    finally:
        nb.close()


def schemas(url: str) -> set[str]:
    with psycopg.connect(url, autocommit=True) as con:
        found = con.execute("SELECT schema_name FROM information_schema.schemata")
        return {row[0] for row in found.fetchall()}


def test_reviewing_a_project_the_server_does_not_hold_lists_those_it_does_and_creates_nothing(
    tmp_path: Path, postgres_url: str
) -> None:
    for name in ("wetland", "Größe-Studie"):
        open_project(tmp_path, postgres_url, name).close()
    with psycopg.connect(postgres_url, autocommit=True) as con:
        apply_pg_migrations(con, "npc_legacy")  # made before records: listed by its schema
    before = schemas(postgres_url)
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    named = run_cli("review", "--store", postgres_url, "--project-name", "x", cwd=folder)
    assert named.returncode == 2, named.stderr
    assert named.stdout == (
        f"npc-nb: No project 'x' in {redact(postgres_url)}. Projects there: Größe-Studie, "
        "npc_legacy, wetland. Pass --project-name NAME.\n"
    )
    unnamed = run_cli("review", "--store", postgres_url, cwd=folder)  # the folder's name
    assert unnamed.returncode == 2, unnamed.stderr
    assert unnamed.stdout.startswith(f"npc-nb: No project 'elsewhere' in {redact(postgres_url)}.")
    assert schemas(postgres_url) == before
    assert list(folder.iterdir()) == []


def test_review_names_the_server_project_from_a_folder_of_another_name(
    tmp_path: Path, postgres_url: str
) -> None:
    nb = open_project(tmp_path, postgres_url, "wetland")
    try:
        memory = propose(nb, "Counts are made at dawn")
        checkout = tmp_path / "my-laptop-copy"
        checkout.mkdir()
        argv = ("review", "--store", postgres_url, "--project-name", "wetland", "--by", "ada")
        result = run_cli(*argv, cwd=checkout, keys="a\nq\n")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Counts are made at dawn" in result.stdout
        assert status_of(nb, memory) == "human-approved"
        assert list(checkout.iterdir()) == []
    finally:
        nb.close()
