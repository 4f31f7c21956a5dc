"""Decisions are values with one path: frozen decision objects and one ``ReviewContext``
go through ``nb.apply``; ``nb.approve`` and the rest are thin conveniences over it, the
review panel and ``npc-nb review`` build the same values, and every decision returns a
``DecisionResult``. Approve-all is two calls of two types: a preview, then its approval."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import npc_nb
from npc_nb import (
    Adjudicate,
    Approve,
    ApproveAllPreview,
    DecisionResult,
    Defer,
    Edit,
    Reject,
    Requeue,
    ReviewContext,
    SetValidity,
    Skip,
    Supersede,
)
from tests.helpers import as_reviewer, propose, run_cli, status_of

LATER = datetime(2999, 1, 1, tzinfo=UTC)


@pytest.fixture(params=["duckdb", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def opened(backend: str, request: pytest.FixtureRequest, folder: Path, **settings: Any) -> Any:
    if backend == "postgresql":
        settings["store"] = request.getfixturevalue("postgres_url")
    return npc_nb.open(folder, **settings)


@pytest.fixture
def project(backend: str, request: pytest.FixtureRequest, project_dir: Path) -> Iterator[Any]:
    nb = opened(backend, request, project_dir)
    yield nb
    nb.close()


def _merged_variant(nb: npc_nb.Project) -> str:
    propose(nb, "The lab meets on Tuesdays.")
    outcome = nb.add_candidate("the lab meets on tuesdays", category="fact", npc="analyst")
    assert outcome.action == "merged", outcome
    return str(nb.reproposals()["id"].item())


#: Each card decision as a value and the status it leaves a pending card in.
CARD_DECISIONS = [
    (lambda m: Approve(m), "human-approved"),
    (lambda m: Reject(m, reason="not said"), "human-rejected"),
    (lambda m: Edit(m, "The cluster is called Orca-2"), "human-edited"),
    (lambda m: Defer(m, until=LATER), "deferred"),
    (lambda m: Skip(m), "pending_approval"),
]


@pytest.mark.parametrize(("make", "status"), CARD_DECISIONS)
def test_each_card_decision_applies_as_a_value(
    project: npc_nb.Project, make: Any, status: str
) -> None:
    card = propose(project, "The cluster is called Orca")
    result = project.apply(make(card), by="ada")
    assert isinstance(result, DecisionResult)
    assert result.reviewer == "ada"
    assert status_of(project, card) == status
    assert project.decisions(card)["action"].tolist()[-1] == result.decision


def test_revisions_apply_as_values(project: npc_nb.Project) -> None:
    card = propose(project, "The cluster is called Orca")
    project.apply(Approve(card))
    valid = project.apply(SetValidity(card, valid_from=None, valid_to=LATER))
    assert valid.decision == "set_validity"
    revised = project.apply(Supersede(card, "The cluster is called Orca-3"))
    assert status_of(project, card) == "superseded"
    assert status_of(project, revised.new_memory_id or "") == "human-edited"


def test_requeue_returns_a_decision_result(project: npc_nb.Project) -> None:
    variant = _merged_variant(project)
    result = project.requeue(variant, by="ada")
    assert isinstance(result, DecisionResult)
    assert result.reviewer == "ada"
    assert status_of(project, result.new_memory_id or "") == "pending_approval"
    with pytest.raises(npc_nb.DecisionError, match="already put back"):
        project.apply(Requeue(variant))


def test_in_independent_review_a_decision_value_is_a_vote_then_adjudicated(
    backend: str, request: pytest.FixtureRequest, project_dir: Path
) -> None:
    lab = opened(backend, request, project_dir, review_mode="independent")
    try:
        card = propose(lab, "Reviews happen on Fridays")
        first = as_reviewer(lab, "ada").apply(Approve(card))
        assert (first.decision, first.final) == ("vote", False)
        as_reviewer(lab, "bob").apply(Reject(card))
        assert status_of(lab, card) == "pending_approval"
        decided = as_reviewer(lab, "carol").apply(Adjudicate(card, vote=1))
        assert decided.final and status_of(lab, card) == "human-approved"
    finally:
        lab.close()


def test_decision_values_and_review_context_are_frozen() -> None:
    for value in (Approve("m1"), ReviewContext(by="ada")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.by = "bob"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Approve("m1").memory_id = "m2"  # type: ignore[misc]


def test_the_context_is_recorded_with_the_decision(nb: npc_nb.Project) -> None:
    card = propose(nb, "The printer is on floor 2")
    context = ReviewContext(by="ada", session_id="s-1", time_spent=2.5)
    nb.apply(Reject(card, reason="gone"), context=context)
    event = nb.decisions(card).iloc[-1]
    assert (event["reviewer"], event["review_session"], event["time_spent_ms"]) == (
        "ada",
        "s-1",
        2500,
    )
    with pytest.raises(npc_nb.InvalidValueError, match="time_spent"):
        ReviewContext(time_spent=-1)
    with pytest.raises(npc_nb.InvalidValueError, match="intent"):
        ReviewContext(intent="maybe")  # type: ignore[arg-type]


def test_a_context_shown_an_old_status_is_refused(nb: npc_nb.Project) -> None:
    card = propose(nb, "The printer is on floor 3")
    nb.approve(card)
    with pytest.raises(npc_nb.AlreadyDecidedError):
        nb.apply(Reject(card), context=ReviewContext(shown_status="pending_approval"))


def test_what_is_not_a_decision_is_refused_with_the_values_named(nb: npc_nb.Project) -> None:
    card = propose(nb, "The printer is on floor 4")
    for wrong in ("approve", {"approve": card}, None):
        with pytest.raises(npc_nb.NpcError, match="Approve"):
            nb.apply(wrong)  # type: ignore[arg-type]
    assert status_of(nb, card) == "pending_approval"
    assert not hasattr(nb, "decide")


def test_by_is_keyword_only_on_every_decision(nb: npc_nb.Project) -> None:
    card = propose(nb, "The printer is on floor 5")
    calls = [
        lambda: nb.approve(card, "ana"),  # type: ignore[misc]
        lambda: nb.reject(card, "ana"),  # type: ignore[misc]
        lambda: nb.skip(card, "ana"),  # type: ignore[misc]
        lambda: nb.edit(card, "new text", "ana"),  # type: ignore[misc]
        lambda: nb.defer(card, LATER, "ana"),  # type: ignore[misc]
        lambda: nb.apply(Approve(card), "ana"),  # type: ignore[misc]
        lambda: nb.undo("ana"),  # type: ignore[misc]
        lambda: nb.requeue("r1", "ana"),  # type: ignore[misc]
    ]
    for call in calls:
        with pytest.raises(TypeError):
            call()
    assert status_of(nb, card) == "pending_approval"


def test_decisions_lists_only_what_a_card_decision_can_be() -> None:
    assert npc_nb.DECISIONS == ("approve", "reject", "edit", "skip", "defer")


def test_approve_all_applies_exactly_its_preview(nb: npc_nb.Project) -> None:
    first = [propose(nb, f"batch fact number {n}") for n in range(3)]
    preview = nb.preview_approve_all(npc="analyst")
    assert isinstance(preview, ApproveAllPreview)
    assert preview.count == 3 and set(preview.ids) == set(first)
    assert {status_of(nb, m) for m in first} == {"pending_approval"}  # nothing written
    late = propose(nb, "a fact that arrived after the preview")
    result = nb.approve_all(preview, by="ada")
    assert isinstance(result, DecisionResult) and result.reviewer == "ada"
    assert sorted(result.memory_ids) == sorted(first)
    assert status_of(nb, late) == "pending_approval"
    with pytest.raises(TypeError):
        nb.approve_all()  # type: ignore[call-arg]
    with pytest.raises(npc_nb.NpcError, match="preview_approve_all"):
        nb.approve_all({"ids": [late]})  # type: ignore[arg-type]


def test_approve_all_refuses_a_preview_whose_cards_were_decided_since(
    nb: npc_nb.Project,
) -> None:
    cards = [propose(nb, f"stale fact number {n}") for n in range(2)]
    preview = nb.preview_approve_all()
    nb.reject(cards[0])
    with pytest.raises(npc_nb.DecisionError, match="preview"):
        nb.approve_all(preview)
    assert status_of(nb, cards[1]) == "pending_approval"


def _audit(nb: npc_nb.Project, memory_id: str) -> dict[str, Any]:
    row = nb.decisions(memory_id).iloc[-1].to_dict()
    keep = ("action", "from_status", "to_status", "reviewer")
    return {key: row[key] for key in keep} | {"in_session": row["review_session"] is not None}


def test_the_panel_and_the_cli_decide_as_apply_does(nb: npc_nb.Project, project_dir: Path) -> None:
    by_apply, by_panel, by_cli = (propose(nb, f"same path fact number {n}") for n in range(3))
    nb.apply(Approve(by_apply), context=ReviewContext(by="tester", session_id="s-apply"))
    panel = nb.review(npc="analyst")
    shown = panel.keys.card_id
    assert shown == by_panel
    panel.keys._handle_custom_msg({"type": "key", "key": "a", "card": shown}, [])
    nb.close()
    result = run_cli("review", cwd=project_dir, keys="a\nq\n")
    assert result.returncode == 0, result.stderr
    reopened = npc_nb.open(project_dir)
    try:
        assert _audit(reopened, by_panel) == _audit(reopened, by_apply)
        assert _audit(reopened, by_cli) == _audit(reopened, by_apply)
    finally:
        reopened.close()
