"""Audited batches in independent review, on a DuckDB file: the sample is decided by
votes (a sampled card counts once its votes agree or an adjudicator decides it), each
reviewer's ``pending()`` lists the sampled cards they have not voted on, and
``approve_rest`` is a sign-off: the batch is approved only when as many distinct
reviewers as the policy asks have signed off, by the last sign-off, as one batch whose
reason names the signers.

Each reviewer records from a Project of their own (``as_reviewer``), as from their own
kernel; the batch is small (60 cards, tolerance 0.2) so the sample is small.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import npc_nb
from tests.audit_flow import plain_cards, statuses
from tests.helpers import as_reviewer

TOLERANCE = 0.2


@pytest.fixture
def lab(project_dir: Path) -> Iterator[npc_nb.Project]:
    project = npc_nb.open(project_dir, review_mode="independent")
    yield project
    project.close()


def vote_all(nb: npc_nb.Project, ids: tuple[str, ...], *, reject: tuple[str, ...] = ()) -> None:
    for memory_id in ids:
        if memory_id in reject:
            nb.reject(memory_id)
        else:
            nb.approve(memory_id)


def steps(nb: npc_nb.Project) -> list[tuple[str, str]]:
    frame = nb.sql("SELECT step, actor FROM audit_steps ORDER BY occurred_at, id")
    return list(zip(frame["step"], frame["actor"], strict=True))


def test_the_rest_is_approved_by_the_last_of_the_sign_offs_the_policy_asks_for(
    lab: npc_nb.Project,
) -> None:
    cards = plain_cards(lab, 60)
    audit = lab.audit(tolerance=TOLERANCE, looks=1, seed=3)
    sampled = audit.pending()
    ada, bob = as_reviewer(lab, "ada"), as_reviewer(lab, "bob")
    vote_all(ada, ada.get_audit(audit.name).pending())
    assert ada.get_audit(audit.name).pending() == ()  # ada voted on every sampled card
    assert audit.pending(by="bob") == sampled  # bob has not
    assert audit.result().status == "reviewing"  # one vote settles nothing
    vote_all(bob, bob.get_audit(audit.name).pending())
    assert audit.result().status == "approvable"
    rest = [memory_id for memory_id in cards if memory_id not in sampled]

    first = ada.get_audit(audit.name).approve_rest()
    assert (first.decision, first.final, first.changes) == ("sign_off", False, ())
    assert "1 of 2" in str(first)
    assert set(statuses(lab, rest).values()) == {"pending_approval"}  # not yet
    assert audit.result().status == "approvable"
    with pytest.raises(npc_nb.AuditError, match="ada signed off already"):
        ada.get_audit(audit.name).approve_rest()

    batch = bob.get_audit(audit.name).approve_rest()
    assert batch.decision == "approve_all" and sorted(batch.memory_ids) == sorted(rest)
    assert set(statuses(lab, rest).values()) == {"human-approved"}
    assert audit.result().status == "approved"
    reasons = set(lab.decisions().query("action == 'approve_all'")["reason"])
    assert len(reasons) == 1 and "signed off by ada, bob" in reasons.pop()
    assert steps(lab) == [("sign_off", "ada"), ("sign_off", "bob"), ("approve_rest", "bob")]


def test_a_sampled_card_counts_once_settled_and_an_adjudicated_rejection_is_an_error(
    lab: npc_nb.Project,
) -> None:
    plain_cards(lab, 60)
    audit = lab.audit(tolerance=TOLERANCE, looks=1)
    sampled = audit.pending()
    disputed = sampled[0]
    vote_all(as_reviewer(lab, "ada"), sampled)
    vote_all(as_reviewer(lab, "bob"), sampled, reject=(disputed,))
    waiting = audit.result()  # the disputed card waits for its adjudication
    assert (waiting.status, waiting.errors) == ("reviewing", None)
    assert waiting.reviewed == len(sampled) - 1
    assert audit.pending(by="ada") == () and audit.pending(by="bob") == ()
    with pytest.raises(npc_nb.AuditError, match="not decided yet"):
        as_reviewer(lab, "ada").get_audit(audit.name).approve_rest()
    as_reviewer(lab, "carol").reject(disputed)  # carol did not vote: the adjudication
    settled = audit.result()
    assert (settled.reviewed, settled.errors) == (len(sampled), 1)
    assert settled.bound == audit.plan.bound(1, len(sampled))


def test_three_reviewers_per_card_need_three_sign_offs(project_dir: Path) -> None:
    nb = npc_nb.open(project_dir, review_mode="independent", reviewers_per_card=3)
    try:
        cards = plain_cards(nb, 60)
        audit = nb.audit(tolerance=TOLERANCE, looks=1)
        sampled = audit.pending()
        names = ("ada", "bob", "carol")
        for name in names:
            vote_all(as_reviewer(nb, name), sampled)
        assert audit.result().status == "approvable"
        for name in names[:2]:
            as_reviewer(nb, name).get_audit(audit.name).approve_rest()
        rest = [memory_id for memory_id in cards if memory_id not in sampled]
        assert set(statuses(nb, rest).values()) == {"pending_approval"}
        last = as_reviewer(nb, "carol").get_audit(audit.name).approve_rest()
        assert sorted(last.memory_ids) == sorted(rest)
        assert "signed off by ada, bob, carol" in nb.decisions(rest[0])["reason"].iloc[-1]
    finally:
        nb.close()


def test_after_the_batch_is_undone_it_needs_every_sign_off_again(lab: npc_nb.Project) -> None:
    cards = plain_cards(lab, 60)
    audit = lab.audit(tolerance=TOLERANCE, looks=1)
    sampled = audit.pending()
    ada, bob = as_reviewer(lab, "ada"), as_reviewer(lab, "bob")
    for reviewer in (ada, bob):
        vote_all(reviewer, sampled)
    ada.get_audit(audit.name).approve_rest()
    bob.get_audit(audit.name).approve_rest()
    bob.undo()  # the batch, as one step
    rest = [memory_id for memory_id in cards if memory_id not in sampled]
    assert set(statuses(lab, rest).values()) == {"pending_approval"}
    assert audit.result().status == "approvable"
    again = ada.get_audit(audit.name).approve_rest()  # a sign-off of its own, not the batch
    assert again.decision == "sign_off" and again.changes == ()
    assert set(statuses(lab, rest).values()) == {"pending_approval"}
    bob.get_audit(audit.name).approve_rest()
    assert set(statuses(lab, rest).values()) == {"human-approved"}


def test_a_sign_off_in_another_reviewers_name_is_refused(lab: npc_nb.Project) -> None:
    plain_cards(lab, 60)
    audit = lab.audit(tolerance=TOLERANCE, looks=1)
    for name in ("ada", "bob"):
        vote_all(as_reviewer(lab, name), audit.pending(by=name))
    ada = as_reviewer(lab, "ada")
    with pytest.raises(npc_nb.DecisionError, match="names another reviewer"):
        ada.get_audit(audit.name).approve_rest(by="bob")
    assert steps(lab) == []


def test_the_result_says_who_signed_off_and_how_many_sign_offs_are_needed(
    lab: npc_nb.Project,
) -> None:
    plain_cards(lab, 60)
    audit = lab.audit(tolerance=TOLERANCE, looks=1)
    for name in ("ada", "bob"):
        vote_all(as_reviewer(lab, name), audit.pending(by=name))
    before = audit.result()
    assert (before.signed_off, before.sign_offs_needed) == ((), 2)
    assert "0 of the 2 sign-offs" in before.summary
    as_reviewer(lab, "ada").get_audit(audit.name).approve_rest()
    after = audit.result()
    assert after.status == "approvable" and after.signed_off == ("ada",)
    assert "1 of the 2 sign-offs (ada)" in after.summary
