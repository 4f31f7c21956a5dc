"""A decision changes the cached memory block by what it changed: the approved set is
never read whole again after a decision (here, another handle's, or an undo), yet the
block always equals one built from scratch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npc_nb
from npc_nb.errors import NpcError
from npc_nb.store.generation import DECISION_SQL, decision_params
from npc_nb.store.memories import memory_rows
from npc_nb.store.notices import DecisionNotice
from npc_nb.store.server.database import PostgresStore
from npc_nb.store.server.listener import channel_for
from tests.helpers import PATIENCE, propose, run_python, wait_until


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each read of a whole approved set, by persona."""
    reads: list[str] = []
    read = memory_rows.approved_visible

    def counted(con, npc, team):  # type: ignore[no-untyped-def]
        reads.append(npc)
        return read(con, npc, team)

    monkeypatch.setattr(memory_rows, "approved_visible", counted)
    yield reads


def test_decisions_patch_the_cached_block_without_rereading_the_approved_set(
    nb: npc_nb.Project, whole_reads: list[str]
) -> None:
    kept = propose(nb, "The user writes Rust at work")
    nb.approve(kept)
    assert "Rust" in nb.context("analyst", query="rust")  # the set is read, and indexed
    assert whole_reads == ["analyst"]

    fresh = propose(nb, "The user reviews papers on Fridays")
    nb.approve(fresh)
    assert "Fridays" in nb.context("analyst", query="papers")
    nb.edit(kept, "The user writes Go at work")
    block = nb.context("analyst", query="go")
    assert "Go at work" in block and "Rust" not in block
    nb.undo()
    assert "Rust at work" in nb.context("analyst", query="rust")
    nb.reject(propose(nb, "The user hates tea"))
    nb.supersede(fresh, "The user reviews papers on Mondays")
    block = nb.context("analyst")
    assert "Mondays" in block and "Fridays" not in block and "tea" not in block
    assert whole_reads == ["analyst"]  # five decisions and an undo later: never again


def test_another_handles_decision_is_patched_in_from_the_audit_log(
    project_dir: Path, whole_reads: list[str]
) -> None:
    here, there = npc_nb.open(project_dir), npc_nb.open(project_dir)
    here.reject(propose(here, "a first decision starts the store's epoch"))
    memory = propose(here, "decided by the other handle")
    assert here.context("analyst") == ""
    there.approve(memory, by="colleague")
    assert "decided by the other handle" in here.context("analyst")
    assert whole_reads == ["analyst"]
    here.close()
    there.close()


def test_sql_that_writes_reloads_the_set(nb: npc_nb.Project, whole_reads: list[str]) -> None:
    memory = propose(nb, "written by hand")
    nb.approve(memory)
    assert "written by hand" in nb.context("analyst")
    nb.sql("UPDATE memories SET final_text = 'rewritten' WHERE id = ?", [memory], allow_write=True)
    assert "rewritten" in nb.context("analyst")
    assert whole_reads == ["analyst", "analyst"]  # the audit log cannot tell what changed


_WORDS = ["rust", "papers", "tea", "jazz", "deadline", "python", "lab", "friday"]
_OPS = st.one_of(
    st.tuples(
        st.just("propose"),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
        st.sampled_from(["npc", "project", "global", "other"]),
    ),
    st.tuples(
        st.sampled_from(["approve", "reject", "skip", "defer", "edit", "supersede"]),
        st.integers(min_value=0, max_value=30),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3),
    ),
    st.tuples(st.just("undo"), st.just(0), st.just([])),
)


@settings(max_examples=20)
@given(steps=st.lists(_OPS, min_size=1, max_size=10), query=st.sampled_from([*_WORDS, ""]))
def test_a_patched_block_equals_one_built_from_scratch(
    nb: npc_nb.Project, project_dir: Path, steps: list[tuple], query: str
) -> None:
    cap = 420  # small enough that relevance chooses, so the patched index matters
    nb.context("analyst", query=query, max_chars=cap)  # cached before the decisions
    for step in steps:
        _take(nb, step)
        patched = nb.context_block("analyst", query=query, max_chars=cap)
        scratch = npc_nb.open(project_dir)  # a cache of its own
        assert patched == scratch.context_block("analyst", query=query, max_chars=cap)
        scratch.close()


