"""The per-process caches never serve a stale answer: other kernels, the clock, SQL
writes, a store file deleted and created again."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import npc_nb
from npc_nb._foundations.utc import utc_now
from tests.helpers import PATIENCE, propose, run_python, wait_until


def test_a_decision_in_another_process_reaches_this_context(project_dir, isolated_home) -> None:
    nb = npc_nb.open(project_dir, idle_release=0.05)
    memory = propose(nb, "decided elsewhere")
    assert nb.context("analyst") == ""  # cached: nothing approved yet
    # The other kernel waits (up to a minute) for this one to let go of the idle store.
    run_python(
        f"""
        import npc_nb
        other = npc_nb.open({str(project_dir)!r}, lock_timeout=60)
        other.approve({memory!r}, by="other-kernel")
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
    run_python(
        f"""
        import npc_nb
        other = npc_nb.open({str(project_dir)!r}, lock_timeout=60)
        other.reject({memory!r}, by="other-kernel")
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
    first.close()
    second.close()


def test_a_validity_window_opening_needs_no_decision(nb: npc_nb.Project) -> None:
    memory = propose(nb, "starts soon")
    nb.approve(memory)
    lead = 1.0
    while True:  # the cache must be filled before the window opens, however slow we are
        opens = datetime.now(UTC) + timedelta(seconds=lead)
        nb.set_validity(memory, valid_from=opens)
        before = nb.context("analyst")
        if utc_now() < opens.replace(tzinfo=None):
            break  # read (and cached) while the window was still closed
        lead *= 2
    assert before == ""
    decided = len(nb.decisions())

    def window_open() -> bool:
        return utc_now() >= opens.replace(tzinfo=None)

    wait_until(window_open, timeout=lead + PATIENCE, what="the window opening")
    assert "starts soon" in nb.context("analyst")  # at once, though nothing was decided
    assert len(nb.decisions()) == decided


def test_a_write_through_sql_invalidates_the_cache(nb: npc_nb.Project) -> None:
    memory = propose(nb, "edited by hand")
    nb.approve(memory)
    assert "edited by hand" in nb.context("analyst")
    nb.sql(
        "UPDATE memories SET final_text = 'changed by SQL' WHERE id = ?", [memory], allow_write=True
    )
    assert "changed by SQL" in nb.context("analyst")


def test_a_recreated_store_file_is_never_served_from_the_old_cache(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    nb.approve(propose(nb, "from the old store"))
    assert "from the old store" in nb.context("analyst")
    nb.close()
    shutil.rmtree(project_dir / ".npc_nb")
    assert nb.context("analyst") == ""
    nb.approve(propose(nb, "from the new store"))
    assert "from the new store" in nb.context("analyst")
    assert "old store" not in nb.context("analyst")
