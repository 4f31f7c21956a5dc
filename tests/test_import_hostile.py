"""Every importer treats its file as hostile.

A file too large (100 MB, made sparse here), an alias bomb, a path that is no regular
file, a view posing as a table: the file is refused whole, with a clear error, and
nothing is imported. A single bad record (bytes that are not UTF-8, a control
character, a tag, deep nesting, a wrong kind of value) is skipped at its position
with the reason, and every other record is imported.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

import npc_nb
from tests.interop_projects import DATA


def big(path: Path) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(100_000_000)  # sparse: no 100 MB on disk
    return path


IMPORTERS = {
    "npcpy": lambda nb, path: nb.imports.npcpy(path),
    "mem0": lambda nb, path: nb.imports.mem0(path),
    "letta": lambda nb, path: nb.imports.letta(path),
}


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
def test_a_100_mb_file_is_refused_before_it_is_read(
    nb: npc_nb.Project, tmp_path: Path, kind: str
) -> None:
    path = big(tmp_path / "huge")
    with pytest.raises(npc_nb.ConfigError, match="is larger than 64 MB, the limit"):
        IMPORTERS[kind](nb, path)
    assert nb.memories().empty


def test_a_100_mb_bundle_is_refused(tmp_path: Path) -> None:
    with pytest.raises(npc_nb.StoreError, match="not a readable bundle"):
        npc_nb.import_bundle(big(tmp_path / "huge.zip"), tmp_path / "p", create=True)


@pytest.mark.parametrize("kind", sorted(IMPORTERS))
def test_a_fifo_is_refused_without_waiting(nb: npc_nb.Project, tmp_path: Path, kind: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(npc_nb.ConfigError, match="is not a regular file"):
        IMPORTERS[kind](nb, fifo)


def test_an_npcpy_alias_bomb_is_refused_whole(nb: npc_nb.Project, tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{n}: &a{n} [" + ",".join([f"*a{n - 1}"] * 9) + "]" for n in range(1, 10)]
    lines += ["memories:", "- {initial_memory: *a9, status: pending_approval, npc: x}"]
    path = tmp_path / ".knowledge.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < 1000
    with pytest.raises(npc_nb.ConfigError, match="uses the YAML alias '\\*a0'"):
        nb.imports.npcpy(path)
    assert nb.memories().empty


def knowledge_file(path: Path, memories: list[str]) -> Path:
    """A knowledge file of raw YAML items (each the text of one mapping)."""
    body = "".join(f"- {item}\n" for item in memories)
    path.write_bytes(b"memories:\n" + body.encode("utf-8", "surrogateescape"))
    return path


def test_npcpy_bad_records_are_skipped_and_the_others_imported(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    path = knowledge_file(
        tmp_path / ".knowledge.yaml",
        [
            "{id: a, initial_memory: Good one, status: pending_approval, npc: analyst}",
            '{id: b, initial_memory: "bad \udcff\udcfe bytes", status: pending_approval, npc: x}',
            '{id: c, initial_memory: "bell \\a here", status: pending_approval, npc: x}',
            "{id: d, initial_memory: !!python/object:os.system [ls], status: human-approved}",
            "{id: e, initial_memory: Hacked, status: human-approved-by-me}",
            "{id: f, initial_memory: [a, list], status: pending_approval}",
            "just text",
            "{id: g, initial_memory: Good two, status: human-approved, npc: analyst}",
        ],
    )
    summary = nb.imports.npcpy(path)
    assert set(nb.memories()["final_text"]) == {"Good one", "Good two"}
    reasons = {skip.position: skip.reason for skip in summary.skipped}
    assert list(reasons) == [
        "memories[1] (line 3)",
        "memories[2] (line 4)",
        "memories[3] (line 5)",
        "memories[4] (line 6)",
        "memories[5] (line 7)",
        "memories[6] (line 8)",
    ]
    assert reasons["memories[1] (line 3)"] == "holds bytes that are not UTF-8 text"
    assert "control character '\\x07'" in reasons["memories[2] (line 4)"]
    assert "could not determine a constructor" in reasons["memories[3] (line 5)"]
    assert "status 'human-approved-by-me' is not one of npcpy's" in reasons["memories[4] (line 6)"]
    assert "'initial_memory' is ['a', 'list'], not text" in reasons["memories[5] (line 7)"]
    assert "not a memory" in reasons["memories[6] (line 8)"]


def test_npcpy_writes_a_control_character_escaped_and_it_is_refused_alone(
    nb: npc_nb.Project,
) -> None:
    """tests/data/npcpy/hostile was written by npcpy 2.1.25 itself."""
    summary = nb.imports.npcpy(DATA / "npcpy" / "hostile")
    assert list(nb.memories()["final_text"]) == ["Backups run every night at two"]
    assert len(summary.skipped) == 1 and "control character '\\x07'" in summary.skipped[0].reason


def test_mem0_bad_records_are_skipped_and_the_others_imported(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    items = [
        '{"id": "a", "memory": "Good one"}',
        '{"id": "b", "memory": "bad \xff bytes"}',
        '{"id": "c", "memory": "bell \\u0007 here"}',
        "[" * 200 + "]" * 200,
        '{"id": "e", "memory": 42}',
        '{"id": "f", "memory": "Good two", "user_id": "alex"}',
    ]
    path = tmp_path / "dump.json"
    path.write_bytes(('{"results": [' + ", ".join(items) + "]}").encode("latin-1"))
    summary = nb.imports.mem0(path)
    assert set(nb.memories()["final_text"]) == {"Good one", "Good two"}
    reasons = {skip.position: skip.reason for skip in summary.skipped}
    assert list(reasons) == ["results[1]", "results[2]", "results[3]", "results[4]"]
    assert "not valid Unicode" in reasons["results[1]"]
    assert "control character" in reasons["results[2]"]
    assert "nested 200 levels deep" in reasons["results[3]"]
    assert "'memory' is 42, not text" in reasons["results[4]"]


def test_letta_bad_blocks_are_skipped_and_the_others_imported(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    document = json.loads((DATA / "letta" / "companion.af").read_text())
    document["blocks"][0]["value"] = "Has a dog\nrings the \u0007 bell\nLikes jazz"
    document["blocks"].append({"id": "block-9", "label": "human", "value": 17})
    text = json.dumps(document).replace(
        '"Prefers short answers with code first."', '"Prefers \\udcff short answers"'
    )
    path = tmp_path / "agent.af"
    path.write_text(text)
    summary = nb.imports.letta(path)
    assert set(nb.memories()["final_text"]) == {
        "Has a dog",
        "Likes jazz",
        "Priya's lab moved to building 4",
    }
    reasons = [f"{s.position}: {s.reason}" for s in summary.skipped]
    assert any("blocks[1]" in r and "not valid Unicode" in r for r in reasons)
    assert any("line 2" in r and "control character" in r for r in reasons)
    assert any("blocks[2]" in r and "not text" in r for r in reasons)


def test_sqlite_rows_with_bad_bytes_are_skipped_and_the_others_imported(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    path = tmp_path / "old.db"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE TABLE memory_lifecycle (id INTEGER PRIMARY KEY, npc TEXT, "
        "initial_memory TEXT, final_memory TEXT, status TEXT, created_at TEXT)"
    )
    con.execute(
        "INSERT INTO memory_lifecycle VALUES (1, 'coder', CAST(? AS TEXT), NULL, "
        "'pending_approval', '2025-01-01')",
        [b"bad \xff bytes"],
    )
    con.execute(
        "INSERT INTO memory_lifecycle VALUES (2, 'coder', 'Good one', NULL, "
        "'pending_approval', '2025-01-01')"
    )
    con.commit()
    con.close()
    summary = nb.imports.npcpy(path)
    assert list(nb.memories()["final_text"]) == ["Good one"]
    assert [(s.position, s.reason) for s in summary.skipped] == [
        ("memory_lifecycle row 1", "holds bytes that are not UTF-8 text")
    ]


def test_a_view_posing_as_the_table_is_refused(nb: npc_nb.Project, tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    con = sqlite3.connect(path)
    con.execute(
        "CREATE VIEW history AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
        "FROM r) SELECT n AS memory_id, 'x' AS new_memory, 'ADD' AS event FROM r"
    )
    con.commit()
    con.close()
    with pytest.raises(npc_nb.ConfigError, match="history is not a plain table"):
        nb.imports.mem0(path)


def test_a_file_that_is_no_format_is_a_clear_error(nb: npc_nb.Project, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n")
    with pytest.raises(npc_nb.ConfigError, match="is not a mem0 dump"):
        nb.imports.mem0(path)
    with pytest.raises(npc_nb.ConfigError, match="is not a Letta agent file"):
        nb.imports.letta(path)
    with pytest.raises(npc_nb.ConfigError, match="is not an npcpy knowledge file"):
        nb.imports.npcpy(path)


def test_a_large_import_shows_its_progress(
    nb: npc_nb.Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "many.json"
    items = [
        {"id": f"m{n}", "memory": f"Sample {n} was frozen at minus {n} degrees"} for n in range(250)
    ]
    path.write_text(json.dumps({"results": items}))
    summary = nb.imports.mem0(path)
    assert summary.imported["pending_approval"] == 250
    progress = capsys.readouterr().err
    assert "\rimporting many.json: 250/250 (100%)" in progress and progress.endswith("\n")
