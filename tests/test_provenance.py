"""``npc_nb.provenance()`` compares what a saved notebook shows with what the store
recorded: each ``%%npc`` cell reads ``reproducible`` only while its saved reply, the
memories it names and the block it was built on are all what the store holds; a
hand-edited reply reads ``edited_output``, hand-edited memory ids ``unknown_memory``, a
store rewritten behind the audit log ``store_changed``, and damaged metadata
``metadata_damaged`` (never an exception).

Each notebook is run by nbclient in a real kernel, saved, then edited as a person
would edit the ``.ipynb`` file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import npc_nb
from tests.helpers import propose
from tests.saved_notebooks import executed, notebook, saved

#: The cells of the study; cells 3 and 4 of the saved notebook are its %%npc cells.
STUDY = (
    "%npc_pin v1",
    "%npc_config model_replay=record",
    "%%npc analyst --new\nWhich font size do I like?",
    "%%npc analyst\nAnd which unit do counts use?",
)
FIRST, SECOND = 3, 4


@pytest.fixture(scope="module")
def recorded_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project and a saved notebook of two pinned, recorded %%npc turns, run once for
    the module (a kernel costs seconds); each test edits a copy."""
    folder = tmp_path_factory.mktemp("study")
    project = folder / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NPC_NB_HOME", str(folder / "user-home"))
        patch.setenv("NPC_NB_REVIEWER", "tester")
        nb = npc_nb.open(project)
        nb.npc("analyst", directive="You help with the survey.")
        nb.approve(propose(nb, "The user prefers large fonts"))
        nb.approve(propose(nb, "Counts are per hectare"))
        nb.snapshot("v1")
        nb.close()
        saved(executed(notebook(project, *STUDY), folder), folder / "study.ipynb")
    return folder


@pytest.fixture
def study(recorded_study: Path, tmp_path: Path) -> Path:
    """This test's copy of the saved notebook (and of its project)."""
    shutil.copytree(recorded_study, tmp_path / "study")
    return tmp_path / "study" / "study.ipynb"


