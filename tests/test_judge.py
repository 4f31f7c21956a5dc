"""The model judge by default when there is a model (``matcher="auto"``): chosen by the
settings, asked once per candidate for all its neighbours, cached per pair, run on the
extraction worker (a chat cell never waits for it), falling back to the offline matcher
when it fails, and accounted for in ``nb.metrics.matching()`` and ``%npc_status``.

The model is scripted through litellm's custom-provider hook (``tests/fake_models.py``):
never a live model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import npc_nb
from tests import fake_models
from tests.fake_models import JUDGE_SCRIPT, JUDGED, Gate, judge_answer
from tests.helpers import PATIENCE


@pytest.fixture
def judged(project_dir: Path) -> Iterator[npc_nb.Project]:
    """A project whose chat model is the scripted one: ``auto`` makes it the judge."""
    fake_models.install()
    nb = npc_nb.open(project_dir, model="scripted/any", extraction_retry_delay=0)
    yield nb
    nb.close()


def add(nb: npc_nb.Project, text: str, **fields: object) -> npc_nb.CandidateOutcome:
    fields.setdefault("category", "fact")
    fields.setdefault("npc", "analyst")
    return nb.add_candidate(text, **fields)


@pytest.mark.parametrize("model", [None, "npc_nb/offline"])
def test_auto_is_the_offline_matcher_without_a_provider_model(
    project_dir: Path, model: str | None
) -> None:
    nb = npc_nb.open(project_dir, model=model)
    assert nb.settings.matcher == "auto"
    nb.approve(add(nb, "We use DuckDB for the store.").memory_id)
    outcome = add(nb, "Note: we use DuckDB for the store")
    assert (outcome.action, outcome.matcher) == ("reinforced", "offline")
    assert "offline (auto: no provider model is configured)" in str(nb.status())
    nb.close()


def test_auto_asks_the_configured_model_and_its_same_stands(judged: npc_nb.Project) -> None:
    kept = add(judged, "The user studies bird migration.")
    judged.approve(kept.memory_id)
    JUDGE_SCRIPT.append(judge_answer("same"))
    outcome = add(judged, "The user researches how birds migrate.")  # few words in common
    assert (outcome.action, outcome.memory_id) == ("reinforced", kept.memory_id)
    assert outcome.matcher == "model:scripted/any"
    assert JUDGED == [
        {"candidate": "The user researches how birds migrate.",
         "existing": ["The user studies bird migration."]}
    ]  # fmt: skip


def test_match_model_is_preferred_over_the_chat_model(project_dir: Path) -> None:
    fake_models.install()
    nb = npc_nb.open(project_dir, model="npc_nb/offline", match_model="scripted/judge")
    nb.approve(add(nb, "The user studies bird migration.").memory_id)
    JUDGE_SCRIPT.append(judge_answer("same"))
    assert add(nb, "The user researches how birds migrate.").matcher == "model:scripted/judge"
    nb.close()


def test_one_call_judges_all_of_a_candidates_neighbours(judged: npc_nb.Project) -> None:
    for text in ("The lab meets on Mondays.", "The lab meets in room 4.", "The lab meets weekly."):
        judged.approve(add(judged, text).memory_id)
    JUDGED.clear()  # the second and third were judged against those before them
    JUDGE_SCRIPT.append(judge_answer("different", "different", "different"))
    outcome = add(judged, "Lab meetings start at nine.")
    assert outcome.queued
    assert len(JUDGED) == 1 and len(JUDGED[0]["existing"]) == 3


def test_a_verdict_is_asked_once_per_pair(judged: npc_nb.Project) -> None:
    judged.approve(add(judged, "The lab uses DuckDB.", scope="project").memory_id)
    JUDGE_SCRIPT.append(judge_answer("same"))
    first = add(judged, "Our lab works with DuckDB.", npc="ada")
    again = add(judged, "Our lab works with DuckDB.", npc="bob")  # another persona: judged
    assert first.action == again.action == "reinforced"
    assert len(JUDGED) == 1  # the second judgement came from the cache: no call
    costs = judged.reproposals().sort_values("recorded_at")[["match_calls", "match_tokens"]]
    assert costs.values.tolist() == [[1, 120], [0, 0]]


def test_the_guards_still_apply_to_the_judge(judged: npc_nb.Project) -> None:
    old = add(judged, "The learning rate is 0.01.")
    judged.reject(old.memory_id)
    JUDGE_SCRIPT.append(judge_answer("same"))
    outcome = add(judged, "The learning rate is -0.01.")
    assert (outcome.action, outcome.verdict) == ("queued", "update")
    assert "sign: 0.01 → -0.01" in outcome.differs


@pytest.mark.parametrize(
    "failure",
    [RuntimeError("the provider is down"), "no JSON at all", judge_answer("same", "same")],
    ids=["raises", "not JSON", "wrong count"],
)
def test_a_failing_judge_falls_back_to_the_offline_matcher_recorded(
    judged: npc_nb.Project, failure: object
) -> None:
    kept = add(judged, "We use DuckDB for the store.")
    judged.approve(kept.memory_id)
    JUDGE_SCRIPT.append(failure)
    outcome = add(judged, "Note: we use DuckDB for the store")
    assert (outcome.action, outcome.memory_id, outcome.matcher) == (
        "reinforced",
        kept.memory_id,
        "offline",
    )
    assert "model:scripted/any judge failed" in outcome.error
    assert outcome.error.endswith("judged by the offline matcher")
    row = judged.reproposals().iloc[-1]
    assert row["match_error"] == outcome.error and row["match_calls"] == 1
    frame = judged.metrics.matching(group_by=())
    assert (frame["failures"].item(), frame["calls"].item()) == (1, 1)
    assert "1 failure(s)" in str(judged.status())


def test_a_judge_without_its_key_falls_back_at_once(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    nb = npc_nb.open(project_dir, model="openai/gpt-4o-mini")
    nb.reject(add(nb, "The batch size is 32.").memory_id)
    outcome = add(nb, "Note: the batch size is 32")
    assert (outcome.action, outcome.matcher) == ("suppressed", "offline")
    assert "OPENAI_API_KEY" in outcome.error
    nb.close()


def test_the_judge_runs_on_the_extraction_worker_never_in_the_cell(
    judged: npc_nb.Project,
) -> None:
    judged.approve(add(judged, "The user studies bird migration.").memory_id)
    extracted = {"statement": "The user researches how birds migrate.", "category": "fact",
                 "evidence_quote": "I research how birds migrate"}  # fmt: skip
    fake_models.SCRIPT.extend(["Storks fly far.", f'{{"memories": [{_json(extracted)}]}}'])
    gate = Gate(judge_answer("same"))  # refuses to answer in the test's (the cell's) thread
    JUDGE_SCRIPT.append(gate)
    try:
        reply = judged.chat("analyst", "I research how birds migrate. Tell me about storks.")
        assert isinstance(reply, npc_nb.Reply)  # the turn is done ...
        assert gate.entered.wait(timeout=PATIENCE)  # ... while the judge is held in its call
        assert not gate.finished.is_set()
    finally:
        gate.open()
    judged.extraction.wait(timeout=PATIENCE)
    row = judged.reproposals().iloc[-1]
    assert (row["outcome"], row["matcher"], row["match_calls"]) == (
        "reinforced",
        "model:scripted/any",
        1,
    )


def test_a_direct_add_candidate_waits_for_the_judge(judged: npc_nb.Project) -> None:
    # Not a chat cell: the caller asked for this candidate's outcome, so it is judged
    # before add_candidate returns (docs/matching.md says so).
    judged.approve(add(judged, "The user studies bird migration.").memory_id)
    JUDGE_SCRIPT.append(judge_answer("same"))
    assert add(judged, "The user researches how birds migrate.").action == "reinforced"
    assert JUDGED and not JUDGE_SCRIPT


def test_metrics_report_calls_tokens_latency_and_failures(judged: npc_nb.Project) -> None:
    judged.approve(add(judged, "The user studies bird migration.").memory_id)
    JUDGE_SCRIPT.extend([judge_answer("same"), judge_answer("different")])
    add(judged, "The user researches how birds migrate.")
    add(judged, "The user studies bird migration in Norway and Chile.")
    frame = judged.metrics.matching(group_by="outcome").set_index("outcome")
    assert frame.loc["reinforced", ["judged", "calls", "tokens", "failures"]].tolist() == [
        1,
        1,
        120,
        0,
    ]
    assert frame.loc["queued", ["judged", "calls", "tokens"]].tolist() == [1, 1, 120]
    assert (frame["latency_ms"] > 0).all()
    assert frame["neighbour_recall"].isna().all()  # no labels: nothing to measure it by


def test_neighbour_recall_is_measured_where_labels_exist(judged: npc_nb.Project) -> None:
    judged.approve(add(judged, "The user studies bird migration.").memory_id)
    add(judged, "The lab meets on Mondays.")
    JUDGE_SCRIPT.extend([judge_answer("same", "different"), judge_answer("different", "different")])
    add(judged, "The user researches how birds migrate.")  # its fact's memory is shown
    add(judged, "The user keeps a pet parrot.")  # a new fact: nothing to find
    labels = pd.DataFrame(
        {
            "text": ["The user studies bird migration.", "The user researches how birds migrate.",
                     "The lab meets on Mondays.", "The user keeps a pet parrot."],
            "fact": ["birds", "birds", "meetings", "parrot"],
        }
    )  # fmt: skip
    frame = judged.metrics.matching(group_by=(), labels=labels)
    assert frame[["recall_n", "recall_found"]].values.tolist() == [[1, 1]]
    assert frame["neighbour_recall"].item() == 1.0


def test_status_names_the_judge_and_its_work(judged: npc_nb.Project) -> None:
    judged.approve(add(judged, "The user studies bird migration.").memory_id)
    JUDGE_SCRIPT.append(judge_answer("same"))
    add(judged, "The user researches how birds migrate.")
    lines = str(judged.status()).splitlines()
    line = next(text for text in lines if text.startswith("matching:"))
    assert line == (
        "matching:  model:scripted/any judge (the offline matcher if it fails) · 1 call(s), "
        "120 tokens, 0 failure(s)"
    )


def _json(item: dict) -> str:
    import json

    return json.dumps(item)
