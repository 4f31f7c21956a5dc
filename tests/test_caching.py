"""The per-process caches never serve a stale answer: other kernels, the clock, SQL writes."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

import npc_nb
from npc_nb.store.predicates import VISIBLE, visible_to
from tests.conftest import propose
from tests.test_store import run_python


def test_a_decision_in_another_process_reaches_this_context(project_dir, isolated_home) -> None:
    nb = npc_nb.open(project_dir, idle_release=0.05)
    memory = propose(nb, "decided elsewhere")
    assert nb.context("analyst") == ""  # cached: nothing approved yet
    time.sleep(0.2)
    run_python(
        f"""
        import npc_nb
        npc_nb.open({str(project_dir)!r}).approve({memory!r}, by="other-kernel")
        """,
        env_home=isolated_home,
    )
    assert "decided elsewhere" in nb.context("analyst")
    nb.close()


def test_a_rejection_in_another_process_becomes_a_tombstone_here(
    project_dir, isolated_home
) -> None:
    nb = npc_nb.open(project_dir, idle_release=0.05)
    memory = propose(nb, "The user likes jazz music")
    nb.add_candidate("warm the rejected cache", category="fact", npc="analyst")
    time.sleep(0.2)
    run_python(
        f"""
        import npc_nb
        npc_nb.open({str(project_dir)!r}).reject({memory!r}, by="other-kernel")
        """,
        env_home=isolated_home,
    )
    again = nb.add_candidate("The user likes jazz music a lot", category="fact", npc="analyst")
    assert (again.action, again.match_type) == ("suppressed", "near")
    nb.close()


def test_two_projects_on_one_folder_in_one_kernel_agree(project_dir) -> None:
    first, second = npc_nb.open(project_dir), npc_nb.open(project_dir)
    memory = propose(first, "shared fact")
    assert first.context("analyst") == ""
    second.approve(memory)
    assert "shared fact" in first.context("analyst")


def test_a_validity_window_opening_needs_no_decision(nb: npc_nb.Project) -> None:
    memory = propose(nb, "starts soon")
    nb.approve(memory)
    nb.set_validity(memory, valid_from=datetime.now() + timedelta(seconds=0.3))
    assert nb.context("analyst") == ""
    time.sleep(0.4)
    assert "starts soon" in nb.context("analyst")


def test_a_write_through_sql_invalidates_the_cache(nb: npc_nb.Project) -> None:
    memory = propose(nb, "edited by hand")
    nb.approve(memory)
    assert "edited by hand" in nb.context("analyst")
    nb.sql(
        "UPDATE memories SET final_text = 'changed by SQL' WHERE id = ?", [memory], allow_write=True
    )
    assert "changed by SQL" in nb.context("analyst")


@given(
    scope=st.sampled_from(["npc", "team", "project", "global"]),
    row_npc=st.sampled_from(["a", "b", None]),
    row_team=st.sampled_from(["t", "u", None]),
    npc=st.sampled_from(["a", "b", None]),
    team=st.sampled_from(["t", "u", None]),
)
def test_python_visibility_agrees_with_the_sql_predicate(
    scope: str, row_npc: str | None, row_team: str | None, npc: str | None, team: str | None
) -> None:
    import duckdb

    sql = f"SELECT coalesce({VISIBLE}, false) FROM (SELECT $s AS scope, $rn AS npc, $rt AS team)"
    params = {"s": scope, "rn": row_npc, "rt": row_team, "npc": npc, "team": team}
    (in_sql,) = duckdb.execute(sql, params).fetchone()
    assert visible_to({"scope": scope, "npc": row_npc, "team": row_team}, npc, team) == in_sql
