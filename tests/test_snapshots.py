"""Snapshots: the memory state at a moment, read back exactly whatever is decided later.

A snapshot is taken, then the store changes in every way a reviewer or time can change
it (approvals, rejections, edits, undos, supersessions, approved updates, validity
windows set and passing); reading at the snapshot gives the very block it gave then,
byte for byte, and its hash is the documented one. ``nb.diff`` lists exactly what
changed in between, with the decisions that did it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from npc_nb._foundations.utc import utc_now
from tests.helpers import propose, wait_until


def documented_hash(frame: pd.DataFrame) -> str:
    """docs/reproducibility.md's algorithm, written out again from the docs."""

    def iso(value: object) -> object:
        return None if pd.isna(value) else pd.Timestamp(value).isoformat(timespec="microseconds")

    def plain(value: object) -> object:
        return None if pd.isna(value) else value

    digest = hashlib.sha256()
    for row in frame.sort_values("id").itertuples():
        line = {
            "id": row.id,
            "text": row.final_text,
            "scope": row.scope,
            "npc": plain(row.npc),
            "team": plain(row.team),
            "valid_from": iso(row.valid_from),
            "valid_to": iso(row.valid_to),
        }
        text = json.dumps(line, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest.update((text + "\n").encode("utf-8"))
    return digest.hexdigest()


def build_history(nb: npc_nb.Project) -> dict[str, str]:
    """A project with approved memories of every kind, in both stores: id by name."""
    ids = {
        "kept": propose(nb, "We use DuckDB for survey data, naïve café 𝔘𝔫𝔦"),
        "rejected": propose(nb, "The user prefers plots with large fonts"),
        "edited": propose(nb, "The ringing dataset is due Friday"),
        "undone": propose(nb, "Alpha is 0.05"),
        "superseded": propose(nb, "The lab meets on Tuesdays"),
        "expires": propose(nb, "The field season runs until May"),
        "window": propose(nb, "Keep station codes in upper case"),
        "team": propose(nb, "The team writes in British English", scope="team", team="lab"),
        "global": propose(nb, "The user's name is Ada", scope="global", npc=None),
        "pending": propose(nb, "Plot counts on a log scale"),
        "later": propose(nb, "Units are SI"),
    }
    for name in ("kept", "rejected", "edited", "undone", "superseded", "expires", "window"):
        nb.approve(ids[name])
    nb.approve(ids["team"])
    nb.approve(ids["global"])
    nb.set_validity(ids["window"], valid_from="2020-01-01", valid_to="2999-01-01")
    return ids


def change_everything(nb: npc_nb.Project, ids: dict[str, str]) -> None:
    """Every kind of later change: each would alter the block if read now."""
    nb.reject(ids["rejected"], reason="only for talks")
    nb.edit(ids["edited"], "The ringing dataset is due Monday")
    nb.undo()  # ... and the edit undone
    nb.edit(ids["edited"], "The ringing dataset is due Wednesday")
    nb.undo(by=None)
    nb.approve(ids["later"])
    nb.undo()  # an approval undone
    nb.approve(ids["later"])
    nb.supersede(ids["superseded"], "The lab meets on Thursdays")
    nb.set_validity(ids["window"], valid_to="2021-01-01")  # its window closes
    nb.approve(ids["pending"])
    nb.reject(ids["global"])  # the user's store too
    update = nb.add_candidate("Alpha is 0.01", category="fact", npc="analyst")
    if update.queued:
        nb.approve(update.memory_id)
    nb.reject(ids["undone"])
    nb.undo()
    nb.reject(ids["undone"])


def test_context_at_a_snapshot_is_byte_identical_after_every_kind_of_later_change(
    nb: npc_nb.Project,
) -> None:
    ids = build_history(nb)
    soon = utc_now() + timedelta(seconds=2)
    nb.set_validity(ids["expires"], valid_to=soon)  # the clock closes it, no decision
    blocks = {
        query: nb.context_block("analyst", team="lab", query=query) for query in (None, "dataset")
    }
    snapshot = nb.snapshot("submission-v1")
    approved_then = nb.memories(status="approved")

    change_everything(nb, ids)
    wait_until(lambda: utc_now() > soon, what="the validity window to close")

    now = nb.context("analyst", team="lab")
    assert now != blocks[None].text and "due Monday" not in now
    for query, then in blocks.items():
        for as_of in (snapshot, snapshot.id, "submission-v1"):
            again = nb.context_block("analyst", team="lab", query=query, as_of=as_of)
            assert again.text == then.text  # byte for byte
            assert again.hash == hashlib.sha256(then.text.encode("utf-8")).hexdigest()
            assert again.memory_ids == then.memory_ids and again.snapshot == snapshot.id
    assert "The field season runs until May" in blocks[None].text
    assert snapshot.memories == len(approved_then) == 9
    at_snapshot = nb.memories(status="approved", as_of=snapshot)
    assert sorted(at_snapshot["id"]) == sorted(approved_then["id"])
    assert snapshot.hash == documented_hash(at_snapshot) == documented_hash(approved_then)


def test_a_snapshot_is_exact_about_a_decision_in_the_same_microsecond(
    nb: npc_nb.Project,
) -> None:
    """Its events are counted, not timed: a decision stamped with the snapshot's very
    time (another kernel's clock) but committed after it is not in it."""
    memory = propose(nb, "The deadline is Friday")
    snapshot = nb.snapshot()
    nb.sql(
        "UPDATE memories SET status = 'human-approved', decided_at = ? WHERE id = ?",
        [snapshot.taken_at, memory],
        allow_write=True,
    )
    nb.sql(
        "INSERT INTO memory_events (seq, memory_id, occurred_at, actor, action, from_status, "
        "to_status, text_after, state_before) SELECT nextval('memory_event_seq'), id, ?, "
        "'other kernel', 'approve', 'pending_approval', 'human-approved', final_text, ? "
        "FROM memories WHERE id = ?",
        [snapshot.taken_at, json.dumps({"status": "pending_approval"}), memory],
        allow_write=True,
    )
    assert "Friday" in nb.context("analyst")
    assert nb.context("analyst", as_of=snapshot) == ""
    assert "Friday" in nb.context("analyst", as_of=snapshot.taken_at)  # a time includes it


def test_a_label_is_unique_in_a_project_and_never_a_command(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "A fact"))
    first = nb.snapshot("v1")
    with pytest.raises(npc_nb.ConfigError, match="already has a snapshot 'v1'"):
        nb.snapshot("v1")
    for label in ("now", "off", "2026-01-01", "  "):
        with pytest.raises(npc_nb.ConfigError):
            nb.snapshot(label)
    second = nb.snapshot()
    listed = nb.snapshots()
    assert list(listed["id"]) == [first.id, second.id]
    assert listed["label"].iloc[0] == "v1" and pd.isna(listed["label"].iloc[1])
    assert list(listed["memories"]) == [1, 1] and listed["hash"].iloc[0] == first.hash


