"""Conversation, extraction and analytics edge cases found in review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import npc_nb
from npc_nb import StreamScrubber, scrub_memory_tags
from tests import fake_models
from tests.conftest import propose


def test_a_tag_spliced_across_chunks_cannot_be_forged() -> None:
    scrubber = StreamScrubber()
    shown = scrubber.feed("ok <npc-<") + scrubber.feed("npc-memory>memory> done")
    shown += scrubber.finish()
    assert shown == scrub_memory_tags("ok <npc-<npc-memory>memory> done") == "ok  done"


def test_a_streamed_reply_is_stored_scrubbed(nb: npc_nb.Project) -> None:
    raw = "ok <npc-<npc-memory>memory> and </npc-memory<truncated/>> done"
    stream = nb.chat("analyst", "hi", stream=True, model="openai/gpt-4o-mini", mock_response=raw)
    shown = "".join(stream)
    stored = nb.sql("SELECT content FROM messages WHERE role = 'assistant'")["content"].item()
    assert "npc-memory" not in shown and "npc-memory" not in stored


def test_a_reply_stream_is_read_once(nb: npc_nb.Project) -> None:
    stream = nb.chat("analyst", "hi", stream=True)
    list(stream)
    with pytest.raises(npc_nb.NpcError, match="read once"):
        list(stream)
    assert nb.sql("SELECT count(*) AS n FROM messages")["n"].item() == 2


def test_a_failed_turn_is_kept_but_not_sent_again(nb: npc_nb.Project) -> None:
    nb.chat("analyst", "first question")
    with pytest.raises(npc_nb.ModelCallError):
        nb.chat(
            "analyst",
            "this call fails",
            model="openai/gpt-4o-mini",
            mock_response=Exception("down"),
        )
    reply = nb.chat("analyst", "third question")
    turns = [(m["role"], m["content"]) for m in reply.messages if m["role"] != "system"]
    assert [role for role, _ in turns] == ["user", "assistant", "user"]
    assert "this call fails" not in [content for _, content in turns]
    assert nb.sql("SELECT count(*) AS n FROM messages WHERE role = 'user'")["n"].item() == 3


def test_refused_items_are_named_on_the_job(project_dir: Path) -> None:
    fake_models.install()
    nb = npc_nb.open(project_dir, extraction_model="scripted/any")
    items = [
        {"statement": "x" * 3000, "category": "fact"},
        {"statement": "...", "category": "fact"},
        {"statement": "We use DuckDB.", "category": "decision"},
    ]
    fake_models.SCRIPT.append(json.dumps({"memories": items}))
    nb.chat("analyst", "We use DuckDB.")
    nb.extraction.wait(timeout=30)
    job = nb.extraction.jobs().iloc[0]
    assert (job["status"], job["candidates"]) == ("done", 1)
    assert "limit is 2,000" in job["error"] and "empty" in job["error"]


def test_a_job_whose_result_cannot_be_recorded_is_not_left_running(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npc_nb.store import jobs

    real_finish, calls = jobs.finish, []

    def flaky_finish(*args, **kwargs):
        calls.append(kwargs.get("status"))
        if len(calls) == 1:
            raise npc_nb.StoreLockedError("simulated: the store stayed locked")
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(jobs, "finish", flaky_finish)
    nb = npc_nb.open(project_dir)
    nb.chat("analyst", "We decided to use DuckDB.")
    status = nb.extraction.wait(timeout=30)
    assert status.running == 0 and status.queued == 0


def test_npc_sql_edge_cases(nb: npc_nb.Project) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "npc_nb")
    npc_nb.open(nb.root)
    literal = shell.run_line_magic("npc_sql", "SELECT 'costs $usd' AS s -- and $nothing")
    assert literal["s"].tolist() == ["costs $usd"]
    with pytest.raises(UsageError, match="Options go on a cell"):
        shell.run_line_magic("npc_sql", "--write DELETE FROM memories")
    with pytest.raises(UsageError, match="empty"):
        shell.run_line_magic("npc_sql", "-- only a comment")
    with pytest.raises(UsageError, match="read-only"):
        shell.run_line_magic("npc_sql", "EXPLAIN ANALYZE DELETE FROM memory_events")
    assert nb.sql("SELECT count(*) AS n FROM memory_events")["n"].item() == 0


def test_text_change_counts_characters_not_bytes(nb: npc_nb.Project) -> None:
    memory = propose(nb, "会議は月曜日です")
    nb.edit(memory, "会議は火曜日です")
    change = nb.sql("SELECT text_change FROM v_memories")["text_change"].item()
    assert change == pytest.approx(1 / 8)


def test_batch_approvals_count_batches(nb: npc_nb.Project) -> None:
    for n in range(4):
        propose(nb, f"batch fact number {n}")
    nb.approve_all()
    nb.approve_all(confirm=True, by="ada")
    (record,) = nb.metrics.reviewer_throughput().to_dict("records")
    assert (record["batch_approvals"], record["batch_approved_memories"]) == (1, 4)
    assert (record["cards"], record["active_minutes"]) == (0, 0.0)


def test_persona_names_and_unreadable_files(nb: npc_nb.Project, project_dir: Path) -> None:
    with pytest.raises(npc_nb.ConfigError):
        nb.npc("analyst\n", directive="x")
    team = project_dir / "npc_team"
    team.mkdir()
    (team / "critic.npc").write_bytes(
        "name: critic\nprimary_directive: caf\xe9\n".encode("latin-1")
    )
    with pytest.raises(npc_nb.ConfigError, match="not UTF-8"):
        nb.persona("critic")