def _take(nb: npc_nb.Project, step: tuple) -> None:
    action, which, words = step
    if action == "propose":
        words, scope = which, words
        npc = "someone-else" if scope == "other" else "analyst"
        text = " ".join(["The user likes", *words])
        nb.add_candidate(text, category="fact", npc=npc, scope="npc" if scope == "other" else scope)
        return
    ids = list(nb.memories()["id"])
    try:
        if action == "undo":
            nb.undo()
        elif ids and action in ("edit", "supersede"):
            getattr(nb, action)(ids[which % len(ids)], "The user now likes " + " ".join(words))
        elif ids:
            getattr(nb, action)(ids[which % len(ids)])
    except NpcError:
        pass  # a decision that does not apply to this memory now: nothing changes


# -- on a shared PostgreSQL store ------------------------------------------------------------


def _shared(project_dir: Path, url: str) -> npc_nb.Project:
    project = npc_nb.open(project_dir, store=url, extract_in_background=False)
    store = project._memory.stores.project
    assert isinstance(store, PostgresStore) and store.wait_listening(PATIENCE)
    return project


def test_a_decision_committed_after_a_later_one_is_still_patched_in(
    project_dir: Path, postgres_url: str, whole_reads: list[str]
) -> None:
    # On PostgreSQL, event numbers are handed out before commit: a slow transaction can
    # commit an event numbered below one the cache has already caught up with.
    nb = _shared(project_dir, postgres_url)
    nb.reject(propose(nb, "a first decision starts the store's epoch"))
    slow, quick = propose(nb, "committed late"), propose(nb, "committed first")
    assert nb.context("analyst") == ""
    store = nb._memory.stores.project
    assert isinstance(store, PostgresStore)
    with psycopg.connect(postgres_url) as con:  # a transaction, as another client's
        con.execute(f"SET search_path TO {store.schema}")
        con.execute(
            "INSERT INTO memory_events (seq, memory_id, occurred_at, actor, action, "
            "from_status, to_status) VALUES (nextval('memory_event_seq'), %s, "
            "localtimestamp, 'slow', 'approve', 'pending_approval', 'human-approved')",
            [slow],
        )
        con.execute(
            "UPDATE memories SET status = 'human-approved', decided_at = localtimestamp, "
            "decided_by = 'slow' WHERE id = %s",
            [slow],
        )
        nb.approve(quick)  # numbered after the slow one, committed before it
        block = nb.context("analyst")
        assert "committed first" in block and "committed late" not in block
        con.execute(DECISION_SQL.replace("?", "%s"), decision_params())
        notice = DecisionNotice(slow, "human-approved", "slow").payload()
        con.execute("SELECT pg_notify(%s, %s)", [channel_for(store.schema), notice])
    wait_until(lambda: "committed late" in nb.context("analyst"), what="the late commit")
    assert whole_reads == ["analyst"]
    nb.close()


def test_another_clients_decision_is_patched_in_on_a_shared_store(
    project_dir: Path, postgres_url: str, isolated_home: Path, whole_reads: list[str]
) -> None:
    nb = _shared(project_dir, postgres_url)
    nb.reject(propose(nb, "a first decision starts the store's epoch"))
    memory = propose(nb, "approved on another machine")
    assert nb.context("analyst") == ""
    run_python(
        f"""
        import npc_nb
        nb = npc_nb.open({str(project_dir)!r}, store={postgres_url!r}, reviewer="bob",
                         extract_in_background=False)
        nb.approve({memory!r})
        """,
        env_home=isolated_home,
    )
    wait_until(lambda: "another machine" in nb.context("analyst"), what="the other decision")
    assert whole_reads == ["analyst"]
    nb.close()
