"""Attacks on audited batches from the user's seat: a card a person deferred while the
audit ran, a sampled approval undone after the bound was met, a second kernel
approving the rest first, a hostile audit name, and a plan asked with NumPy integers.

Each test states a promise of docs/audits.md or docs/audit-workflow.md and tries to
break it through the public API on a real DuckDB project folder.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

import npc_nb
from tests.audit_flow import decide_sample, plain_cards, statuses

#: The fixed design (one look): a sample of 12 of 60 settles the batch at 20%.
FIXED = {"tolerance": 0.2, "looks": 1}


def test_a_card_deferred_while_the_audit_runs_is_never_batch_approved(
    nb: npc_nb.Project,
) -> None:
    cards = plain_cards(nb, 60)
    audit = nb.audit(**FIXED, seed=3)
    unsampled = [memory_id for memory_id in cards if memory_id not in audit.pending()]
    deferred = unsampled[0]
    # A person deferred it; by the time the rest is approved the deferral is due.
    nb.defer(deferred, until=datetime.now(UTC) - timedelta(seconds=1))
    decide_sample(nb, audit)
    assert audit.result().rest == len(unsampled) - 1
    batch = audit.approve_rest(by="grace")
    assert deferred not in batch.memory_ids
    assert statuses(nb, [deferred]) == {deferred: "deferred"}


def test_undoing_a_sampled_approval_after_the_bound_was_met_refuses_approve_rest(
    nb: npc_nb.Project,
) -> None:
    cards = plain_cards(nb, 60)
    audit = nb.audit(**FIXED)
    decide_sample(nb, audit)
    assert audit.result().status == "approvable"
    nb.undo()  # the last sampled approval: the look is no longer complete
    result = audit.result()
    assert (result.status, result.errors, result.bound) == ("reviewing", None, None)
    with pytest.raises(npc_nb.AuditError, match="not decided"):
        audit.approve_rest(by="grace")
    sampled = audit.plan.looks[0]
    unsampled = [memory_id for memory_id in cards if memory_id not in audit.pending()]
    assert len(unsampled) == 60 - 1 and len(audit.pending()) == 1 <= sampled
    assert "human-approved" in set(statuses(nb, unsampled).values())  # the sample's others
    assert audit.result().rest == 60 - sampled
    assert audit.result().approved == 0


def test_a_second_kernel_approving_the_rest_first_leaves_one_batch(
    nb: npc_nb.Project,
) -> None:
    plain_cards(nb, 60)
    audit = nb.audit(**FIXED)
    decide_sample(nb, audit)
    other = npc_nb.open(nb.store_path.parent)
    try:
        first = other.get_audit(audit.name).approve_rest(by="bob")
    finally:
        other.close()
    with pytest.raises(npc_nb.AuditError, match="approved its rest already"):
        audit.approve_rest(by="grace")
    batches = nb.decisions().query("action == 'approve_all'")["batch_id"].unique()
    assert list(batches) == [first.batch_id]


@pytest.mark.parametrize("name", ["two\nlines", "red \x1b[31mtext", "tab\there", "nul\x00"])
def test_an_audit_name_with_control_characters_is_refused(nb: npc_nb.Project, name: str) -> None:
    plain_cards(nb, 20)
    with pytest.raises(npc_nb.InvalidValueError, match="printable"):
        nb.audit(**FIXED, name=name)
    assert nb.audits().empty


def test_an_html_audit_name_is_shown_as_text(nb: npc_nb.Project) -> None:
    plain_cards(nb, 20)
    audit = nb.audit(**FIXED, name="<img src=x onerror=alert(1)>")
    shown = audit._repr_mimebundle_()["text/html"]
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
    with pytest.raises(npc_nb.InvalidValueError) as refused:
        nb.get_audit("missing")
    assert "<img src=x onerror=alert(1)>" in str(refused.value)  # plain text, one line
    assert "\n" not in str(refused.value)


def test_a_plan_takes_numpy_whole_numbers_as_looks() -> None:
    assert (
        npc_nb.plan_audit(1000, looks=np.int64(1)).looks == npc_nb.plan_audit(1000, looks=1).looks
    )
    sizes = [np.int64(60), np.int64(120)]
    assert npc_nb.plan_audit(1000, looks=sizes).looks == (60, 120)


def test_a_seed_beyond_what_the_record_holds_is_refused_and_nothing_recorded(
    nb: npc_nb.Project,
) -> None:
    plain_cards(nb, 20)
    with pytest.raises(npc_nb.InvalidValueError, match="seed"):
        nb.audit(**FIXED, seed=2**63)
    assert nb.audits().empty
    largest = nb.audit(**FIXED, seed=2**63 - 1)
    assert largest.result().seed == 2**63 - 1


def test_a_batch_approval_leaves_out_the_cards_another_open_audit_holds(
    nb: npc_nb.Project,
) -> None:
    """Otherwise the first audit's batch approval would decide sampled cards of the
    second, which would count them as reviewed and correct though nobody looked."""
    analysts = plain_cards(nb, 60, npc="analyst")
    plain_cards(nb, 60, npc="critic")
    first = nb.audit(npc="analyst", **FIXED, name="first")
    second = nb.audit(**FIXED, name="second", seed=2)  # overlaps the first's batch
    both = set(first.pending()) & set(second.pending())  # a person decides these
    held = [i for i in analysts if i in second.pending() and i not in both]
    assert held  # the second's sample holds cards of the first's unsampled rest
    decide_sample(nb, first)
    batch = first.approve_rest(by="grace")
    assert not set(batch.memory_ids) & set(held)
    assert set(statuses(nb, held).values()) == {"pending_approval"}
    assert second.result().reviewed == len(both)


def test_a_sampled_card_approved_by_an_ordinary_approve_all_is_no_correct_judgment(
    nb: npc_nb.Project,
) -> None:
    """An approve-all in ordinary review while the sample waits decides it unseen: the
    audit must not then state a bound as if the sample had been reviewed."""
    plain_cards(nb, 60)
    audit = nb.audit(**FIXED)
    sample = audit.result().sample
    nb.approve_all(preview=nb.preview_approve_all())
    result = audit.result()
    assert result.errors == sample and not result.meets
    assert result.status == "failed"
    with pytest.raises(npc_nb.AuditError):
        audit.approve_rest(by="grace")


def test_a_hostile_name_already_in_the_store_is_shown_escaped_in_errors(
    nb: npc_nb.Project,
) -> None:
    """Names are checked when an audit starts, but a bundle can bring older audits: an
    error listing the known names must not hand a terminal their escapes."""
    from npc_nb.store.memories import audit_rows

    record = {
        "name": "red \x1b[31mtext\nline", "started_at": datetime(2026, 12, 7, 10),
        "started_by": "someone", "npc": None, "category": None, "conversation_id": None,
        "stratify": False, "tolerance": 0.2, "confidence": 0.95, "seed": 0,
        "population": 1, "looks": [1], "thresholds": [0], "nominal_confidence": 0.95,
        "method": "fixed",
    }  # fmt: skip
    audit_rows.insert_audit(nb._memory.stores.project, record, [])
    with pytest.raises(npc_nb.InvalidValueError) as refused:
        nb.get_audit("missing")
    said = str(refused.value)
    assert "\x1b" not in said and "\n" not in said
    assert "\\x1b[31mtext\\nline" in said


def test_an_audit_whose_sample_was_the_whole_batch_does_not_offer_an_undo(
    nb: npc_nb.Project,
) -> None:
    plain_cards(nb, 1)
    audit = nb.audit()
    decide_sample(nb, audit)
    assert list(audit.approve_rest(by="grace").memory_ids) == []
    summary = audit.result().summary
    assert "nb.undo()" not in summary and "nothing was left to approve" in summary


def test_an_empty_approve_rest_from_a_racing_kernel_does_not_hide_the_batch(
    nb: npc_nb.Project,
) -> None:
    """Two kernels calling approve_rest at once: the one that finds the rest just
    approved records an empty step after the batch (as its row is written here)."""
    from npc_nb.store.memories import audit_rows

    plain_cards(nb, 60)
    audit = nb.audit(**FIXED)
    decide_sample(nb, audit)
    batch = audit.approve_rest(by="one")
    step = {
        "audit_id": audit.id, "occurred_at": datetime.now(UTC).replace(tzinfo=None),
        "actor": "two", "step": "approve_rest", "look": 1, "sample": 12, "errors": 0,
        "bound": 0.18, "batch_id": None, "reviewer_role": None,
    }  # fmt: skip
    audit_rows.add_audit_step(nb._memory.stores.project, step)
    result = audit.result()
    assert (result.status, result.approved) == ("approved", len(batch.memory_ids))
    assert "nb.undo() reverts it" in result.summary
