"""SQL on the store, from Python (``nb.sql``) and from a notebook (``%npc_sql``):
read-only unless asked, notebook variables bound (never pasted in), a failing write
changes nothing, clear errors. The engine-level guarantees are in test_readonly_sql.py."""

from __future__ import annotations

import duckdb
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from tests.helpers import cell, magics_project, propose, status_of

# -- nb.sql ----------------------------------------------------------------------------


def test_queries_are_read_only_unless_asked(nb: npc_nb.Project) -> None:
    memory = propose(nb, "a fact")
    for statement in (
        "DELETE FROM memory_events",
        "DROP TABLE memories",
        "SELECT 1; UPDATE memories SET final_text = 'x'",
    ):
        with pytest.raises(npc_nb.NpcError, match="read-only"):
            nb.sql(statement)
    assert len(nb.decisions(memory)) == 1
    assert nb.sql("SELECT final_text FROM memories WHERE id = $id", {"id": memory}).iloc[0, 0] == (
        "a fact"
    )


def test_a_failing_sql_write_changes_nothing_and_leaves_no_stale_context(
    nb: npc_nb.Project,
) -> None:
    memory = propose(nb, "secret plan")
    nb.approve(memory)
    assert "secret plan" in nb.context("analyst")
    with pytest.raises(npc_nb.QueryError, match="nowhere") as failed:
        nb.sql(
            f"UPDATE memories SET status = 'human-rejected' WHERE id = '{memory}'; "
            "SELECT * FROM nowhere",
            allow_write=True,
        )
    assert isinstance(failed.value.__cause__, duckdb.CatalogException)
    assert status_of(nb, memory) == "human-approved"
    assert "secret plan" in nb.context("analyst")


def test_sql_writes_may_not_manage_transactions(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.NpcError, match="one transaction"):
        nb.sql("BEGIN TRANSACTION; UPDATE memories SET status = 'deferred'", allow_write=True)


# -- %npc_sql --------------------------------------------------------------------------


def test_npc_sql_refuses_writes_unless_allowed(shell: InteractiveShell) -> None:
    nb = magics_project(shell)
    nb.add_candidate("a fact", category="fact", npc="analyst")
    with pytest.raises(UsageError, match="--write"):
        cell(shell, "%npc_sql DELETE FROM memory_events")
    with pytest.raises(UsageError, match="could change the store"):
        cell(shell, "%%npc_sql\nUPDATE memories SET final_text = 'forged'")
    assert nb.memories()["final_text"].tolist() == ["a fact"]
    assert len(nb.decisions()) == 1
    cell(shell, "%%npc_sql --write\nUPDATE memories SET confidence = 0.5")
    assert nb.memories()["confidence"].tolist() == [0.5]


def test_npc_sql_binds_notebook_variables(shell: InteractiveShell) -> None:
    nb = magics_project(shell)
    nb.add_candidate("O'Brien prefers tea", category="preference", npc="analyst")
    shell.user_ns["text"] = "O'Brien prefers tea"
    shell.user_ns["attack"] = "x' OR '1'='1"
    found = cell(shell, "%npc_sql SELECT npc FROM v_memories WHERE final_text = $text")
    assert found["npc"].tolist() == ["analyst"]
    nothing = cell(shell, "%npc_sql SELECT npc FROM v_memories WHERE final_text = $attack")
    assert nothing.empty
    with pytest.raises(UsageError, match="no variable 'absent'"):
        cell(shell, "%npc_sql SELECT $absent")


def test_npc_sql_assigns_and_reports_errors_with_position(shell: InteractiveShell) -> None:
    cell(shell, "%%npc_sql -o counts\nSELECT count(*) AS n FROM v_memories")
    assert shell.user_ns["counts"]["n"].tolist() == [0]
    with pytest.raises(UsageError, match=r"(?s)Referenced column.*LINE 1"):
        cell(shell, "%npc_sql SELECT nope FROM v_memories")


def test_npc_sql_edge_cases(shell: InteractiveShell) -> None:
    nb = magics_project(shell)
    literal = shell.run_line_magic("npc_sql", "SELECT 'costs $usd' AS s -- and $nothing")
    assert literal["s"].tolist() == ["costs $usd"]
    with pytest.raises(UsageError, match="Options go on a cell"):
        shell.run_line_magic("npc_sql", "--write DELETE FROM memories")
    with pytest.raises(UsageError, match="empty"):
        shell.run_line_magic("npc_sql", "-- only a comment")
    with pytest.raises(UsageError, match="read-only"):
        shell.run_line_magic("npc_sql", "EXPLAIN ANALYZE DELETE FROM memory_events")
    assert nb.sql("SELECT count(*) AS n FROM memory_events")["n"].item() == 0
