"""Snapshots and recorded replies on the shared store (PostgreSQL): the same exact
reads, with the server's transaction time, and a snapshot that waits for a decision
under way instead of counting it in later.

Each test gets a fresh database on the session's throwaway server (``postgres_url``).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import psycopg

import npc_nb
from npc_nb._foundations.store_url import project_schema
from tests.helpers import PATIENCE, propose, wait_until
from tests.test_snapshots import build_history, change_everything, documented_hash


def server_time(url: str) -> object:
    with psycopg.connect(url) as con:
        return con.execute("SELECT timezone('UTC', now())").fetchone()[0]  # type: ignore[index]


def test_a_snapshot_on_postgresql_reads_back_byte_identical(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    try:
        ids = build_history(nb)
        then = nb.context("analyst", team="lab")
        rates = nb.metrics.approval_rate(group_by="category")
        before = server_time(postgres_url)
        snapshot = nb.snapshot("submission-v1")
        assert before <= snapshot.taken_at <= server_time(postgres_url)  # the server's time
        change_everything(nb, ids)
        assert nb.context("analyst", team="lab") != then
        assert nb.context("analyst", team="lab", as_of="submission-v1") == then
        at_snapshot = nb.memories(status="approved", as_of=snapshot)
        assert snapshot.hash == documented_hash(at_snapshot) and snapshot.memories == 9
        pd.testing.assert_frame_equal(
            nb.metrics.approval_rate(group_by="category", as_of=snapshot), rates
        )
        assert nb.diff(snapshot)["change"].tolist().count("removed") == 4
    finally:
        nb.close()


def waiting_for_a_lock(url: str) -> bool:
    with psycopg.connect(url) as con:
        found = con.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE '%FOR UPDATE%'"
        ).fetchone()
    return bool(found and found[0])


def test_a_snapshot_waits_for_a_decision_under_way_and_includes_it(
    project_dir: Path, postgres_url: str
) -> None:
    """Another kernel's decision has numbered its event but not committed, and a later
    event (a proposal) has: the snapshot waits for the decision rather than leaving out
    an event numbered below its own last one, which would count in once committed."""
    nb = npc_nb.open(project_dir, store=postgres_url)
    memory = propose(nb, "The deadline is Friday")
    taken: dict[str, npc_nb.Snapshot] = {}
    with psycopg.connect(postgres_url, options="-c TimeZone=UTC") as other:
        other.execute(f"SET search_path TO {project_schema('project')}")
        # A decision as the review engine writes one: the row, the generation, the event.
        other.execute(
            "UPDATE memories SET status = 'human-approved', decided_at = now() WHERE id = %s",
            [memory],
        )
        other.execute("UPDATE store_state SET value = value + 1 WHERE key = 'decision_generation'")
        other.execute(
            "INSERT INTO memory_events (seq, memory_id, occurred_at, actor, action, "
            "from_status, to_status, text_after, state_before) "
            "SELECT nextval('memory_event_seq'), id, now(), 'other kernel', 'approve', "
            "'pending_approval', 'human-approved', final_text, %s FROM memories WHERE id = %s",
            [json.dumps({"status": "pending_approval"}), memory],
        )
        propose(nb, "Units are SI")  # committed meanwhile, numbered after the decision
        thread = threading.Thread(target=lambda: taken.update(snapshot=nb.snapshot()))
        thread.start()
        wait_until(lambda: waiting_for_a_lock(postgres_url), what="the snapshot to wait")
        other.commit()
    thread.join(timeout=PATIENCE)
    try:
        snapshot = taken["snapshot"]
        assert snapshot.memories == 1
        assert "Friday" in nb.context("analyst", as_of=snapshot)
        assert snapshot.hash == documented_hash(nb.memories(status="approved", as_of=snapshot))
    finally:
        nb.close()


def test_recorded_replies_are_replayed_from_postgresql(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url, model_replay="record")
    try:
        nb.approve(propose(nb, "The deadline is Friday"))
        recorded = nb.chat("analyst", "When is it due?", new=True)
        nb.configure(model_replay="replay")
        again = nb.chat("analyst", "When is it due?", new=True)
        assert again.text == recorded.text and again.block_hash == recorded.block_hash
        assert nb.sql("SELECT count(*) AS n FROM model_recordings")["n"].item() >= 1
    finally:
        nb.close()
