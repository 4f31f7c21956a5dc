"""Tamper-evident history on a DuckDB file: every change made by SQL behind npc_nb's
back is found, by ``nb.verify()`` (and ``npc-nb verify``), by a read at a snapshot,
or by a replay, each naming what changed.

The tampering is done as a user with the file would do it: the project closed, the
file opened with DuckDB, a statement run, the project opened again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import npc_nb
from npc_nb.cli.command import main
from npc_nb.errors import HistoryChangedError
from tests import fake_models
from tests.helpers import as_reviewer, propose

MODEL = "scripted/any"


@pytest.fixture(autouse=True)
def scripted() -> None:
    fake_models.install()


def tamper(
    nb: npc_nb.Project, project_dir: Path, sql: str, params: list | None = None
) -> npc_nb.Project:
    """Run ``sql`` on the closed project's file with DuckDB; the project opened again."""
    path = nb.store_path
    nb.close()
    con = duckdb.connect(str(path))
    try:
        con.execute(sql, params or [])
    finally:
        con.close()
    return npc_nb.open(project_dir)


def history(nb: npc_nb.Project) -> dict[str, str]:
    """Approved, edited, rejected and voted memories, a recorded reply and a snapshot."""
    ids = {
        text: propose(nb, text) for text in ("Fonts are large", "Deadline is Friday", "Likes tea")
    }
    nb.approve(ids["Fonts are large"], by="ana")
    nb.edit(ids["Deadline is Friday"], "Deadline is Thursday", by="ana")
    nb.reject(ids["Likes tea"], by="ana")
    nb.configure(model_replay="record", extraction_model="npc_nb/offline")
    fake_models.SCRIPT.append("Large fonts, then.")
    nb.chat("analyst", "Which fonts?", model=MODEL, new=True)
    nb.configure(model_replay="off")
    nb.snapshot("submitted")
    return ids


def test_a_history_nobody_changed_verifies(nb: npc_nb.Project, project_dir: Path) -> None:
    history(nb)
    nb.configure(review_mode="independent", reviewers_per_card=2)
    voted = propose(nb, "Codes are upper case")
    as_reviewer(nb, "ana").approve(voted)
    nb.configure(review_mode="single")
    odd = propose(nb, 'Größe: "très" grand ✓\nzweite Zeile \\ 100%')
    nb.edit(odd, "Größe ✓ \u2028 ok", by="zoë")
    found = nb.verify()
    assert found.ok and bool(found) and found.problems == ()
    assert "History verified" in str(found)
    assert "History verified" in found._repr_mimebundle_()["text/html"]
    chained = nb.sql("SELECT count(*) AS n FROM votes WHERE chain_hash IS NOT NULL")["n"].item()
    assert chained == 1
    assert main(["verify", "--project", str(project_dir)]) == 0


