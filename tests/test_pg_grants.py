"""The owner grants roles from the notebook and the terminal: ``nb.grant`` /
``nb.revoke``, ``npc-nb grant`` / ``npc-nb revoke``, and write SQL that PostgreSQL runs
itself (``nb.sql("GRANT ...", allow_write=True)``), on a real server."""

from __future__ import annotations

import gc
import io
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

import npc_nb
from npc_nb.cli import main
from npc_nb.store.server.roles import grant_statements
from tests.helpers import REPO, propose, status_of
from tests.postgres import PostgresServer


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """A fresh database with an owner role, which opened project 'alpha' (one candidate
    waits), and two member roles the owner has granted nothing yet: their URLs, and
    the role names under ``<kind>_role``."""
    database = PostgresServer.database_name(postgres_url)
    roles = {kind: f"{kind}_{database}" for kind in ("owner", "member", "other")}
    for role in roles.values():
        postgres_server.execute(f"CREATE ROLE {role} LOGIN")
    postgres_server.execute(f"GRANT CREATE ON DATABASE {database} TO {roles['owner']}")
    lab = {kind: postgres_server.url_for(database, user=role) for kind, role in roles.items()}
    lab |= {f"{kind}_role": role for kind, role in roles.items()}
    (tmp_path / "alpha" / ".git").mkdir(parents=True)
    owner = npc_nb.open(tmp_path / "alpha", store=lab["owner"])
    propose(owner, "The field season starts in April")
    owner.close()
    return lab


def _open(folder: Path, url: str) -> npc_nb.Project:
    return npc_nb.open(folder, store=url, project="alpha")


def _member_reviews(folder: Path, url: str) -> None:
    """The member opens the project and approves its candidate; then its store is
    let go, so its next open connects again."""
    member = _open(folder, url)
    member.approve(member.review_queue()["id"].item())
    member.close()
    del member
    gc.collect()  # a reference cycle may hold the store (and its pool) until collected
    gc.collect()


def _can_read(url: str) -> bool:
    """Whether the role of ``url`` may read project alpha's memories on the server."""
    try:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("SELECT count(*) FROM npc_alpha.memories").fetchone()
    except psycopg.errors.InsufficientPrivilege:
        return False
    return True


# -- nb.grant and nb.revoke --------------------------------------------------------------


