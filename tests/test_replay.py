"""Recorded model replies (``model_replay``): recorded at the gateway, replayed without
calling the provider, never a silent live call, and never an old reply for a changed
request. Chat turns, extraction and the model judge all follow the setting.

The model is the scripted one (``tests/fake_models.py``), registered through litellm's
real custom-provider hook, so a test can count the calls that reach the provider.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from npc_nb.errors import UnrecordedCallError
from npc_nb.models.recording import fingerprint
from tests import fake_models
from tests.helpers import cell, magics_project, propose

MODEL = "scripted/any"


@pytest.fixture(autouse=True)
def scripted() -> None:
    fake_models.install()


def test_a_recorded_reply_is_replayed_without_calling_the_model(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "The deadline is Friday"))
    nb.configure(model_replay="record", extraction_model="npc_nb/offline")
    fake_models.SCRIPT.append("It is due on Friday.\nAnything else?")
    recorded = nb.chat("analyst", "When is it due?", model=MODEL, new=True)
    assert len(fake_models.RECEIVED) == 1

    nb.configure(model_replay="replay")
    again = nb.chat("analyst", "When is it due?", model=MODEL, new=True)
    stream = nb.chat("analyst", "When is it due?", model=MODEL, new=True, stream=True)
    chunks = list(stream)
    assert len(fake_models.RECEIVED) == 1  # the provider was never called again
    assert again.text == recorded.text == "".join(chunks) == "It is due on Friday.\nAnything else?"
    assert len(chunks) == 2  # streamed as a model would, a line at a time
    assert again.block_hash == recorded.block_hash == stream.reply.block_hash
    stored = nb.sql("SELECT content FROM messages WHERE role = 'assistant'")["content"]
    assert stored.tolist() == [recorded.text] * 3  # each turn is stored as any other


def test_an_unrecorded_call_in_replay_mode_is_a_clear_error_naming_the_cell(
    shell: InteractiveShell,
) -> None:
    nb = magics_project(shell)
    nb.configure(model_replay="replay")
    with pytest.raises(UsageError) as raised:
        cell(shell, f"%%npc analyst --model {MODEL}\nWhen is it due?")
    message = str(raised.value)
    assert "no reply was recorded" in message and "%%npc analyst, cell [" in message
    assert "model_replay='record'" in message and "Nothing was sent" in message
    assert fake_models.RECEIVED == []  # never a silent live call
    with pytest.raises(UnrecordedCallError) as in_python:
        nb.chat("analyst", "When is it due?", model=MODEL)
    assert isinstance(in_python.value, npc_nb.ModelCallError)
    assert nb.sql("SELECT role FROM messages")["role"].tolist() == ["user", "user"]


def test_a_changed_memory_state_is_never_served_an_old_reply(nb: npc_nb.Project) -> None:
    nb.configure(model_replay="record", extraction_model="npc_nb/offline")
    fake_models.SCRIPT.append("Nothing is due.")
    nb.chat("analyst", "When is it due?", model=MODEL, new=True)
    nb.approve(propose(nb, "The deadline is Friday"))  # the memory block changes
    nb.configure(model_replay="replay")
    with pytest.raises(UnrecordedCallError, match="memory block"):
        nb.chat("analyst", "When is it due?", model=MODEL, new=True)


def test_the_fingerprint_covers_what_changes_the_answer_and_nothing_volatile() -> None:
    hi, block = [{"role": "user", "content": "hi"}], {"block_hash": "a"}

    def key(model: str = MODEL, messages: list = hi, extra: dict = block, **options: object) -> str:
        return fingerprint(model, messages, {"temperature": 0.2, **options}, extra)[0]

    base = key()
    assert key(timeout=9, num_retries=3) == key(metadata={"x": 1}) == base
    assert key(messages=[dict(hi[0])]) == base
    changed = {
        key(model="scripted/other"),
        key(messages=[{"role": "user", "content": "hi!"}]),
        key(temperature=0.3),
        key(extra={"block_hash": "b"}),
        key(api_base="http://localhost:1234"),
    }
    assert base not in changed and len(changed) == 5


def test_a_key_never_reaches_the_recording(nb: npc_nb.Project) -> None:
    nb.configure(model_replay="record", extraction_model="npc_nb/offline")
    fake_models.SCRIPT.append("ok")
    nb.chat("analyst", "hi", model=MODEL, api_key="sk-secret-123", temperature=0.1)
    nb.configure(model_replay="replay")
    again = nb.chat("analyst", "hi", model=MODEL, api_key="sk-other-456", temperature=0.1, new=True)
    assert again.text == "ok"
    saved = nb.sql("SELECT request, caller FROM model_recordings")
    assert (
        "sk-secret" not in saved["request"].item()
        and '"temperature":0.1' in saved["request"].item()
    )


def test_extraction_follows_the_setting_and_fails_clearly_when_unrecorded(
    project_dir: Path,
) -> None:
    nb = npc_nb.open(
        project_dir, extract_in_background=False, extraction_model=MODEL, model_replay="record"
    )
    said = "We decided to use DuckDB."
    try:
        answer = {"memories": [{"statement": "We use DuckDB.", "category": "decision"}]}
        fake_models.SCRIPT.append(json.dumps(answer))
        nb.chat("analyst", said, new=True)  # the offline model replies; recorded too
        nb.extraction.wait()
        assert len(fake_models.RECEIVED) == 1
        assert nb.review_queue()["final_text"].tolist() == ["We use DuckDB."]

        nb.configure(model_replay="replay")
        nb.chat("analyst", said, new=True)  # the same exchange: its candidates replayed
        nb.extraction.wait()
        assert len(fake_models.RECEIVED) == 1  # never called
        assert nb.reproposals()["proposed_text"].tolist() == ["We use DuckDB."]

        nb.reject(nb.review_queue()["id"].item())  # the prompt's examples change
        nb.chat("analyst", said, new=True)
        nb.extraction.wait()
        assert len(fake_models.RECEIVED) == 1
        jobs = nb.extraction.jobs()
        failed = jobs[jobs["status"] == "failed"]
        assert len(failed) == 1 and failed["attempts"].item() == 1  # never retried
        error = failed["error"].item()
        assert (
            "no reply was recorded" in error and "extraction of an exchange with analyst" in error
        )
    finally:
        nb.close()


def test_the_model_judge_follows_the_setting(project_dir: Path) -> None:
    nb = npc_nb.open(
        project_dir, matcher="model", match_model="npc_nb/offline", model_replay="record"
    )
    try:
        nb.approve(propose(nb, "The field season runs from March to May"))
        first = nb.add_candidate(
            "The field season runs March to May", category="fact", npc="analyst"
        )
        callers = nb.sql("SELECT caller FROM model_recordings")["caller"].tolist()
        assert "the model judge (matcher='model')" in callers

        nb.configure(model_replay="replay")
        again = nb.add_candidate(
            "The field season runs March to May", category="fact", npc="analyst"
        )
        assert (again.action, again.verdict, again.error) == (first.action, first.verdict, None)
        other = nb.add_candidate(
            "The field season runs from April to May", category="fact", npc="analyst"
        )
        assert other.queued and "no reply was recorded" in (other.error or "")
    finally:
        nb.close()


def test_a_rerun_s_variable_overrides_the_notebook_s_own_setting(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``npc-nb rerun`` forces the mode from outside: NPC_NB_RERUN wins over whatever
    the notebook's cells configure, and opening a project with it set is no error."""
    monkeypatch.setenv("NPC_NB_RERUN", "replay")
    nb = npc_nb.open(project_dir, model_replay="record", extraction_model="npc_nb/offline")
    try:
        with pytest.raises(UnrecordedCallError):  # forced replay: nothing recorded, no call
            nb.chat("analyst", "When is it due?", model=MODEL, new=True)
        assert fake_models.RECEIVED == []
        assert nb.status().model_replay == "replay"  # %npc_status says what calls follow

        monkeypatch.setenv("NPC_NB_RERUN", "live")
        nb.configure(model_replay="replay")
        fake_models.SCRIPT.append("Friday.")
        assert nb.chat("analyst", "When is it due?", model=MODEL, new=True).text == "Friday."
        assert len(fake_models.RECEIVED) == 1  # live: the model was called
        assert nb.sql("SELECT count(*) AS n FROM model_recordings")["n"].item() == 0

        monkeypatch.setenv("NPC_NB_RERUN", "sometimes")
        with pytest.raises(npc_nb.ConfigError, match="set it to replay or live"):
            nb.chat("analyst", "When is it due?", model=MODEL, new=True)
    finally:
        nb.close()
