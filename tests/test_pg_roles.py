"""Roles on the shared store: a reviewer decides, a reader only queries, a reader of
one project cannot see another project in the same database, and no lock a reader can
take holds a writer up."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

import npc_nb
from npc_nb._foundations.text import content_hash
from npc_nb.store.server.roles import grant_statements
from tests.helpers import PATIENCE, propose, run_python, status_of
from tests.postgres import PostgresServer


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """Owner, reviewer and reader roles (unique to this test) on a fresh database with
    two projects, 'alpha' and 'beta'; the reviewer and reader are granted alpha only."""
    database = PostgresServer.database_name(postgres_url)
    roles = {kind: f"{kind}_{database}" for kind in ("owner", "reviewer", "reader")}
    for role in roles.values():
        postgres_server.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    postgres_server.execute(f"GRANT CREATE ON DATABASE {database} TO {roles['owner']}")
    urls = {
        kind: postgres_server.url_for(database, user=role, password="pw")
        for kind, role in roles.items()
    }
    for project in ("alpha", "beta"):
        folder = tmp_path / project
        (folder / ".git").mkdir(parents=True)
        owner = npc_nb.open(folder, store=urls["owner"])
        propose(owner, f"A fact of project {project}")
        owner.close()
    for statement in grant_statements(
        "npc_alpha", reviewer=roles["reviewer"], reader=roles["reader"]
    ):
        postgres_server.execute(statement, database=urls["owner"])
    return urls


def test_a_reviewer_decides_and_cannot_rewrite_the_audit_log(
    lab: dict[str, str], tmp_path: Path
) -> None:
    nb = npc_nb.open(tmp_path / "alpha", store=lab["reviewer"])
    memory = nb.review_queue()["id"].item()
    nb.approve(memory)
    assert status_of(nb, memory) == "human-approved"
    with pytest.raises(npc_nb.StoreError, match="may not"):
        nb.sql("DELETE FROM memory_events", allow_write=True)
    assert len(nb.decisions()) == 2
    nb.close()


def test_a_reader_cannot_decide_even_with_write_sql(lab: dict[str, str], tmp_path: Path) -> None:
    nb = npc_nb.open(tmp_path / "alpha", store=lab["reader"])
    memory = nb.review_queue()["id"].item()
    with pytest.raises(npc_nb.StoreError, match="Reader roles may only query"):
        nb.approve(memory)
    with pytest.raises(npc_nb.StoreError, match="may not"):
        nb.sql(
            "UPDATE memories SET status = 'human-approved' WHERE id = ?",
            [memory],
            allow_write=True,
        )
    assert status_of(nb, memory) == "pending_approval"
    assert nb.sql("SELECT count(*) AS n FROM v_decisions")["n"].item() == 1  # it may query
    nb.close()


def test_a_reader_of_one_project_cannot_see_another(lab: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(npc_nb.StoreError, match="Cannot open"):
        npc_nb.open(tmp_path / "beta", store=lab["reader"])
    nb = npc_nb.open(tmp_path / "alpha", store=lab["reader"])
    with pytest.raises(npc_nb.QueryError, match="read-only query path"):
        nb.sql("SELECT * FROM postgres_query('pg', 'SELECT final_text FROM npc_beta.memories')")
    with pytest.raises(npc_nb.StoreError, match="permission denied"):  # the server's refusal
        nb.sql("SELECT final_text FROM npc_beta.memories", allow_write=True)
    assert "beta" not in " ".join(nb.sql("SELECT final_text FROM memories")["final_text"])
    nb.close()


def test_a_reader_can_open_a_schema_from_before_records_and_the_owner_records_it(
    lab: dict[str, str], tmp_path: Path, postgres_server: PostgresServer
) -> None:
    postgres_server.execute("DELETE FROM npc_alpha._project", database=lab["owner"])
    nb = npc_nb.open(tmp_path / "alpha", store=lab["reader"])  # may not write: let in
    assert nb.review_queue()["final_text"].tolist() == ["A fact of project alpha"]
    nb.close()
    assert (
        postgres_server.execute("SELECT name FROM npc_alpha._project", database=lab["owner"]) == []
    )
    run_python(  # the owner's next kernel
        f"import npc_nb; npc_nb.open({str(tmp_path / 'alpha')!r}, store={lab['owner']!r}).close()",
        env_home=tmp_path / "owner-home",
    )
    assert postgres_server.execute(
        "SELECT name FROM npc_alpha._project", database=lab["owner"]
    ) == [("alpha",)]
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor may a reviewer change it
        postgres_server.execute(
            "UPDATE npc_alpha._project SET name = 'beta'",
            database=lab["reviewer"],
        )


def test_a_reader_holding_every_lock_it_can_take_cannot_hold_up_a_proposal(
    lab: dict[str, str], tmp_path: Path
) -> None:
    text = "The reader cannot stop this fact"
    digest = content_hash(text)
    reviewer = npc_nb.open(tmp_path / "alpha", store=lab["reviewer"])
    outcome: list[object] = []
    writer = threading.Thread(
        target=lambda: outcome.append(reviewer.add_candidate(text, category="fact", npc="analyst"))
    )
    reader = psycopg.connect(lab["reader"])  # one open transaction, held throughout
    try:
        for key in (f"npc_nb:text:{digest}", f"npc_nb:text:npc_alpha:{digest}", "npc_nb:npc_alpha"):
            reader.execute("SELECT pg_advisory_lock(hashtext(%s))", [key])  # the old keys
            reader.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", [key])
        tables = reader.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'npc_alpha'")
        for (table,) in tables.fetchall():
            reader.execute(f"SELECT count(*) FROM npc_alpha.{table}")  # holds a share of each
        writer.start()
        writer.join(PATIENCE)
        assert not writer.is_alive(), "a reader's locks held up the reviewer's proposal"
        assert [getattr(o, "action", o) for o in outcome] == ["queued"]
    finally:
        reader.close()  # lets a held-up proposal go, so the thread ends
        if writer.is_alive():
            writer.join()
        reviewer.close()
    with (
        psycopg.connect(lab["reader"]) as con,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):  # the row a proposal locks is out of a reader's reach
        con.execute("SELECT * FROM npc_alpha.proposal_locks FOR UPDATE")


@pytest.mark.timeout(120)
def test_a_proposal_lock_held_too_long_is_a_clear_error(
    lab: dict[str, str], tmp_path: Path
) -> None:
    text = "Two sessions propose this at once"
    nb = npc_nb.open(tmp_path / "alpha", store=lab["reviewer"], lock_timeout=1)
    stuck = psycopg.connect(lab["owner"])  # a proposal of the same text that never ends
    try:
        stuck.execute(
            "INSERT INTO npc_alpha.proposal_locks VALUES (%s) ON CONFLICT DO NOTHING",
            [content_hash(text)],
        )
        with pytest.raises(npc_nb.StoreError, match="within 1 s .*another session"):
            nb.add_candidate(text, category="fact", npc="analyst")
        nb.configure(lock_timeout=2)  # a later setting applies to the next proposal
        with pytest.raises(npc_nb.StoreError, match="within 2 s"):
            nb.add_candidate(text, category="fact", npc="analyst")
        stuck.rollback()
        assert nb.add_candidate(text, category="fact", npc="analyst").action == "queued"
    finally:
        stuck.close()
        nb.close()


def test_a_reader_holding_the_migration_lock_cannot_hang_opening_a_project(
    lab: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "gamma"
    (folder / ".git").mkdir(parents=True)
    failure: list[BaseException] = []

    def open_gamma() -> None:
        try:
            npc_nb.open(folder, store=lab["owner"], lock_timeout=1).close()
        except BaseException as exc:  # reported below
            failure.append(exc)

    with psycopg.connect(lab["reader"], autocommit=True) as reader:
        reader.execute("SELECT pg_advisory_lock(hashtext('npc_nb:npc_gamma'))")
        opener = threading.Thread(target=open_gamma)
        opener.start()
        opener.join(PATIENCE)
        hung = opener.is_alive()
    opener.join()
    assert not hung, "opening a project waited for ever on a lock a reader held"
    assert len(failure) == 1 and isinstance(failure[0], npc_nb.StoreError)
    assert "within 1 s" in str(failure[0]) and "Open the project again" in str(failure[0])
    npc_nb.open(folder, store=lab["owner"]).close()  # once the lock is gone, it opens
