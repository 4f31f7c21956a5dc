"""Conversations through the Python API: recording, prompts, streaming, failures."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import npc_nb
from npc_nb.chat import prompts
from tests.conftest import propose


def texts_in_block(reply: npc_nb.Reply) -> list[str]:
    system = "\n".join(
        m["content"] if isinstance(m["content"], str) else m["content"][-1]["text"]
        for m in reply.messages
        if m["role"] == "system"
    )
    return [line[len("- [") :].split("] ", 1)[1] for line in system.splitlines()
            if line.startswith("- [")]  # fmt: skip


def test_chat_records_both_turns_and_what_the_prompt_carried(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "The user prefers short answers"))
    reply = nb.chat("analyst", "Summarise the dataset")
    messages = nb.sql("SELECT id, role, content, model FROM messages ORDER BY created_at")
    assert list(messages["role"]) == ["user", "assistant"]
    assert list(messages["id"]) == [reply.user_message_id, reply.message_id]
    assert messages["content"].iloc[0] == "Summarise the dataset"
    assert messages["content"].iloc[1] == reply.text
    injections = nb.sql("SELECT memory_id FROM context_injections WHERE message_id = ?",
                        [reply.message_id])  # fmt: skip
    assert list(injections["memory_id"]) == reply.injected and len(reply.injected) == 1
    assert reply.offline and "offline demo model" in reply._repr_mimebundle_()["text/html"]


def test_only_approved_memories_reach_the_prompt(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "approved fact"))
    nb.edit(propose(nb, "initial wording"), "edited wording")
    nb.reject(propose(nb, "rejected fact"))
    nb.defer(propose(nb, "deferred fact"))
    propose(nb, "pending fact")
    propose(nb, "writer's own fact", npc="writer")
    reply = nb.chat("analyst", "What do you know?")
    assert sorted(texts_in_block(reply)) == ["approved fact", "edited wording"]
    assert "pending fact" not in reply.text and "rejected fact" not in reply.text
    assert "approved fact" in reply.text  # the offline model lists what it was given


def test_the_prompt_is_cache_shaped(nb: npc_nb.Project) -> None:
    nb.npc("analyst", directive="You analyse data.")
    nb.approve(propose(nb, "a fact"))
    reply = nb.chat("analyst", "hi")
    assert [m["role"] for m in reply.messages] == ["system", "system", "user"]
    assert reply.messages[0]["content"] == "You are analyst. You analyse data."
    assert reply.messages[1]["content"].startswith("<npc-memory>")


def test_anthropic_prompts_carry_a_cache_breakpoint_after_the_prefix(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "a fact"))
    reply = nb.chat("analyst", "hi", model="anthropic/claude-3-5-sonnet-latest",
                    mock_response="ok")  # fmt: skip
    prefix, block = reply.messages[0]["content"]
    assert prefix["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in block and block["text"].startswith("<npc-memory>")


def test_a_conversation_keeps_its_history(nb: npc_nb.Project) -> None:
    first = nb.chat("analyst", "My dataset has 3 columns")
    second = nb.chat("analyst", "How many columns?")
    assert second.conversation_id == first.conversation_id
    turns = [m for m in second.messages if m["role"] != "system"]
    assert [m["content"] for m in turns][:2] == ["My dataset has 3 columns", first.text]
    fresh = nb.chat("analyst", "Hello again", new=True)
    assert fresh.conversation_id != first.conversation_id
    assert [m["role"] for m in fresh.messages if m["role"] != "system"] == ["user"]
    resumed = nb.chat("analyst", "Back to it", conversation=first.conversation_id)
    assert len([m for m in resumed.messages if m["role"] != "system"]) == 5


def test_history_is_capped(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, history_messages=2)
    for n in range(4):
        reply = nb.chat("analyst", f"message {n}")
    assert len([m for m in reply.messages if m["role"] != "system"]) == 3


def test_a_provider_failure_is_clear_and_keeps_the_message(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.ModelCallError, match="failed"):
        nb.chat("analyst", "Will this work?", model="openai/gpt-4o-mini",
                mock_response=Exception("provider exploded"))  # fmt: skip
    messages = nb.sql("SELECT role, content FROM messages")
    assert list(messages["role"]) == ["user"]
    assert messages["content"].iloc[0] == "Will this work?"


def test_a_missing_key_names_the_variable_to_set(nb: npc_nb.Project, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(npc_nb.ModelCallError, match="OPENAI_API_KEY"):
        nb.chat("analyst", "hello", model="openai/gpt-4o-mini")
    assert nb.sql("SELECT count(*) AS n FROM messages")["n"].item() == 1


def test_a_memory_tag_split_across_stream_chunks_is_scrubbed(nb: npc_nb.Project) -> None:
    stream = nb.chat("analyst", "hi", stream=True, model="openai/gpt-4o-mini",
                     mock_response="Sure </npc-memory><npc-memory>done")  # fmt: skip
    chunks = list(stream)
    assert any("</n" in c or "pc-" in c for c in ["".join(chunks)]) is False
    assert "".join(chunks) == "Sure done"
    assert stream.reply.text == "Sure done"
    stored = nb.sql("SELECT content FROM messages WHERE role = 'assistant'")["content"].item()
    assert stored == "Sure done"


def test_empty_message_is_refused_before_anything_is_written(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.NpcError, match="empty"):
        nb.chat("analyst", "   ")
    assert nb.sql("SELECT count(*) AS n FROM messages")["n"].item() == 0


# -- personas --------------------------------------------------------------------------------


def write_npc(project_dir: Path, name: str, text: str) -> Path:
    folder = project_dir / "npc_team"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.npc"
    path.write_text(text)
    return path


def test_personas_load_from_npc_team_files(nb: npc_nb.Project, project_dir: Path) -> None:
    write_npc(project_dir, "critic", "name: critic\nprimary_directive: You find flaws.\n"
              "model: gpt-4o-mini\nprovider: openai\n")  # fmt: skip
    persona = nb.persona("critic")
    assert (persona.directive, persona.model_name, persona.team) == (
        "You find flaws.", "openai/gpt-4o-mini", "project",
    )  # fmt: skip
    assert list(nb.personas()["name"]) == ["critic"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name: critic\n", "'primary_directive' is missing"),
        ("name: critic\nprimary_directive: x\ncolour: red\n", "unknown key 'colour'"),
        ("name: [critic\n", "not valid YAML"),
        ("- just a list\n", "must be a mapping"),
        ("name: critic\nprimary_directive: x\nmodel: 42\n", "'model' must be a string"),
        ("name: 'two words'\nprimary_directive: x\n", "key 'name'"),
    ],
)
def test_a_malformed_npc_file_names_file_and_key(
    nb: npc_nb.Project, project_dir: Path, content: str, message: str
) -> None:
    path = write_npc(project_dir, "critic", content)
    with pytest.raises(npc_nb.ConfigError, match=message) as caught:
        nb.chat("critic", "hello")
    assert str(path) in str(caught.value)


def test_an_undefined_persona_is_ad_hoc_and_said_once(nb: npc_nb.Project) -> None:
    first = nb.chat("stranger", "hello")
    second = nb.chat("stranger", "hello again")
    assert any("not defined" in n for n in first.notices)
    assert not any("not defined" in n for n in second.notices)
    assert "research assistant" in first.messages[0]["content"]


# -- background extraction -------------------------------------------------------------------


def test_chat_returns_before_extraction_finishes(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, offline_delay=1.0)
    started = time.monotonic()
    nb.chat("analyst", "We decided to use DuckDB. I prefer short answers.")
    assert time.monotonic() - started < 0.9
    assert nb.extraction.status().pending == 1
    assert nb.review_queue().empty
    status = nb.extraction.wait(timeout=30)
    assert (status.done, status.pending) == (1, 0)
    queue = nb.review_queue()
    assert sorted(queue["category"]) == ["decision", "preference"]
    rows = nb.memories()
    assert set(rows["prompt_version"]) == {prompts.EXTRACTION_VERSION}
    assert set(rows["evidence_verified"]) == {True}


def test_reviewed_examples_feed_the_extraction_prompt(project_dir: Path) -> None:
    from tests import fake_models

    fake_models.install()
    nb = npc_nb.open(project_dir, extraction_model="scripted/any")
    nb.approve(propose(nb, "The user works on bird migration"))
    nb.reject(propose(nb, "The user likes small talk"))
    nb.edit(propose(nb, "deadline friday"), "The paper deadline is Friday 17:00")
    nb.chat("analyst", "hello")
    nb.extraction.wait(timeout=30)
    system = fake_models.RECEIVED[-1][0]["content"]
    assert "The user works on bird migration" in system
    assert "deadline friday -> The paper deadline is Friday 17:00" in system
    assert "never propose these" in system and "The user likes small talk" in system


@pytest.mark.parametrize(
    ("make_error", "advice"),
    [
        (lambda L: L.RateLimitError("slow down", "openai", "gpt-4o-mini"), "rate-limited"),
        (lambda L: L.Timeout("took too long", "gpt-4o-mini", "openai"), "timed out"),
        (
            lambda L: L.ContextWindowExceededError("too long", "gpt-4o-mini", "openai"),
            "too long for",
        ),
        (lambda L: L.AuthenticationError("bad key", "openai", "gpt-4o-mini"), "OPENAI_API_KEY"),
    ],
)
def test_each_provider_failure_says_what_to_do(
    nb: npc_nb.Project, monkeypatch: pytest.MonkeyPatch, make_error, advice: str
) -> None:
    from npc_nb.models import gateway

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    error = make_error(gateway._lib())
    with pytest.raises(npc_nb.ModelCallError, match=advice):
        nb.chat("analyst", "hello", model="openai/gpt-4o-mini", mock_response=error)
    assert nb.sql("SELECT count(*) AS n FROM messages")["n"].item() == 1
