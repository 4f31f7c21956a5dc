"""A failed extraction is visible and recoverable: the next reply says once that it
failed and why, and a retry with the setting fixed proposes what that exchange said."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from tests.helpers import cell, magics_project

DECIDED = "We decided to use DuckDB for the store."


@pytest.fixture
def keyless(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[npc_nb.Project]:
    """A project whose extraction model has no key; jobs run only on wait()."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    nb = npc_nb.open(
        project_dir,
        extraction_model="openai/gpt-4o-mini",
        extract_in_background=False,
        extraction_retry_delay=0,
    )
    yield nb
    nb.close()


def test_a_failed_extraction_is_told_once_and_a_retry_proposes_its_candidate(
    keyless: npc_nb.Project,
) -> None:
    nb = keyless
    first = nb.chat("analyst", DECIDED)
    assert first.warning() == ""
    assert nb.extraction.wait().failed == 1
    assert nb.review_queue().empty

    told = nb.chat("analyst", "What should we look at next?")
    warning = told.warning()
    assert "extraction of the previous exchange with analyst failed" in warning
    assert "OPENAI_API_KEY" in warning  # why
    assert "extraction_model='npc_nb/offline'" in warning  # the setting to change
    assert "nb.extraction.retry()" in warning  # how to retry
    assert "model='npc_nb/offline' to try" not in warning  # not chat's way round
    shown = told._repr_mimebundle_()
    assert warning in shown["text/plain"]
    assert 'class="npc-nb-notice"' in shown["text/html"]  # in plain sight, above the reply

    after = nb.chat("analyst", "And after that?")
    assert after.warning() == ""  # told once, not on the turn after

    nb.configure(extraction_model="npc_nb/offline")
    assert nb.extraction.retry() == 1
    nb.extraction.wait()
    assert DECIDED in list(nb.review_queue()["final_text"])


def test_several_failures_are_told_together_with_the_last_reason(
    keyless: npc_nb.Project,
) -> None:
    keyless.chat("analyst", "one")
    keyless.chat("analyst", "two")
    assert keyless.extraction.wait().failed == 2
    warning = keyless.chat("analyst", "three").warning()
    assert "2 earlier exchanges failed" in warning and "OPENAI_API_KEY" in warning


def test_a_job_that_fails_again_after_a_retry_is_told_again(keyless: npc_nb.Project) -> None:
    keyless.chat("analyst", DECIDED)
    keyless.extraction.wait()
    assert keyless.chat("analyst", "next").warning()
    keyless.extraction.cancel()  # the second exchange's job: not part of this story
    assert keyless.extraction.retry() == 1  # the key is still missing
    keyless.extraction.wait()
    assert "previous exchange" in keyless.chat("analyst", "again").warning()


def test_in_a_cell_the_notice_names_the_retry_magic(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    nb = magics_project(shell)
    nb.configure(
        extraction_model="openai/gpt-4o-mini", extract_in_background=False, extraction_retry_delay=0
    )
    cell(shell, f"%%npc analyst\n{DECIDED}")
    nb.extraction.wait()
    reply = cell(shell, "%%npc analyst\nWhat next?")
    assert "then %npc_retry extracts it again" in reply.warning()
    nb.extraction.cancel()
    cell(shell, "%npc_config extraction_model=npc_nb/offline")
    status = cell(shell, "%npc_retry")
    assert status.queued == 1
    nb.extraction.wait()
    assert DECIDED in list(nb.review_queue()["final_text"])


def test_retry_of_an_unknown_job_queues_nothing(keyless: npc_nb.Project) -> None:
    assert keyless.extraction.retry("no-such-job") == 0
