"""An audit's sample reviewed in the panel, with ``%npc_review --audit`` and with
``npc-nb review --audit``: only the sampled cards, blind (the sample's progress, never
a tally or the errors), the complete sample sends the reviewer to ``audit.result()``,
undo still works, and an unknown audit is an error that lists the audits."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from npc_nb.cli import main
from npc_nb.errors import ArgumentError
from npc_nb.review.panel.cards import static_summary_text
from tests.helpers import as_reviewer, cell, propose, status_of

BATCH = 40
TEAMS = ("morning", "evening", "night")
#: What a blind review never shows while the audit is open: a tally or an error count.
TALLY = re.compile(r"\d+ (approved|rejected|edited|deferred|errors?|wrong)", re.IGNORECASE)


def batch(nb: npc_nb.Project, count: int = BATCH) -> list[str]:
    """``count`` plain candidates (distinct, unflagged): a batch an audit takes whole."""
    return [
        propose(nb, f"Nest box {n + 1} was checked by the {TEAMS[n % 3]} team.")
        for n in range(count)
    ]


def audited(nb: npc_nb.Project, name: str = "spring") -> npc_nb.Audit:
    """A fixed-size audit of the batch (one look), its sample a dozen or so cards."""
    return nb.audit(tolerance=0.2, confidence=0.9, seed=3, looks=1, name=name)


def blind(text: str) -> bool:
    """Whether ``text`` says nothing a tally or an error count would."""
    return TALLY.search(text) is None


def test_the_panel_of_an_audit_shows_only_its_sample_blind(nb: npc_nb.Project) -> None:
    batch(nb)
    audit = audited(nb)
    sample = audit.pending()
    assert 0 < len(sample) < BATCH
    panel = nb.review(audit="spring", by="ada")
    seen = []
    for number in range(len(sample)):
        assert panel.session.current is not None
        seen.append(panel.session.current)
        assert f"{number} of {len(sample)} sampled cards decided" in panel.tally.value
        assert blind(panel.tally.value) and blind(panel.position.value)
        panel.press("r" if number % 4 == 0 else "a")
    assert seen == list(sample)  # the audit's order, nothing else
    end = panel.keys.card_html
    assert "The sample is complete: call audit.result()" in end
    assert f"{len(sample)} of {len(sample)} sampled cards decided" in panel.tally.value
    assert blind(end) and blind(panel.tally.value)
    assert blind(static_summary_text(panel.session.summary()))
    assert panel.approve_all.layout.display == "none"
    assert not blind(nb.review(by="ada").tally.value)  # an ordinary review's tally counts
    # Nothing but the sample was decided: the rest waits for audit.approve_rest().
    open_ids = set(nb.review_queue()["id"])
    assert len(open_ids) == BATCH - len(sample) and not open_ids & set(sample)


def test_undo_in_an_audit_review_brings_the_card_back_and_the_count_down(
    nb: npc_nb.Project,
) -> None:
    batch(nb)
    audit = audited(nb)
    first, second = audit.pending()[:2]
    panel = audit.review(by="ada")
    panel.press("r")
    assert panel.session.current == second
    assert f"1 of {len(audit.pending()) + 1} sampled cards decided" in panel.tally.value
    panel.press("u")
    assert panel.session.current == first and status_of(nb, first) == "pending_approval"
    assert "0 of" in panel.tally.value and blind(panel.tally.value)
    assert first in audit.pending()


def test_an_audit_review_takes_no_other_filter_and_no_approve_all(nb: npc_nb.Project) -> None:
    batch(nb)
    audited(nb)
    with pytest.raises(ArgumentError, match="leave out npc"):
        nb.review_session(audit="spring", npc="analyst")
    session = nb.review_session(audit="spring", by="ada")
    with pytest.raises(npc_nb.NpcError, match="approve_rest"):
        session.preview_all()
    assert session.automatic() == []


def test_a_card_proposed_after_the_audit_began_is_not_in_its_review(
    nb: npc_nb.Project,
) -> None:
    batch(nb)
    audit = audited(nb)
    late = propose(nb, "Nest box 99 was checked by the dawn team.")
    session = nb.review_session(audit="spring", by="ada")
    assert session.card_order() == list(audit.pending())
    assert late not in session.card_order()


def test_the_magic_opens_an_audit_review_and_names_the_audits_for_an_unknown_one(
    shell: InteractiveShell, project_dir: Path
) -> None:
    nb = npc_nb.open(project_dir)
    batch(nb)
    audit = audited(nb)
    panel = cell(shell, "%npc_review --audit spring --by ada")
    assert panel.session.card_order() == list(audit.pending())
    assert "sampled cards decided" in panel.tally.value and blind(panel.tally.value)
    with pytest.raises(UsageError, match="spring") as raised:
        cell(shell, "%npc_review --audit autumn")
    assert "autumn" in str(raised.value)
    with pytest.raises(UsageError, match="--npc"):
        cell(shell, "%npc_review --audit spring --npc analyst")
    nb.close()


def test_the_cli_reviews_an_audit_blind_and_says_when_the_sample_is_complete(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    batch(nb)
    sample = audited(nb).pending()
    keys = "r\nwrong box\n" + "a\n" * (len(sample) - 1) + "q\n"
    out = io.StringIO()
    argv = ["review", "--project", str(project_dir), "--audit", "spring", "--by", "ada"]
    assert main(argv, io.StringIO(keys), out) == 0
    said = out.getvalue()
    assert f"Audit spring: 0 of {len(sample)} sampled cards decided." in said
    assert "The sample is complete: call audit.result()" in said
    assert blind(said), said
    assert status_of(nb, sample[0]) == "human-rejected"
    assert len(nb.review_queue()) == BATCH - len(sample)


def test_the_cli_names_the_audits_for_an_unknown_one(nb: npc_nb.Project, project_dir: Path) -> None:
    batch(nb)
    audited(nb)
    out = io.StringIO()
    argv = ["review", "--project", str(project_dir), "--audit", "autumn"]
    assert main(argv, io.StringIO("q\n"), out) == 2
    assert "autumn" in out.getvalue() and "spring" in out.getvalue()


def test_a_deferred_sampled_card_keeps_the_sample_incomplete_and_the_review_says_so(
    nb: npc_nb.Project,
) -> None:
    batch(nb)
    audit = audited(nb)
    session = nb.review_session(audit="spring", by="ada")
    deferred = session.current
    session.decide(npc_nb.Defer(deferred))
    while session.current is not None:
        session.decide(npc_nb.Approve(session.current))
    said = str(session.summary())
    assert session.card_order() == []
    assert audit.pending() == (deferred,)
    assert "1 sampled card is not decided yet (deferred)" in said
    assert "The sample is complete" not in said and blind(said)


def test_in_independent_review_the_progress_counts_only_your_votes(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPC_NB_REVIEW_MODE", "independent")
    lab = npc_nb.open(project_dir)
    batch(lab)
    sample = audited(lab).pending(by="ada")
    bob = as_reviewer(lab, "bob")
    for memory_id in sample[:2]:
        bob.reject(memory_id, reason="bob's secret reason")
    ada = as_reviewer(lab, "ada")
    session = ada.review_session(audit="spring")
    assert session.card_order() == list(sample)
    assert str(session.audit_progress()) == (
        f"Audit spring: 0 of {len(sample)} sampled cards voted on by you."
    )
    while session.current is not None:
        session.decide(npc_nb.Approve(session.current))
    said = str(session.summary())
    assert f"{len(sample)} of {len(sample)} sampled cards voted on by you." in said
    assert "Your votes are in" in said and "complete" not in said
    assert "bob" not in said and blind(said)
    lab.close()


def test_after_an_extension_the_open_panel_refreshed_lists_the_next_looks_cards(
    nb: npc_nb.Project,
) -> None:
    batch(nb, 60)
    audit = nb.audit(tolerance=0.2, confidence=0.9, seed=3, looks=[10, 20, 30], name="grown")
    panel = audit.review(by="ada")
    first = list(audit.pending())
    for number in range(len(first)):
        panel.press("r" if number < 2 else "a")  # two errors in ten: the bound misses
    assert audit.result().status == "extendable"
    audit.extend(by="ada")
    following = list(audit.pending())
    assert following and not set(following) & set(first)
    assert panel.session.current is None  # opened before the extension: nothing to show
    panel.refresh()
    assert panel.session.current == following[0]
    assert "10 of 20 sampled cards decided" in panel.tally.value  # the look's whole sample
    assert blind(panel.tally.value)
    for _ in following:
        panel.press("a")
    assert "The sample is complete: call audit.result()" in panel.keys.card_html
