"""Reproducible notebooks: a pinned kernel injects the pinned block, every ``%%npc``
output carries what it was built on, ``npc_nb.provenance()`` reads that back from a
saved notebook, and a notebook run again under ``%npc_pin`` and ``model_replay`` after
the store changed gives the very same outputs (and without the pin, does not).

The notebooks are executed by nbclient in a real kernel (ipykernel), as Jupyter would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from tests.helpers import cell, magics_project, propose
from tests.saved_notebooks import executed, notebook


def test_a_pinned_kernel_s_turns_inject_the_pinned_block(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = magics_project(shell)
    friday = propose(nb, "The deadline is Friday")
    nb.approve(friday)
    cell(shell, "%npc_pin now")
    assert "memory pinned to snapshot" in capsys.readouterr().out
    snapshot = nb.snapshots()["id"].item()
    nb.approve(propose(nb, "Units are SI"))
    nb.reject(friday)

    for source in ("%%npc analyst\nWhat do we know?", "%%npc analyst --no-stream\nAnd now?"):
        reply = cell(shell, source)
        query = source.split("\n", 1)[1]
        pinned = nb.context_block("analyst", query=query, as_of=snapshot)
        assert reply.messages[1]["content"] == pinned.text  # the block the turn sent
        assert "Friday" in pinned.text and "Units are SI" not in pinned.text
        assert (reply.snapshot, reply.block_hash) == (snapshot, pinned.hash)
        assert reply.injected == pinned.memory_ids
        assert "memory pinned to snapshot" in reply.footer() and "waiting" not in reply.footer()
        _, metadata = shell.display_formatter.format(reply)
        saved = metadata["npc_nb"]
        assert (saved["snapshot"], saved["block_hash"]) == (snapshot, reply.block_hash)
        assert saved["memory_ids"] == reply.injected and saved["persona"] == "analyst"

    cell(shell, "%npc_pin off")
    assert "memory not pinned" in capsys.readouterr().out
    reply = cell(shell, "%%npc analyst\nAnd without the pin?")
    assert reply.snapshot is None and "Units are SI" in reply.messages[1]["content"]
    assert json.loads(json.dumps(reply.provenance()))["as_of"] is not None


def test_npc_diff_shows_what_changed_since_a_snapshot(shell: InteractiveShell) -> None:
    nb = magics_project(shell)
    nb.snapshot("v1")
    nb.approve(propose(nb, "Units are SI"))
    diff = cell(shell, "%npc_diff v1")
    assert diff[["change", "reason", "text_after"]].values.tolist() == [
        ["added", "approved", "Units are SI"]
    ]


# -- saved notebooks, executed by nbclient ---------------------------------------------------


def replies(book: Any) -> list[Any]:
    """What each ``%%npc`` cell showed: its outputs' data, and what they were built on
    (without the ids of the messages, new on every run)."""
    shown = []
    for entry in book.cells:
        if not entry.source.startswith("%%npc"):
            continue
        for output in entry.outputs:
            saved = dict(output.get("metadata", {}).get("npc_nb", {}))
            for volatile in ("message_id", "user_message_id"):
                saved.pop(volatile, None)
            shown.append((output.get("output_type"), output.get("data"), saved))
    return shown


@pytest.fixture
def prepared(project_dir: Path) -> Path:
    """A project with two approved memories and the snapshot 'submission-v1'."""
    nb = npc_nb.open(project_dir)
    nb.npc("analyst", directive="You help analyse bird migration data.")
    nb.approve(propose(nb, "The ringing dataset is due Friday"))
    nb.approve(propose(nb, "Counts are per hectare"))
    nb.snapshot("submission-v1")
    nb.close()
    return project_dir


def test_provenance_lists_every_npc_cell_with_the_hash_of_the_block_it_sent(
    prepared: Path, tmp_path: Path
) -> None:
    block_of_last_reply = (
        "import hashlib\nprint(hashlib.sha256(_.messages[1]['content'].encode()).hexdigest())"
    )
    book = executed(
        notebook(
            prepared,
            "%%npc analyst --new\nWhen is the dataset due?",
            block_of_last_reply,
            "%npc_pin submission-v1",
            "%%npc analyst\nAnd which unit do counts use?",
            block_of_last_reply,
        ),
        tmp_path,
    )
    book.cells.append(nbformat.v4.new_code_cell("%%npc analyst\nNever run"))
    path = tmp_path / "analysis.ipynb"
    nbformat.write(book, path)
    sent = [c.outputs[0]["text"].strip() for c in book.cells if c.source.startswith("import hash")]

    nb = npc_nb.open(prepared)
    try:
        nb.approve(propose(nb, "Units are SI"))  # the store changes after the run
        found = npc_nb.provenance(path, nb)
        assert found["cell"].tolist() == [1, 4, 6]
        assert found["block_hash"].tolist()[:2] == sent
        snapshot = nb.snapshots()["id"].item()
        assert pd.isna(found["snapshot"].iloc[0]) and found["snapshot"].iloc[1] == snapshot
        assert found["status"].tolist() == ["reproducible", "reproducible", "no_reply"]
        assert "no reply saved" in found["note"].iloc[2]
        messages = nb.sql("SELECT id FROM messages WHERE role = 'assistant' ORDER BY created_at")
        for position, message_id in enumerate(messages["id"]):
            injected = nb.sql(
                "SELECT memory_id FROM context_injections WHERE message_id = ? ORDER BY position",
                [message_id],
            )["memory_id"].tolist()
            assert found["memory_ids"].iloc[position] == injected and len(injected) == 2
        assert found["persona"].tolist() == ["analyst"] * 3
        assert found["model"].tolist()[:2] == ["npc_nb/offline"] * 2

        nb.sql(  # history rewritten behind the audit log's back: no longer reproducible
            "UPDATE memories SET final_text = 'Counts are per acre' "
            "WHERE final_text = 'Counts are per hectare'",
            allow_write=True,
        )
        assert set(npc_nb.provenance(path, nb)["status"]) == {"store_changed", "no_reply"}
    finally:
        nb.close()


def test_a_notebook_rerun_under_pin_and_replay_gives_identical_outputs(
    prepared: Path, tmp_path: Path
) -> None:
    turns = (
        "%%npc analyst --new\nWhen is the dataset due?",
        "%%npc analyst\nAnd which unit do counts use?",
    )

    def run(*top: str, allow_errors: bool = False) -> Any:
        return executed(notebook(prepared, *top, *turns), tmp_path, allow_errors=allow_errors)

    recorded = run("%npc_pin submission-v1", "%npc_config model_replay=record")
    nb = npc_nb.open(prepared)
    nb.approve(propose(nb, "Units are SI"))  # many more decisions since
    nb.reject(nb.memories(status="approved", npc="analyst")["id"].iloc[0])
    nb.close()

    again = run("%npc_pin submission-v1", "%npc_config model_replay=replay")
    assert replies(again) == replies(recorded)
    assert len(replies(recorded)) == 2 and all(saved for _, _, saved in replies(recorded))

    unpinned = run("%npc_config model_replay=off")
    assert [data for _, data, _ in replies(unpinned)] != [data for _, data, _ in replies(recorded)]
    replayed_unpinned = run("%npc_config model_replay=replay", allow_errors=True)
    (refused,) = replayed_unpinned.cells[2].outputs  # a UsageError, shown without traceback
    assert refused["name"] == "stderr" and "no reply was recorded" in refused["text"]
    assert "%%npc analyst, cell [3]" in refused["text"]