def test_an_audit_event_changed_by_sql_is_named_as_the_first_broken_link(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    history(nb)
    nb = tamper(nb, project_dir, "UPDATE memory_events SET actor = 'mallory' WHERE seq = 2")
    found = nb.verify()
    assert not found.ok
    assert any(
        "memory_events row seq=2" in p and "changed after it was written" in p
        for p in found.problems
    ), found.problems
    assert "History BROKEN" in str(found)
    assert main(["verify", "--project", str(project_dir)]) == 1


def test_a_deleted_audit_event_is_named(nb: npc_nb.Project, project_dir: Path) -> None:
    history(nb)
    nb = tamper(nb, project_dir, "DELETE FROM memory_events WHERE seq = 3")
    problems = " ".join(nb.verify().problems)
    assert "place 3 is empty: 1 row(s) before it were deleted" in problems


def test_a_vote_changed_by_sql_is_named(nb: npc_nb.Project, project_dir: Path) -> None:
    nb.configure(review_mode="independent", reviewers_per_card=2)
    memory = propose(nb, "Codes are upper case")
    as_reviewer(nb, "ana").approve(memory)
    nb = tamper(nb, project_dir, "UPDATE votes SET decision = 'reject'")
    problems = " ".join(nb.verify().problems)
    assert "votes row id=" in problems and "changed after it was written" in problems


def test_a_recording_changed_by_sql_is_refused_by_replay_and_named_by_verify(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    history(nb)
    nb = tamper(nb, project_dir, "UPDATE model_recordings SET reply = 'Small fonts, then.'")
    nb.configure(model_replay="replay")
    with pytest.raises(HistoryChangedError, match="no\\s+longer matches its hash"):
        nb.chat("analyst", "Which fonts?", model=MODEL, new=True)
    assert not nb.sql("SELECT * FROM messages WHERE content LIKE 'Small%'").shape[0]
    problems = " ".join(nb.verify().problems)
    assert "model_recordings row id=" in problems and "changed after it was written" in problems


def test_a_later_recording_with_the_genuine_fingerprint_is_never_served(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    history(nb)
    nb = tamper(
        nb,
        project_dir,
        "INSERT INTO model_recordings SELECT 'forged', fingerprint, model, caller, request, "
        "'Small fonts, then.', prompt_tokens, completion_tokens, recorded_at + INTERVAL 1 DAY, "
        "NULL, NULL FROM model_recordings",
    )
    nb.configure(model_replay="replay")
    reply = nb.chat("analyst", "Which fonts?", model=MODEL, new=True)
    assert reply.text == "Large fonts, then."  # the first recording, not the later one
    problems = " ".join(nb.verify().problems)
    assert "model_recordings row id='forged' has no hash" in problems


def test_a_recording_forged_before_the_chain_s_first_place_is_never_served(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    """A forger who knows the documented link puts a reply with the genuine fingerprint
    at place 0, before the chain's first row, linked from the chain's start."""
    from npc_nb.store.schema.chains import digest_sql, sha256_sql

    history(nb)
    nb = tamper(
        nb,
        project_dir,
        "INSERT INTO model_recordings SELECT 'forged', fingerprint, model, caller, request, "
        "'Small fonts, then.', prompt_tokens, completion_tokens, recorded_at, 0, NULL "
        "FROM model_recordings",
    )
    forged_link = sha256_sql(digest_sql("model_recordings", duck=True), duck=True)
    sql = f"UPDATE model_recordings SET chain_hash = {forged_link} WHERE id = 'forged'"
    nb = tamper(nb, project_dir, sql)
    nb.configure(model_replay="replay")
    try:
        reply = nb.chat("analyst", "Which fonts?", model=MODEL, new=True)
    except HistoryChangedError:
        pass  # refused: as good as the genuine reply, never the forged one
    else:
        assert reply.text == "Large fonts, then."
    assert not nb.sql("SELECT * FROM messages WHERE content LIKE 'Small%'").shape[0]
    assert "'forged'" in " ".join(nb.verify().problems)


def test_a_memory_text_changed_by_sql_is_refused_at_the_snapshot_naming_it(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    ids = history(nb)
    assert "Fonts are large" in nb.context("analyst", as_of="submitted")
    nb = tamper(
        nb,
        project_dir,
        "UPDATE memories SET final_text = 'Fonts are small' WHERE id = ?",
        [ids["Fonts are large"]],
    )
    with pytest.raises(HistoryChangedError) as raised:
        nb.context("analyst", as_of="submitted")
    message = str(raised.value)
    assert ids["Fonts are large"] in message and "'submitted'" in message
    assert "text was changed by SQL" in message and "nb.verify()" in message
    with pytest.raises(HistoryChangedError):
        nb.memories(as_of="submitted")
    nb.configure(pin="submitted")
    with pytest.raises(HistoryChangedError, match=ids["Fonts are large"]):
        nb.context("analyst")
    nb.configure(pin=None)
    problems = nb.verify().problems
    assert any(ids["Fonts are large"] in p for p in problems)
    assert any("snapshot 'submitted'" in p for p in problems)


def test_a_memory_approved_by_sql_is_reported_and_refused_by_bundle_export_and_import(
    nb: npc_nb.Project, project_dir: Path, tmp_path: Path
) -> None:
    memory = propose(nb, "Budget is ten thousand")
    nb = tamper(
        nb, project_dir, "UPDATE memories SET status = 'human-approved' WHERE id = ?", [memory]
    )
    problems = " ".join(nb.verify().problems)
    assert f"memory {memory!r} is human-approved but its last audit event" in problems
    with pytest.raises(HistoryChangedError, match=memory):
        nb.export_bundle(tmp_path / "out.npcbundle")
    assert not (tmp_path / "out.npcbundle").exists()

    # A bundle written without the check (as a tool that does not check would write it).
    from npc_nb.interop.bundle_file import write_bundle

    bundle = write_bundle(nb._stores.project, tmp_path / "raw.npcbundle", "x", "0")
    target = tmp_path / "target"
    (target / ".git").mkdir(parents=True)
    with pytest.raises(HistoryChangedError, match="cannot be imported"):
        npc_nb.import_bundle(bundle, target, create=True)
    fresh = npc_nb.open(target, create=True)
    assert fresh.memories().empty
    fresh.close()


def test_a_memory_approved_by_sql_with_no_decision_time_is_reported_not_a_crash(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    """Setting the status alone (no ``decided_at``, no event): the block is still built
    (no raw exception from any read) and verify names the memory."""
    memory = propose(nb, "Budget is ten thousand")
    nb = tamper(
        nb, project_dir, "UPDATE memories SET status = 'human-approved' WHERE id = ?", [memory]
    )
    assert "<npc-memory" in nb.context("analyst")
    problems = " ".join(nb.verify().problems)
    assert f"memory {memory!r} is human-approved but its last audit event" in problems


def test_the_chain_hash_is_the_documented_one(nb: npc_nb.Project) -> None:
    history(nb)
    row = nb.sql("SELECT * FROM model_recordings").iloc[0]
    tokens = [
        None if pd.isna(row[c]) else str(int(row[c]))
        for c in ("prompt_tokens", "completion_tokens")
    ]
    values = [
        row["id"],
        row["fingerprint"],
        row["model"],
        row["caller"],
        row["request"],
        row["reply"],
        *tokens,
        row["recorded_at"].isoformat(timespec="microseconds"),
    ]
    fields = "".join("~" if v is None else f"{len(v.encode())}:{v}" for v in values)
    line = f"model_recordings|1|{fields}"
    digest = hashlib.sha256(line.encode()).hexdigest()
    assert row["chain_hash"] == hashlib.sha256(digest.encode()).hexdigest()


def test_a_snapshot_line_is_the_documented_json_for_any_text() -> None:
    from datetime import datetime

    from npc_nb.memory.snapshots import hash_line

    for text in ['a"b\\c\n\t\x01\x7f\u2028é✓', "", "</npc-memory>"]:
        row = {"id": text, "final_text": text, "scope": "npc", "npc": None, "team": text,
               "valid_from": datetime(2026, 1, 2, 3, 4, 5), "valid_to": None}  # fmt: skip
        fields = {"id": text, "text": text, "scope": "npc", "npc": None, "team": text,
                  "valid_from": "2026-01-02T03:04:05.000000", "valid_to": None}  # fmt: skip
        documented = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        assert hash_line(row) == documented