def test_an_unknown_state_is_one_invalid_value_error_whichever_method(nb: npc_nb.Project) -> None:
    nb.snapshot("v1")
    with pytest.raises(
        npc_nb.InvalidValueError, match="no snapshot of this project has the id or label 'v2'.*v1"
    ):
        nb.context("analyst", as_of="v2")
    for read in (
        lambda: nb.memories(as_of="v2"),
        lambda: nb.graph.networkx(as_of="v2"),
        lambda: nb.metrics.approval_rate(as_of="v2"),
    ):
        with pytest.raises(npc_nb.InvalidValueError, match="no snapshot") as refused:
            read()
        assert (refused.value.what, refused.value.value) == ("as_of", "v2")
    with pytest.raises(npc_nb.InvalidValueError, match="no snapshot") as refused:
        npc_nb.open(nb.root, pin="v2")
    assert refused.value.what == "pin"


def test_diff_lists_exactly_the_changes_with_the_decisions_that_did_them(
    nb: npc_nb.Project,
) -> None:
    ids = build_history(nb)
    before = nb.snapshot("before")
    change_everything(nb, ids)
    after = nb.snapshot("after")
    nb.approve(propose(nb, "Something after both"))

    diff = nb.diff("before", "after")
    assert nb.diff(before, after.id).equals(diff)
    found = {
        (row.change, row.reason, row.text_before, row.text_after)
        for row in diff.fillna("").itertuples()
    }
    assert found == {
        ("removed", "rejected", "The user prefers plots with large fonts", ""),
        ("removed", "rejected", "Alpha is 0.05", ""),
        ("removed", "expired", "Keep station codes in upper case", ""),
        ("removed", "rejected", "The user's name is Ada", ""),
        ("changed", "edited", "The lab meets on Tuesdays", "The lab meets on Thursdays"),
        ("added", "approved", "", "Units are SI"),
        ("added", "approved", "", "Plot counts on a log scale"),
        ("added", "approved", "", "Alpha is 0.01"),
    }
    decided = diff.set_index("text_after")
    assert decided.loc["Units are SI", "action"] == "approve"
    assert decided.loc["Units are SI", "decided_by"] == "tester"
    assert diff["event_seq"].notna().all()
    assert nb.diff(after, after).empty
    assert "Something after both" in set(nb.diff(after)["text_after"])  # to now


def test_metrics_and_the_graph_as_of_a_snapshot_are_as_they_were(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "We use PostgreSQL for the archive"))
    nb.reject(propose(nb, "Plots use pie charts"))
    propose(nb, "Use DuckDB for analysis")
    rates_then = nb.metrics.approval_rate(group_by="npc")
    backlog_then = nb.metrics.backlog()
    snapshot = nb.snapshot("v1")
    pending = nb.review_queue()["id"].item()
    nb.approve(pending)
    nb.reject(nb.memories(status="approved")["id"].iloc[0])
    pd.testing.assert_frame_equal(nb.metrics.approval_rate(group_by="npc", as_of="v1"), rates_then)
    pd.testing.assert_frame_equal(nb.metrics.backlog(as_of=snapshot), backlog_then)
    assert nb.metrics.approval_rate()["decided"].item() == 3
    assert "concept:postgresql" in nb.graph.networkx(as_of="v1")
    assert "concept:postgresql" not in nb.graph.networkx()


def test_open_can_pin_to_a_snapshot_or_take_one(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir)
    nb.approve(propose(nb, "The deadline is Friday"))
    nb.snapshot("v1")
    nb.close()
    pinned = npc_nb.open(project_dir, pin="v1")
    pinned.approve(propose(pinned, "Units are SI"))
    assert "Units are SI" not in pinned.context("analyst")
    assert "Units are SI" in pinned.context("analyst", as_of=utc_now())
    pinned.configure(pin="now")
    assert "Units are SI" in pinned.context("analyst")
    assert pinned.settings.pin == pinned.snapshots()["id"].iloc[-1]
    pinned.configure(pin="off")
    assert pinned.settings.pin is None
    pinned.configure(pin=pinned.snapshots()["id"].iloc[0])
    assert "Units are SI" not in pinned.context("analyst")
    pinned.close()