@pytest.fixture
def opened(study: Path) -> Iterator[npc_nb.Project]:
    project = npc_nb.open(study.parent / "project")
    yield project
    project.close()


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the saved .ipynb by hand: ``change`` gets the notebook as JSON."""
    book = json.loads(path.read_text(encoding="utf-8"))
    change(book)
    path.write_text(json.dumps(book, indent=1), encoding="utf-8")


def reply_output(book: dict[str, Any], index: int) -> dict[str, Any]:
    (output,) = book["cells"][index]["outputs"]
    return output


def statuses(path: Path, nb: npc_nb.Project) -> list[str]:
    return npc_nb.provenance(path, nb)["status"].tolist()


def test_an_untouched_saved_notebook_reads_reproducible(
    study: Path, opened: npc_nb.Project
) -> None:
    opened.approve(propose(opened, "Units are SI"))  # decisions since change nothing pinned
    found = npc_nb.provenance(study, opened)
    assert found["status"].tolist() == ["reproducible", "reproducible"]
    assert found["note"].isna().all()
    book = json.loads(study.read_text(encoding="utf-8"))
    for index in (FIRST, SECOND):
        entry = reply_output(book, index)["metadata"]["npc_nb"]
        text = opened.sql("SELECT content FROM messages WHERE id = ?", [entry["message_id"]])[
            "content"
        ].item()
        assert entry["reply_hash"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
        recorded = opened.sql(
            "SELECT reply FROM model_recordings WHERE id = ?", [entry["recording_id"]]
        )
        assert recorded["reply"].item() == text
    assert found["recording_id"].notna().all() and found["reply_hash"].notna().all()


def _small_fonts(mimes: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    def change(book: dict[str, Any]) -> None:
        data = reply_output(book, FIRST)["data"]
        for mime in mimes:
            text = "".join(data[mime])
            assert "large fonts" in text
            data[mime] = text.replace("large fonts", "SMALL fonts")

    return change


@pytest.mark.parametrize(
    "mimes", [("text/plain", "text/html"), ("text/html",), ("text/plain",)], ids=str
)
def test_a_hand_edited_reply_reads_edited_output(
    study: Path, opened: npc_nb.Project, mimes: tuple[str, ...]
) -> None:
    edit(study, _small_fonts(mimes))
    found = npc_nb.provenance(study, opened)
    assert found["status"].tolist() == ["edited_output", "reproducible"]
    assert "edited" in found["note"].iloc[0]


def test_a_hand_edited_reply_with_its_hashes_recomputed_reads_edited_output(
    study: Path, opened: npc_nb.Project
) -> None:
    """Even with the reply's and the output's hashes in the metadata made to match the
    edit, the store's copy of the reply is not what the notebook shows."""

    def forge(book: dict[str, Any]) -> None:
        _small_fonts(("text/plain", "text/html"))(book)
        output = reply_output(book, FIRST)
        entry = output["metadata"]["npc_nb"]
        shown = {mime: "".join(output["data"][mime]) for mime in ("text/plain", "text/html")}
        canonical = json.dumps(shown, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        entry["output_hash"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        entry["reply_hash"] = hashlib.sha256(b"anything").hexdigest()

    edit(study, forge)
    assert statuses(study, opened)[0] != "reproducible"


def _memory_ids(change: Callable[[list[str], npc_nb.Project], list[str]]) -> Any:
    def hand_edit(path: Path, nb: npc_nb.Project) -> None:
        def on(book: dict[str, Any]) -> None:
            entry = reply_output(book, FIRST)["metadata"]["npc_nb"]
            entry["memory_ids"] = change(list(entry["memory_ids"]), nb)

        edit(path, on)

    return hand_edit


def _another_memory(ids: list[str], nb: npc_nb.Project) -> list[str]:
    other = propose(nb, "The user prefers dark mode")
    nb.reject(other)
    return [other, *ids[1:]]


@pytest.mark.parametrize(
    "hand_edit",
    [
        _memory_ids(lambda ids, _: ["0190f0f0-0000-7000-8000-000000000000", *ids[1:]]),
        _memory_ids(lambda ids, _: ids[1:]),
        _memory_ids(lambda ids, _: [*ids, ids[0]]),
        _memory_ids(_another_memory),
    ],
    ids=["made-up id", "one dropped", "one repeated", "another memory of the store"],
)
def test_hand_edited_memory_ids_read_unknown_memory(
    study: Path, opened: npc_nb.Project, hand_edit: Callable[[Path, npc_nb.Project], None]
) -> None:
    hand_edit(study, opened)
    found = npc_nb.provenance(study, opened)
    assert found["status"].tolist() == ["unknown_memory", "reproducible"]
    assert "memor" in found["note"].iloc[0]


@pytest.mark.parametrize(
    "rewrite",
    [
        "UPDATE memories SET final_text = 'The user prefers tiny fonts' "
        "WHERE final_text = 'The user prefers large fonts'",
        "UPDATE model_recordings SET reply = replace(reply, 'large fonts', 'SMALL fonts')",
        "UPDATE messages SET content = replace(content, 'large fonts', 'SMALL fonts')",
    ],
    ids=["a memory's past text", "a recording", "the stored reply"],
)
def test_a_store_rewritten_behind_the_audit_log_reads_store_changed(
    study: Path, opened: npc_nb.Project, rewrite: str
) -> None:
    opened.sql(rewrite, allow_write=True)
    found = npc_nb.provenance(study, opened)
    assert found["status"].iloc[0] == "store_changed"
    assert found["note"].iloc[0]


def _entry(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def on(book: dict[str, Any]) -> None:
        change(reply_output(book, FIRST)["metadata"]["npc_nb"])

    return on


def _whole(value: object) -> Callable[[dict[str, Any]], None]:
    def on(book: dict[str, Any]) -> None:
        reply_output(book, FIRST)["metadata"]["npc_nb"] = value

    return on


DAMAGES = {
    "entry is text": _whole("analyst"),
    "entry is a list": _whole(["analyst"]),
    "persona removed": _entry(lambda e: e.pop("persona")),
    "block_hash removed": _entry(lambda e: e.pop("block_hash")),
    "block_hash a number": _entry(lambda e: e.update(block_hash=42)),
    "memory_ids a string": _entry(lambda e: e.update(memory_ids="abc")),
    "memory_ids numbers": _entry(lambda e: e.update(memory_ids=[1, 2])),
    "as_of not a time": _entry(lambda e: e.update(as_of="last tuesday", snapshot=None)),
    "snapshot a list": _entry(lambda e: e.update(snapshot=["v1"])),
    "reply_hash removed": _entry(lambda e: e.pop("reply_hash")),
    "max_chars text": _entry(lambda e: e.update(max_chars="big")),
    "team a number": _entry(lambda e: e.update(team=7)),
    "metadata a list": lambda book: reply_output(book, FIRST).update(metadata=[1]),
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_damaged_metadata_reads_metadata_damaged_never_an_exception(
    study: Path, opened: npc_nb.Project, damage: Callable[[dict[str, Any]], None]
) -> None:
    edit(study, damage)
    found = npc_nb.provenance(study, opened)
    assert found["status"].tolist() == ["metadata_damaged", "reproducible"]
    assert found["note"].iloc[0]


def test_a_reply_whose_metadata_was_stripped_reads_metadata_damaged(
    study: Path, opened: npc_nb.Project
) -> None:
    edit(study, lambda book: reply_output(book, FIRST).update(metadata={}))
    found = npc_nb.provenance(study, opened)
    assert found["status"].tolist() == ["metadata_damaged", "reproducible"]
    assert "carries no npc_nb metadata" in found["note"].iloc[0]


def test_a_live_display_left_beside_the_reply_changes_nothing(
    study: Path, opened: npc_nb.Project
) -> None:
    """Some front ends keep the streamed display beside the result: the result counts."""

    def leave_live_display(book: dict[str, Any]) -> None:
        result = reply_output(book, FIRST)
        live = {"output_type": "display_data", "metadata": {}, "data": dict(result["data"])}
        book["cells"][FIRST]["outputs"].insert(0, live)

    edit(study, leave_live_display)
    assert statuses(study, opened) == ["reproducible", "reproducible"]


def test_a_cell_never_run_reads_no_reply(study: Path, opened: npc_nb.Project) -> None:
    def clear(book: dict[str, Any]) -> None:
        book["cells"][SECOND]["outputs"] = []

    edit(study, clear)
    found = npc_nb.provenance(study, opened)
    assert found["status"].tolist() == ["reproducible", "no_reply"]
    assert "no reply saved" in found["note"].iloc[1]


def test_on_a_shared_store_each_edit_is_told_apart(
    project_dir: Path, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same checks on PostgreSQL: the kernel and the check read the project's schema."""
    monkeypatch.setenv("NPC_NB_STORE", postgres_url)  # the kernel's npc_nb.open() too
    nb = npc_nb.open(project_dir)
    try:
        nb.npc("analyst", directive="You help with the survey.")
        nb.approve(propose(nb, "The user prefers large fonts"))
        nb.approve(propose(nb, "Counts are per hectare"))
        nb.snapshot("v1")
        path = saved(executed(notebook(project_dir, *STUDY), tmp_path), tmp_path / "study.ipynb")
        assert statuses(path, nb) == ["reproducible", "reproducible"]
        edited, renamed = tmp_path / "edited.ipynb", tmp_path / "ids.ipynb"
        for copy, change in ((edited, _small_fonts(("text/html",))), (renamed, _made_up_id)):
            shutil.copy(path, copy)
            edit(copy, change)
        assert statuses(edited, nb) == ["edited_output", "reproducible"]
        assert statuses(renamed, nb) == ["unknown_memory", "reproducible"]
        nb.sql(
            "UPDATE memories SET final_text = 'The user prefers tiny fonts' "
            "WHERE final_text = 'The user prefers large fonts'",
            allow_write=True,
        )
        assert statuses(path, nb) == ["store_changed", "store_changed"]
    finally:
        nb.close()


def _made_up_id(book: dict[str, Any]) -> None:
    entry = reply_output(book, FIRST)["metadata"]["npc_nb"]
    entry["memory_ids"] = ["0190f0f0-0000-7000-8000-000000000000", *entry["memory_ids"][1:]]