def test_the_owner_grants_reviewer_from_the_notebook_and_the_member_decides(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    access = owner.access.grant(lab["member_role"], "reviewer")
    assert (access.role, access.schema) == (lab["member_role"], "npc_alpha")
    assert access.level == access.asked == "reviewer"
    assert "may now review" in str(access)
    member = _open(tmp_path / "alpha", lab["member"])
    memory = member.review_queue()["id"].item()
    member.approve(memory)
    assert status_of(owner, memory) == "human-approved"  # the member's decision landed
    assert owner.decisions()["action"].tolist()[-1] == "approve"
    member.close()
    owner.close()


def test_a_reader_granted_from_the_notebook_queries_but_cannot_decide(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    assert owner.access.grant(lab["member_role"], "reader").level == "reader"
    member = _open(tmp_path / "alpha", lab["member"])
    memory = member.review_queue()["id"].item()
    assert member.sql("SELECT count(*) AS n FROM v_memories")["n"].item() == 1
    with pytest.raises(npc_nb.StoreError, match="Reader roles may only query"):
        member.approve(memory)
    assert status_of(owner, memory) == "pending_approval"
    member.close()
    owner.close()


def test_a_grant_sets_the_level_so_a_reviewer_granted_reader_no_longer_decides(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    owner.access.grant(lab["member_role"], "reviewer")
    assert owner.access.grant(lab["member_role"], "reader").level == "reader"
    member = _open(tmp_path / "alpha", lab["member"])
    with pytest.raises(npc_nb.StoreError, match="Reader roles may only query"):
        member.approve(member.review_queue()["id"].item())
    member.close()
    owner.close()


def test_a_revoked_member_can_no_longer_open_or_read_the_project(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    owner.access.grant(lab["member_role"], "reviewer")
    _member_reviews(tmp_path / "alpha", lab["member"])
    access = owner.access.revoke(lab["member_role"])
    assert access.level == "none" and "no longer" in str(access)
    assert not _can_read(lab["member"])
    with pytest.raises(npc_nb.StoreError, match="Cannot open"):
        _open(tmp_path / "alpha", lab["member"])
    owner.close()


def test_a_grant_gives_what_the_documented_grant_statements_give(
    lab: dict[str, str], tmp_path: Path, postgres_server: PostgresServer
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    owner.access.grant(lab["member_role"], "reviewer")
    owner.access.grant(lab["other_role"], "reader")
    owner.close()
    granted = _privileges(postgres_server, lab)
    owner_role = lab["owner_role"]
    for role in (lab["member_role"], lab["other_role"]):
        for revoke in (
            f"REVOKE ALL ON ALL TABLES IN SCHEMA npc_alpha FROM {role}",
            f"REVOKE ALL ON ALL SEQUENCES IN SCHEMA npc_alpha FROM {role}",
            f"REVOKE ALL ON SCHEMA npc_alpha FROM {role}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner_role} IN SCHEMA npc_alpha "
            f"REVOKE ALL ON TABLES FROM {role}",
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner_role} IN SCHEMA npc_alpha "
            f"REVOKE ALL ON SEQUENCES FROM {role}",
        ):
            postgres_server.execute(revoke, database=lab["owner"])
    assert _privileges(postgres_server, lab)["tables"] == []
    for statement in grant_statements(
        "npc_alpha", reviewer=lab["member_role"], reader=lab["other_role"]
    ):
        postgres_server.execute(statement, database=lab["owner"])
    assert _privileges(postgres_server, lab) == granted


def _privileges(server: PostgresServer, lab: dict[str, str]) -> dict[str, list[tuple]]:
    """What the two member roles may do in schema npc_alpha, now and on future tables."""
    members = [lab["member_role"], lab["other_role"]]
    tables = server.execute(
        "SELECT grantee, table_name, privilege_type FROM information_schema.role_table_grants "
        "WHERE table_schema = 'npc_alpha' AND grantee = ANY(%s) ORDER BY 1, 2, 3",
        [members],
        database=lab["owner"],
    )
    defaults = server.execute(
        "SELECT defaclobjtype, (aclexplode(defaclacl)).grantee::regrole::text AS who, "
        "(aclexplode(defaclacl)).privilege_type FROM pg_default_acl ORDER BY 1, 2, 3",
        database=lab["owner"],
    )
    usage = server.execute(
        "SELECT r, has_schema_privilege(r, 'npc_alpha', 'USAGE') FROM unnest(%s::text[]) r",
        [members],
        database=lab["owner"],
    )
    return {"tables": tables, "defaults": [d for d in defaults if d[1] in members], "usage": usage}


def test_only_the_schema_owner_may_grant(lab: dict[str, str], tmp_path: Path) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    owner.access.grant(lab["member_role"], "reviewer")
    member = _open(tmp_path / "alpha", lab["member"])
    with pytest.raises(npc_nb.StoreError) as refused:
        member.access.grant(lab["other_role"], "reader")
    message = str(refused.value)
    assert lab["member_role"] in message and lab["owner_role"] in message
    assert "owner" in message and "Nothing was changed" in message
    assert not _can_read(lab["other"])
    member.close()
    owner.close()


def test_a_role_that_does_not_exist_is_the_administrators_to_create(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    with pytest.raises(npc_nb.StoreError, match=r"no database role 'Nobody Here'.*CREATE ROLE"):
        owner.access.grant("Nobody Here", "reviewer")
    with pytest.raises(npc_nb.StoreError, match="owns"):
        owner.access.grant(lab["owner_role"], "reader")  # it would lock itself out of its tables
    with pytest.raises(npc_nb.InvalidValueError, match="'reader' or 'reviewer'"):
        owner.access.grant(lab["member_role"], "owner")
    owner.close()


def test_roles_exist_only_on_a_shared_store(nb: npc_nb.Project, project_dir: Path) -> None:
    with pytest.raises(npc_nb.ConfigError, match="only on a shared PostgreSQL store"):
        nb.access.grant("bob", "reviewer")
    with pytest.raises(npc_nb.ConfigError, match="file permissions"):
        nb.access.revoke("bob")
    out = io.StringIO()
    argv = ["grant", "bob", "--reviewer", "--project", str(project_dir)]
    assert main(argv, io.StringIO(), out) == 2
    assert out.getvalue().startswith("npc-nb: ") and out.getvalue().count("\n") == 1
    assert "only on a shared PostgreSQL store" in out.getvalue()


# -- npc-nb grant and npc-nb revoke ------------------------------------------------------


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    return subprocess.run(
        [sys.executable, "-m", "npc_nb.cli", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=240,
    )


def test_the_owner_grants_and_revokes_from_the_terminal(
    lab: dict[str, str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".git").mkdir(parents=True)
    options = ["--store", lab["owner"], "--project-name", "alpha"]
    done = _cli("grant", lab["member_role"], "--reviewer", *options, cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{lab['member_role']!r} may now review project 'alpha'" in done.stdout
    _member_reviews(tmp_path / "alpha", lab["member"])
    assert _can_read(lab["member"])

    done = _cli("revoke", lab["member_role"], *options, cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no longer" in done.stdout and not _can_read(lab["member"])

    done = _cli("grant", lab["member_role"], "--reader", "--store", lab["other"],
                "--project", str(tmp_path / "alpha"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and done.stdout.startswith("npc-nb: ")
    assert done.stdout.count("\n") == 1 and lab["other_role"] in done.stdout


def test_the_grant_command_takes_exactly_one_level(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, said in (
        (["grant", "bob"], "one of the arguments --reader --reviewer is required"),
        (["grant", "bob", "--reader", "--reviewer"], "not allowed with argument --reader"),
    ):
        with pytest.raises(SystemExit) as stopped:
            main(argv, io.StringIO(), io.StringIO())
        assert stopped.value.code == 2 and said in capsys.readouterr().err


# -- write SQL runs on the server ----------------------------------------------------------


def test_write_sql_grants_on_the_server(lab: dict[str, str], tmp_path: Path) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    member = lab["member_role"]
    owner.sql(
        f"GRANT USAGE ON SCHEMA npc_alpha TO {member};\n"
        f"GRANT SELECT ON ALL TABLES IN SCHEMA npc_alpha TO {member}",
        allow_write=True,
    )
    assert _can_read(lab["member"])
    reader = _open(tmp_path / "alpha", lab["member"])
    assert reader.review_queue()["final_text"].tolist() == ["The field season starts in April"]
    reader.close()
    owner.close()


def test_write_sql_speaks_postgresql_with_bound_values_and_caches_reread(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    memory = owner.review_queue()["id"].item()
    owner.approve(memory)
    assert "April" in owner.context("analyst")  # cached now
    changed = owner.sql(
        "-- PostgreSQL's own syntax: it's not DuckDB's\n"
        "UPDATE memories SET final_text = ? WHERE id = ? RETURNING final_text, "
        "'50%' AS share, $$a ? that stays$$ AS literal",
        ["The field season starts in May", memory],
        allow_write=True,
    )
    assert changed.to_dict("records") == [
        {
            "final_text": "The field season starts in May",
            "share": "50%",
            "literal": "a ? that stays",
        },
    ]
    assert "May" in owner.context("analyst") and "April" not in owner.context("analyst")
    named = owner.sql(
        "UPDATE memories SET confidence = $c WHERE id = $id; SELECT confidence FROM memories",
        {"c": 0.25, "id": memory},
        allow_write=True,
    )
    assert named["confidence"].tolist() == [0.25]
    owner.close()


def test_write_sql_errors_on_the_server_say_what_failed_and_change_nothing(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    memory = owner.review_queue()["id"].item()
    with pytest.raises(npc_nb.QueryError, match=r'(?s)PostgreSQL.*syntax error at or near "GRAN"'):
        owner.sql(
            "UPDATE memories SET final_text = 'lost' WHERE id = ?; GRAN SELECT ON memories TO x",
            [memory],
            allow_write=True,
        )
    assert owner.memories()["final_text"].item() == "The field season starts in April"
    with pytest.raises(npc_nb.QueryError, match="Remove 'COMMIT'"):
        owner.sql("UPDATE memories SET confidence = 1; COMMIT", allow_write=True)
    with pytest.raises(npc_nb.QueryError, match="2 placeholders but 1 value"):
        owner.sql("UPDATE memories SET final_text = ? WHERE id = ?", [memory], allow_write=True)
    owner.close()


def test_a_password_in_failing_write_sql_is_never_shown(
    lab: dict[str, str], tmp_path: Path, nb: npc_nb.Project
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    for project in (owner, nb):  # the server's error, and DuckDB's on a file
        with pytest.raises(npc_nb.QueryError) as failed:
            project.sql(f"ALTER ROLE {lab['member_role']} PASSWORD 'hunter22' NOSUCHWORD",
                        allow_write=True)  # fmt: skip
        assert "hunter22" not in str(failed.value) and "PASSWORD '***'" in str(failed.value)
    owner.close()


def test_write_sql_the_server_only_warns_about_reaches_the_caller_as_a_warning(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    owner.access.grant(lab["member_role"], "reviewer")
    member = _open(tmp_path / "alpha", lab["member"])
    with pytest.warns(UserWarning, match='PostgreSQL: no privileges were granted for "memories"'):
        member.sql(f"GRANT SELECT ON memories TO {lab['other_role']}", allow_write=True)
    assert not _can_read(lab["other"])
    member.close()
    owner.close()


def test_a_setting_changed_by_write_sql_ends_with_its_statements(
    lab: dict[str, str], tmp_path: Path
) -> None:
    owner = _open(tmp_path / "alpha", lab["owner"])
    owner.sql("SET search_path TO public; SET lock_timeout = '1ms'", allow_write=True)
    for number in range(12):  # through every pooled connection, several times
        propose(owner, f"Fact number {number} after the caller's settings")
        assert len(owner.review_queue()) == number + 2
    owner.close()
