"""A typo in a filter is an error that lists what exists, never an empty result that
reads as "nothing there": categories, scopes, statuses, personas, metric groupings, in
Python, in the magics and on the command line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from npc_nb.cli import main
from tests.helpers import cell, propose


@pytest.mark.parametrize(
    ("call", "suggestion"),
    [
        (lambda nb: nb.review_queue(category="decisions"), "decision"),
        (lambda nb: nb.review_queue(scope="proj"), "project"),
        (lambda nb: nb.memories(status="aproved"), "approved"),
        (lambda nb: nb.preview_approve_all(category="preferences"), "preference"),
        (lambda nb: nb.review_session(category="Fact"), "fact"),
        (lambda nb: nb.graph.networkx(category="constraints"), "constraint"),
        (lambda nb: nb.metrics.approval_rate(group_by="weak"), "week"),
        (lambda nb: nb.metrics.backlog(period="dya"), "day"),
    ],
)
def test_a_typo_in_a_closed_set_names_the_valid_values_and_the_closest(
    nb: npc_nb.Project, call, suggestion: str
) -> None:
    with pytest.raises(npc_nb.InvalidValueError) as raised:
        call(nb)
    message = str(raised.value)
    assert f"Did you mean {suggestion!r}?" in message
    assert "Use one of:" in message and suggestion in message.split("Use one of:")[1]
    assert isinstance(raised.value, npc_nb.NpcError) and isinstance(raised.value, ValueError)


def test_a_value_far_from_every_valid_one_lists_them_without_a_guess(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.InvalidValueError) as raised:
        nb.review_queue(category="zzz")
    assert "Did you mean" not in str(raised.value)
    assert all(category in str(raised.value) for category in npc_nb.CATEGORIES)


def test_valid_filters_still_filter(nb: npc_nb.Project) -> None:
    propose(nb, "We decided to use DuckDB", category="decision")
    propose(nb, "The user prefers tea", category="preference")
    assert list(nb.review_queue(category="decision")["category"]) == ["decision"]
    assert len(nb.review_queue(scope="npc", npc="analyst")) == 2
    assert nb.memories(status="approved").empty


def test_a_persona_filter_must_name_a_persona_that_exists(nb: npc_nb.Project) -> None:
    propose(nb, "We decided to use DuckDB", npc="analyst")
    nb.npc("critic", directive="You question every claim.")  # defined, nothing stored yet
    assert nb.review_queue(npc="critic").empty
    with pytest.raises(npc_nb.InvalidValueError) as raised:
        nb.review_queue(npc="analist")
    assert "Did you mean 'analyst'?" in str(raised.value)
    assert "Use one of: analyst, critic." in str(raised.value)
    for call in (
        lambda: nb.memories(npc="nobody"),
        lambda: nb.preview_approve_all(npc="nobody"),
        lambda: nb.review_session(npc="nobody"),
        lambda: nb.automatic_outcomes(npc="nobody"),
        lambda: nb.graph.frames(npc="nobody"),
    ):
        with pytest.raises(npc_nb.InvalidValueError, match="Unknown persona 'nobody'"):
            call()


def test_a_mistyped_persona_is_not_offered_back_as_a_choice(nb: npc_nb.Project) -> None:
    propose(nb, "We decided to use DuckDB", npc="analyst")  # ad hoc, with a memory
    reply = nb.chat("analsyt", "What did we pick?")  # a typo: answered, and told so
    (notice,) = reply.notices
    assert "analsyt is not defined" in notice and "Did you mean analyst?" in notice
    with pytest.raises(npc_nb.InvalidValueError) as raised:
        nb.review_queue(npc="analist")
    assert str(raised.value) == (
        "Unknown persona 'analist'. Did you mean 'analyst'? Use one of: analyst."
    )
    assert nb.memories(npc="analsyt").empty  # talked to: a real name, nothing remembered
    nb.chat("writer", "We decided to submit to Ibis.")
    nb.extraction.wait()  # the writer now has a memory: listed from now on
    with pytest.raises(npc_nb.InvalidValueError, match=r"Use one of: analyst, writer\.$"):
        nb.memories(npc="nobody")


def test_with_no_persona_anywhere_the_error_says_there_is_none(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.InvalidValueError, match="there is no persona yet"):
        nb.review_queue(npc="analyst")


def test_a_persona_talked_to_is_known(nb: npc_nb.Project) -> None:
    nb.chat("scout", "hello")  # ad hoc: no definition, no memory, but a conversation
    assert nb.review_queue(npc="scout").empty


def test_npc_review_with_a_mistyped_category_is_a_usage_error(shell: InteractiveShell) -> None:
    for line in ("%npc_review --category decisions", "%npc_review --list --category decisions"):
        with pytest.raises(UsageError, match="Did you mean 'decision'"):
            cell(shell, line)
    with pytest.raises(UsageError, match="Did you mean 'fact'"):
        cell(shell, "%npc_graph --category facts")


def test_the_command_line_review_refuses_a_mistyped_category(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    propose(nb, "a candidate, so the store exists")
    out = io.StringIO()
    argv = ["review", "--project", str(project_dir), "--category", "decisions"]
    assert main(argv, io.StringIO(""), out) == 2
    assert "Did you mean 'decision'?" in out.getvalue()
