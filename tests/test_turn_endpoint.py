"""A turn's endpoint follows the turn: its extraction goes where the turn went (or to the
configured extraction model), and its key is never stored, in the store, a job, an error
or a log. A job whose key is gone fails clearly and runs again only when it is given."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import litellm
import pandas as pd
import pytest

import npc_nb
from npc_nb.models import gateway

KEY = "sk-turn-secret-0123456789"
BASE = "http://127.0.0.1:9/v1"
CALLS: list[dict[str, Any]] = []
EXTRACTED = '{"memories": [{"statement": "We decided to use DuckDB.", "category": "decision"}]}'


class RecordingModel(litellm.CustomLLM):
    """Answers chat turns and extraction prompts, recording where each call went."""

    def completion(self, *args: Any, **kwargs: Any) -> Any:
        CALLS.append({"api_base": kwargs.get("api_base"), "api_key": kwargs.get("api_key")})
        system = str(kwargs["messages"][0]["content"])
        if "FAIL WITH THE KEY" in str(kwargs["messages"][-1]["content"]):
            raise RuntimeError(f"provider rejected key {kwargs.get('api_key')}")
        if "FAIL WITH THE BASE" in str(kwargs["messages"][-1]["content"]):
            message = f"no answer from {kwargs.get('api_base')}"  # a provider's words, shown
            raise litellm.BadRequestError(message=message, model="m", llm_provider="recording")
        extracting = "memory extraction" in system
        response = kwargs["model_response"]
        response.choices[0].message.content = EXTRACTED if extracting else "Noted."
        return response


@pytest.fixture(autouse=True)
def recording_provider() -> None:
    gateway._lib()
    litellm.custom_provider_map = [
        *[p for p in litellm.custom_provider_map if p["provider"] != "recording"],
        {"provider": "recording", "custom_handler": RecordingModel()},
    ]
    CALLS.clear()


def _store_bytes(nb: npc_nb.Project) -> bytes:
    nb.close()
    folder = nb.store_path.parent
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())


def test_extraction_goes_to_the_turns_endpoint_with_its_key(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, extract_in_background=False)
    nb.chat("analyst", "We decided to use DuckDB.", model="recording/m", api_base=BASE, api_key=KEY)
    assert nb.extraction.wait().done == 1
    assert CALLS == [{"api_base": BASE, "api_key": KEY}] * 2
    assert list(nb.review_queue()["final_text"]) == ["We decided to use DuckDB."]
    job = nb.extraction.jobs().iloc[0]
    assert BASE in job["endpoint"] and KEY not in job["endpoint"]
    assert KEY.encode() not in _store_bytes(nb)


def test_a_configured_extraction_model_is_called_at_its_own_endpoint(project_dir: Path) -> None:
    nb = npc_nb.open(
        project_dir, extract_in_background=False, extraction_model="recording/extractor"
    )
    nb.chat("analyst", "We decided to use DuckDB.", model="recording/m", api_base=BASE, api_key=KEY)
    nb.extraction.wait()
    assert CALLS[1] == {"api_base": None, "api_key": None}
    assert pd.isna(nb.extraction.jobs().iloc[0]["endpoint"])


def test_a_job_whose_key_is_gone_fails_clearly_and_runs_when_the_key_is_given(
    project_dir: Path,
) -> None:
    first = npc_nb.open(project_dir, extract_in_background=False)
    first.chat("analyst", "We decided to use DuckDB.", model="recording/m", api_key=KEY)
    first.close()
    CALLS.clear()
    restarted = npc_nb.Project(first.root, npc_nb.load_settings(extract_in_background=False))
    status = restarted.extraction.wait()
    assert status.failed == 1 and CALLS == []  # no call without the key, no retry loop
    error = restarted.extraction.jobs().iloc[0]["error"]
    assert "api_key" in error and "retry" in error and KEY not in error
    # retried without the key, it fails again, as clearly, and is still kept
    assert restarted.extraction.retry() == 1
    assert restarted.extraction.wait().failed == 1 and CALLS == []
    assert "api_key" in restarted.extraction.jobs().iloc[0]["error"]
    assert restarted.extraction.retry(api_key=KEY) == 1
    assert restarted.extraction.wait().done == 1
    assert CALLS == [{"api_base": None, "api_key": KEY}]
    assert list(restarted.review_queue()["final_text"]) == ["We decided to use DuckDB."]
    assert KEY.encode() not in _store_bytes(restarted)


def test_a_provider_error_never_shows_the_key(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, extract_in_background=False)
    with pytest.raises(npc_nb.ModelCallError) as failed:
        nb.chat("analyst", "FAIL WITH THE KEY", model="recording/m", api_key=KEY)
    assert KEY not in str(failed.value)
    assert failed.value.__cause__ is None and failed.value.__suppress_context__
    assert KEY not in repr(failed.value.args)
    assert os.environ.get("OPENAI_API_KEY") != KEY


PASSWORD = "base-pass-0123456789"
QUERY_KEY = "query-key-0123456789"
#: An endpoint with credentials in every place a URL carries them.
SECRET_BASE = f"http://ada:{PASSWORD}@127.0.0.1:9/v1?api_key={QUERY_KEY}&x=1#token={QUERY_KEY}"


def test_an_endpoints_credentials_are_never_stored(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, extract_in_background=False)
    nb.chat("analyst", "We decided to use DuckDB.", model="recording/m", api_base=SECRET_BASE)
    assert nb.extraction.wait().done == 1
    assert [call["api_base"] for call in CALLS] == [SECRET_BASE] * 2  # the turn, its extraction
    assert list(nb.review_queue()["final_text"]) == ["We decided to use DuckDB."]
    stored = nb.sql("SELECT endpoint, secret_options FROM extraction_jobs").iloc[0]
    assert stored["endpoint"] == '{"api_base": "http://127.0.0.1:9/v1"}'
    assert list(stored["secret_options"]) == ["api_base"]
    assert not {PASSWORD, QUERY_KEY} & {*str(nb.extraction.jobs().to_dict())}
    store = _store_bytes(nb)
    assert PASSWORD.encode() not in store and QUERY_KEY.encode() not in store


def test_a_job_whose_endpoint_credentials_are_gone_says_how_to_give_them(
    project_dir: Path,
) -> None:
    first = npc_nb.open(project_dir, extract_in_background=False)
    first.chat("analyst", "We decided to use DuckDB.", model="recording/m", api_base=SECRET_BASE)
    first.close()
    CALLS.clear()
    restarted = npc_nb.Project(first.root, npc_nb.load_settings(extract_in_background=False))
    assert restarted.extraction.wait().failed == 1 and CALLS == []  # never the bare URL
    job = restarted.extraction.jobs().iloc[0]
    assert "api_base=" in job["error"] and "never stores credentials" in job["error"]
    assert f"retry({job['id']!r}, api_base='http://user:password@127.0.0.1:9/v1')" in job["error"]
    assert PASSWORD not in job["error"] and QUERY_KEY not in job["error"]
    assert restarted.extraction.retry(job["id"], api_base=SECRET_BASE) == 1
    assert restarted.extraction.wait().done == 1
    assert CALLS == [{"api_base": SECRET_BASE, "api_key": None}]
    assert PASSWORD.encode() not in _store_bytes(restarted)


def test_a_provider_error_never_shows_the_endpoints_credentials(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, extract_in_background=False)
    with pytest.raises(npc_nb.ModelCallError) as failed:
        nb.chat("analyst", "FAIL WITH THE BASE", model="recording/m", api_base=SECRET_BASE)
    message = str(failed.value)
    assert "127.0.0.1:9" in message  # still says where it went
    assert PASSWORD not in message and QUERY_KEY not in message
    assert PASSWORD not in repr(failed.value.args)


def test_a_streamed_turn_never_shows_its_credentials(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, extract_in_background=False)
    stream = nb.chat("analyst", "Hello.", api_base=SECRET_BASE, api_key=KEY, stream=True)
    assert "".join(stream)
    shown = repr(stream.turn)
    assert PASSWORD not in shown and KEY not in shown and "analyst" in shown
