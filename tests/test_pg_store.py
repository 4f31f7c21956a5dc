"""The shared store: a project on PostgreSQL behind the same API as the embedded file.

Each test gets a fresh database on the session's throwaway server (``postgres_url``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import psycopg
import pytest

import npc_nb
from npc_nb.store.schema.migrations import MIGRATIONS, apply_migrations
from tests.helpers import propose, status_of


def open_shared(project_dir: Path, url: str, **settings: object) -> npc_nb.Project:
    return npc_nb.open(project_dir, store=url, **settings)


def test_the_core_api_works_on_postgresql(project_dir: Path, postgres_url: str) -> None:
    nb = open_shared(project_dir, postgres_url)
    try:
        first = propose(nb, "We use DuckDB for analysis")
        again = nb.add_candidate("We use DuckDB for analysis", category="fact", npc="analyst")
        assert again.action == "merged" and again.memory_id == first
        nb.approve(first)
        assert "We use DuckDB for analysis" in nb.context("analyst")
        assert status_of(nb, first) == "human-approved"
        assert list(nb.decisions()["action"]) == ["propose", "approve"]
        assert nb.sql("SELECT outcome FROM v_memories")["outcome"].tolist() == ["approved"]
        assert nb.metrics.approval_rate()["approved"].sum() == 1
        nb.undo()
        assert status_of(nb, first) == "pending_approval"
    finally:
        nb.close()
    assert not (project_dir / ".npc_nb" / "memory.duckdb").exists()  # nothing embedded


def test_another_wording_is_approved_and_named_on_postgresql(
    project_dir: Path, postgres_url: str
) -> None:
    nb = open_shared(project_dir, postgres_url)
    try:
        card = propose(nb, "We use DuckDB for analysis")
        merged = nb.add_candidate("Note: we use DuckDB for analysis.", category="fact",
                                  npc="analyst")  # fmt: skip
        assert merged.action == "merged"
        variant = nb.reproposals()["id"].item()
        nb.approve(card, variant=variant)
        assert status_of(nb, card) == "human-approved"
        assert nb.decisions()["wording"].tolist()[-1] == variant
        shown = nb.sql("SELECT edited, other_wording FROM v_memories").to_dict("records")
        assert shown == [{"edited": False, "other_wording": True}]
        assert nb.metrics.edit_rate()[["edited", "other_wording"]].values.tolist() == [[0, 1]]
    finally:
        nb.close()


def test_a_project_is_known_by_its_name_not_its_folder(tmp_path: Path, postgres_url: str) -> None:
    one, two = tmp_path / "ada-laptop" / "proj", tmp_path / "bob-desktop" / "work"
    for folder in (one, two):
        folder.mkdir(parents=True)
        (folder / ".git").mkdir()
    first = open_shared(one, postgres_url, project="lab memory")
    memory = propose(first, "The lab shares one memory")
    second = open_shared(two, postgres_url, project="lab memory")
    assert memory in second.review_queue()["id"].tolist()
    other = open_shared(two, postgres_url)  # the folder's name: another project
    assert other.review_queue().empty
    for nb in (first, second, other):
        nb.close()


def test_decisions_carry_the_reviewer_else_the_database_role(
    project_dir: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NPC_NB_REVIEWER")
    nb = open_shared(project_dir, postgres_url)
    nb.approve(propose(nb, "one"))
    nb.configure(reviewer="ada")
    nb.approve(propose(nb, "two"))
    decided = nb.decisions().query("action == 'approve'")["reviewer"].tolist()
    assert decided == ["postgres", "ada"]  # the role the URL connects as, then the setting
    nb.close()


def test_a_password_in_the_url_is_never_shown(
    project_dir: Path, postgres_server: object, postgres_url: str
) -> None:
    with_password = postgres_url.replace("postgres@", "postgres:hunter2secret@")
    nb = open_shared(project_dir, with_password)
    shown = [repr(nb), str(nb.store_path), repr(nb.settings), str(nb.settings), nb.status().store]
    assert all("hunter2secret" not in text for text in shown), shown
    assert all("***" in text for text in shown[:4])
    nb.close()
    unreachable = "postgresql://ada:hunter2secret@127.0.0.1:1/nowhere"
    with pytest.raises(npc_nb.StoreError) as failed:
        npc_nb.open(project_dir, store=unreachable)
    assert "hunter2secret" not in str(failed.value) and failed.value.__cause__ is None
    with pytest.raises(npc_nb.InvalidValueError) as bad:
        npc_nb.open(project_dir, store="mysql://ada:hunter2secret@host/db")
    assert "hunter2secret" not in str(bad.value) and "hunter2secret" not in str(bad.value.value)


def test_a_password_given_as_a_parameter_is_never_shown(
    project_dir: Path, postgres_url: str
) -> None:
    # The throwaway server trusts loopback: the URL carries the password, unused.
    url = f"{postgres_url}?sslmode=disable&password=hunter2secret&sslpassword=hunter2secret"
    nb = open_shared(project_dir, url)
    try:
        propose(nb, "We use DuckDB for analysis")
        shown = [repr(nb), str(nb.store_path), repr(nb.settings), str(nb.settings)]
        shown += [nb.status().store, nb._repr_mimebundle_()["text/html"]]
        assert all("hunter2secret" not in text for text in shown), shown
        assert "?sslmode=disable&password=***&sslpassword=***" in str(nb.store_path)
    finally:
        nb.close()


def test_the_store_cannot_be_changed_on_an_open_project(
    project_dir: Path, postgres_url: str
) -> None:
    nb = open_shared(project_dir, postgres_url)
    with pytest.raises(npc_nb.ConfigError, match="fixed when the project is opened"):
        nb.configure(store=None)
    nb.close()


def test_both_backends_have_the_same_tables_and_columns_in_one_order(postgres_url: str) -> None:
    embedded = duckdb.connect(":memory:")
    apply_migrations(embedded)
    duck = _columns(
        embedded.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name IN (SELECT table_name FROM "
            "information_schema.tables WHERE table_type = 'BASE TABLE')"
        ).fetchall()
    )
    nb_dir = Path(postgres_url.rsplit("/", 1)[1])
    with psycopg.connect(postgres_url, autocommit=True) as con:
        from npc_nb.store.schema.pg_migrations import apply_pg_migrations

        apply_pg_migrations(con, "npc_" + str(nb_dir))
        found = con.execute(
            "SELECT table_name, column_name, CASE WHEN data_type = 'ARRAY' "
            "THEN udt_name ELSE data_type END FROM information_schema.columns "
            "WHERE table_schema = %s",
            ["npc_" + str(nb_dir)],
        ).fetchall()
    assert _columns(found) == duck


_TYPES = {
    "character varying": "VARCHAR",
    "_varchar": "VARCHAR[]",
    "timestamp without time zone": "TIMESTAMP",
    "double precision": "DOUBLE",
    "bigint": "BIGINT",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "bytea": "BLOB",
}


def _columns(found: list[tuple]) -> dict[str, list[tuple[str, str]]]:
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in found:
        tables.setdefault(table, []).append((column, _TYPES.get(kind, kind).upper()))
    return {table: sorted(columns) for table, columns in tables.items()}


def test_postgresql_enforces_the_closed_sets_and_an_append_only_audit_log(
    project_dir: Path, postgres_url: str
) -> None:
    nb = open_shared(project_dir, postgres_url)
    memory = propose(nb, "A fact")
    nb.close()
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute("SET search_path TO npc_project")
        with pytest.raises(psycopg.errors.CheckViolation):
            con.execute("UPDATE memories SET status = 'approved-by-model' WHERE id = %s", [memory])
        with pytest.raises(psycopg.errors.CheckViolation):
            con.execute("UPDATE memories SET category = 'gossip' WHERE id = %s", [memory])
        for statement in (
            "UPDATE memory_events SET actor = 'mallory'",
            "DELETE FROM memory_events",
            "TRUNCATE memory_events",
        ):  # refused even for the superuser that owns the tables
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
                con.execute(statement)
        assert con.execute("SELECT count(*) FROM memory_events").fetchone() == (1,)


def test_clients_starting_together_migrate_once(tmp_path: Path, postgres_url: str) -> None:
    folders = []
    for n in range(4):
        folder = tmp_path / f"kernel{n}"
        (folder / ".git").mkdir(parents=True)
        folders.append(folder)
    failures: list[BaseException] = []
    opened: list[npc_nb.Project] = []

    def start(folder: Path) -> None:
        try:
            opened.append(open_shared(folder, postgres_url, project="together"))
        except BaseException as exc:  # reported below
            failures.append(exc)

    # Separate processes would use separate pools; threads of one process share the
    # pool only after it exists, so each opens its own store object first.
    threads = [threading.Thread(target=start, args=(f,)) for f in folders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    with psycopg.connect(postgres_url) as con:
        names = con.execute("SELECT name FROM npc_together._migrations").fetchall()
    assert [name for (name,) in names] == [step.name for step in MIGRATIONS]
    for nb in opened:
        nb.close()


def test_analysis_on_the_shared_store_stays_read_only(
    project_dir: Path, postgres_url: str, tmp_path: Path
) -> None:
    nb = open_shared(project_dir, postgres_url)
    propose(nb, "A fact")
    target = tmp_path / "leak.csv"
    for sql in (
        f"COPY (SELECT 1) TO '{target}'",
        "INSERT INTO memories SELECT * FROM memories",
        "ATTACH ':memory:' AS other",
    ):
        with pytest.raises(npc_nb.QueryError):
            nb.sql(sql)
    for sql in (
        f"SELECT * FROM read_csv('{project_dir / 'pyproject.toml'}')",
        f"SELECT * FROM (SELECT 1) t, (FROM read_text('{target}'))",
    ):
        with pytest.raises(npc_nb.QueryError, match="read-only query path"):
            nb.sql(sql)
    with pytest.raises(npc_nb.QueryError):  # the attached database itself is read-only
        nb.sql("SELECT * FROM postgres_query('pg', 'DELETE FROM memories RETURNING id')")
    assert not target.exists()
    assert len(nb.sql("SELECT * FROM memories")) == 1
    nb.close()


def test_the_graph_is_drawn_from_postgresql(project_dir: Path, postgres_url: str) -> None:
    nb = open_shared(project_dir, postgres_url, matcher=None)
    try:
        for n in range(8):
            nb.approve(propose(nb, f"Station {n} at Neusiedl logs data with the Garmin GX{n}"))
        rejected = propose(nb, "The Vienna station logs data with Postgres")
        nb.reject(rejected)
        whole = nb.graph.networkx()
        assert f"memory:{rejected}" not in whole and "concept:vienna" not in whole
        view = nb.graph.show(max_nodes=6)
        assert view.graph.number_of_nodes() == 6 and view.total_nodes == whole.number_of_nodes()
        near = nb.graph.show(focus="Neusiedl", depth=1).graph
        assert "concept:neusiedl" in near and all(
            data["kind"] in ("concept", "memory") for _, data in near.nodes(data=True)
        )
    finally:
        nb.close()
