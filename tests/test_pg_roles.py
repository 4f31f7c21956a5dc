"""Roles on the shared store: a reviewer decides, a reader only queries, and a reader of
one project cannot see another project in the same database."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb
from npc_nb.store.pg_roles import grant_statements
from tests.helpers import propose, status_of
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
