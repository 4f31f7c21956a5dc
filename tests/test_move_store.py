"""Moving a project: ``npc-nb migrate-store FROM TO`` copies every row of every table,
embedded file to PostgreSQL and back, and the copy is compared row by row.

Each PostgreSQL test gets a fresh database on the session's throwaway server
(``postgres_url``).
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npc_nb
from npc_nb import Approve
from npc_nb.cli import main
from npc_nb.store.memories import audit_rows
from npc_nb.store.moving.copy_into import NOT_COPIED
from npc_nb.store.moving.move import migrate_store
from tests.helpers import as_reviewer, propose

REPO = Path(__file__).resolve().parents[1]

#: Text a model or a person may write: unicode, quotes, backslashes, SQL and format
#: metacharacters, markup, bidi overrides, line breaks (memory text refuses other
#: control characters; a reason or a chat message carries ``CONTROLS``).
HOSTILE = [
    "naïve café ☕ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 日本語 العربية",
    'it\'s "quoted" and back\\slashed \\N \\. {braces} [1,2]',
    "'; DROP TABLE memories; -- % %s %(x)s $1 ? :name",
    "<script>alert('x')</script> &amp; **bold**",
    "\u202eevil\u202c zero\u200bwidth \ufeffbom",
    "tab\there, new\nline and\r\ncarriage return",
    "   leading and trailing   ",
]
CONTROLS = "controls: " + "".join(chr(c) for c in range(1, 32)) + "\x7f end"


def seed(nb: npc_nb.Project) -> None:
    """A project with rows in every table: memories in every state, their audit log,
    re-proposals and a match label, a conversation with its injections and extraction
    job, a recorded reply and a snapshot, concepts, all carrying hostile text, imported
    records, and an extraction experiment reviewed and promoted."""
    ids = [
        propose(nb, f"{text} #{number}", npc=f"analyst {text[:12]}")
        for number, text in enumerate(HOSTILE)
    ]
    nb.approve(ids[0])
    nb.reject(ids[1], reason=HOSTILE[2] + CONTROLS)
    nb.edit(ids[2], f"edited: {HOSTILE[5]}")
    nb.defer(ids[3], until="2999-01-02")
    nb.approve(ids[4])
    nb.undo()
    again = nb.add_candidate(f"{HOSTILE[1]} #1", category="fact", npc=f"analyst {HOSTILE[1][:12]}")
    assert again.action == "suppressed"
    nb.requeue(nb.reproposals()["id"].iloc[0])
    nb.approve(ids[6])
    nb.approve(propose(nb, f"The analyst answers in {HOSTILE[0]}", npc="analyst"))
    vote(nb)
    nb.chat("analyst", "We decided to use DuckDB. I prefer short answers. " + HOSTILE[0])
    assert nb.extraction.wait(timeout=30).done == 1
    nb.chat("analyst", HOSTILE[4] + CONTROLS)
    nb.extraction.wait(timeout=30)
    nb.configure(model_replay="record")  # a recorded reply, and a snapshot
    nb.chat("analyst", HOSTILE[3] + HOSTILE[2])
    nb.configure(model_replay="off")
    nb.extraction.wait(timeout=30)
    nb.snapshot(HOSTILE[1])
    nb.graph.networkx()
    nb.sql(  # the offline concept model names no relations
        "INSERT INTO concept_relations SELECT memory_id, memory_hash, concept_key, ?, "
        "concept_key FROM memory_concepts LIMIT 1",
        [HOSTILE[2]],
        allow_write=True,
    )
    nb.imports.mem0(Path(__file__).parent / "data" / "mem0" / "get_all.json")  # imported_records
    arms = {
        "A": {"model": "npc_nb/offline"},
        "B": {"model": "npc_nb/offline", "prompt": HOSTILE[2]},
    }
    experiment = nb.experiment(HOSTILE[3], arms=arms, npc="analyst")  # the experiment tables
    experiment.run()
    experiment.wait(timeout=60)
    session = experiment.review_session()
    while session.card() is not None:
        session.decide(Approve(session.current))
    experiment.promote("A")
    audit(nb, ids)


def audit(nb: npc_nb.Project, ids: list[str]) -> None:
    """The audits' rows: an audit of two cards (one kept out) and a step, written
    through the store's audit rows, with hostile text."""
    store = nb._memory.stores.project
    started = datetime(2026, 12, 7, 10, 0)
    plan = {
        "name": HOSTILE[2], "started_at": started, "started_by": HOSTILE[0], "npc": None,
        "category": "fact", "conversation_id": None, "stratify": True, "tolerance": 0.05,
        "confidence": 0.95, "seed": 2**40, "population": 1, "looks": [1], "thresholds": [0],
        "nominal_confidence": 0.95, "method": HOSTILE[1] + CONTROLS,
    }  # fmt: skip
    members = [
        {"memory_id": ids[5], "position": 0, "stratum": HOSTILE[3]},
        {"memory_id": ids[3], "excluded_because": "near_tombstone"},
    ]
    audit_rows.insert_audit(store, plan, members)
    found = audit_rows.find_audit(store, HOSTILE[2])
    assert found is not None
    audit_rows.add_audit_step(
        store,
        {"audit_id": found["id"], "occurred_at": started, "actor": HOSTILE[4], "step": "extend",
         "look": 1, "sample": 1, "errors": 0, "bound": 0.5},
    )  # fmt: skip


def vote(nb: npc_nb.Project) -> None:
    """Independent review's rows: a card two votes agreed on, one waiting for
    adjudication, a replaced vote and a withdrawn one, under the project's stored policy."""
    nb.access.set_policy(review_mode="independent")
    agreed = propose(nb, f"Two reviewers agreed on {HOSTILE[0]}", npc="analyst")
    disputed = propose(nb, f"Two reviewers disagreed on {HOSTILE[3]}", npc="analyst")
    as_reviewer(nb, "ada").approve(
        agreed, context=npc_nb.ReviewContext(time_spent=1.5, session_id="review-1")
    )
    as_reviewer(nb, "bob").approve(agreed)
    as_reviewer(nb, "ada").approve(disputed)
    as_reviewer(nb, "ada").undo()  # withdrawn
    as_reviewer(nb, "ada").approve(disputed)
    as_reviewer(nb, "ada").edit(disputed, f"edited: {HOSTILE[2]}")  # replaces ada's vote
    as_reviewer(nb, "bob").reject(disputed, reason=HOSTILE[5] + CONTROLS)
    nb.access.set_policy(review_mode="single")


def embedded_rows(folder: Path, *, user: bool = False) -> dict[str, list[tuple]]:
    """Every row of every table a move copies of the project store in ``folder`` (with
    ``user``, the user store), in a fixed order."""
    store = folder if user else folder / ".npc_nb"
    con = duckdb.connect(str(store / "memory.duckdb"), read_only=True)
    try:
        tables = [
            name
            for (name,) in con.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'main' AND table_type = 'BASE TABLE'"
            ).fetchall()
        ]
        return {
            t: _ordered(con.execute(f'SELECT * FROM "{t}"').fetchall())
            for t in tables
            if t not in NOT_COPIED
        }
    finally:
        con.close()


def postgres_rows(url: str, project: str) -> dict[str, list[tuple]]:
    schema = "npc_" + project
    with psycopg.connect(url, options="-c TimeZone=UTC") as con:
        tables = [
            name
            for (name,) in con.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = %s AND table_type = 'BASE TABLE'",
                [schema],
            ).fetchall()
        ]
        return {
            t: _ordered(con.execute(f'SELECT * FROM {schema}."{t}"').fetchall())
            for t in tables
            if t not in NOT_COPIED
        }


def _ordered(found: list[tuple]) -> list[tuple]:
    # In Python, not SQL: the two engines collate text differently.
    return sorted(found, key=repr)


def _insert_seq_column() -> int:
    """Where ``insert_seq`` is among the memories' columns (both backends keep one order)."""
    from npc_nb.store.schema.migrations import apply_migrations

    con = duckdb.connect()
    apply_migrations(con)
    columns = [row[0] for row in con.execute("DESCRIBE memories").fetchall()]
    con.close()
    return columns.index("insert_seq")


def next_numbers(rows: dict[str, list[tuple]]) -> tuple[int, int]:
    """The last audit event's ``seq`` and the last memory's ``insert_seq``."""
    events = max(row[0] for row in rows["memory_events"])
    position = _insert_seq_column()
    inserted = max(row[position] for row in rows["memories"])
    return events, inserted


def same_view(one: npc_nb.Project, other: npc_nb.Project) -> None:
    assert one.context("analyst") == other.context("analyst")
    columns = ["id", "final_text", "status", "npc", "recorded_at"]
    assert one.review_queue()[columns].equals(other.review_queue()[columns])
    votes = ["memory_id", "vote", "reviewer", "decision", "final_text", "reason", "final"]
    assert one.votes(history=True)[votes].equals(other.votes(history=True)[votes])
    waiting = one.review_queue(adjudicate=True, by="carol")
    assert len(waiting) == 1  # the disputed card still waits for its adjudicator
    assert waiting[columns].equals(other.review_queue(adjudicate=True, by="carol")[columns])


@pytest.fixture
def source(project_dir: Path) -> Path:
    nb = npc_nb.open(project_dir)
    seed(nb)
    nb.close()
    return project_dir


def test_a_project_moves_to_postgresql_and_back_row_by_row(
    source: Path, tmp_path: Path, postgres_url: str
) -> None:
    original = embedded_rows(source)
    empty = [table for table, found in original.items() if not found]
    assert not empty, f"seed() leaves tables empty, so their copy is untested: {empty}"

    there = migrate_store(source, postgres_url, project="moved")
    assert postgres_rows(postgres_url, "moved") == original
    assert there.rows == {table: len(found) for table, found in sorted(original.items())}

    back = tmp_path / "back"
    migrate_store(postgres_url, back, project="moved")
    assert embedded_rows(back) == original

    first, shared, last = (
        npc_nb.open(source),
        npc_nb.open(tmp_path, store=postgres_url, project="moved"),
        npc_nb.open(back),
    )
    try:
        same_view(first, shared)
        same_view(first, last)
        for nb in (shared, last):  # the next event and memory follow the copied ones
            propose(nb, "a memory proposed after the move")
    finally:
        for nb in (first, shared, last):
            nb.close()
    events, inserted = next_numbers(original)
    for after in (postgres_rows(postgres_url, "moved"), embedded_rows(back)):
        assert next_numbers(after) == (events + 1, inserted + 1)


def test_snapshots_pins_and_recorded_replies_move_with_the_project(
    project_dir: Path, tmp_path: Path, postgres_url: str
) -> None:
    """A notebook pinned to a snapshot and replaying its replies runs the same on the
    moved store, after the original changed: the snapshot is the same state there."""
    nb = npc_nb.open(project_dir, model_replay="record")
    nb.approve(propose(nb, "The ringing dataset is due Friday"))
    snapshot = nb.snapshot("submission-v1")
    nb.configure(pin="submission-v1")
    reply = nb.chat("analyst", "When is the dataset due?", new=True)
    nb.configure(pin=None, model_replay="off")
    nb.reject(nb.memories(status="approved")["id"].item())
    nb.close()
    migrate_store(project_dir, postgres_url, project="moved")
    back = tmp_path / "back"
    migrate_store(postgres_url, back, project="moved")
    for moved in (
        npc_nb.open(tmp_path, store=postgres_url, project="moved", pin="submission-v1"),
        npc_nb.open(back, pin=snapshot.id),
    ):
        try:
            moved.configure(model_replay="replay")
            assert moved.snapshots()["hash"].tolist() == [snapshot.hash]
            assert moved.context("analyst") == nb.context("analyst", as_of=snapshot) != ""
            again = moved.chat("analyst", "When is the dataset due?", new=True)
            assert (again.text, again.block_hash) == (reply.text, reply.block_hash)
        finally:
            moved.close()


def test_a_project_moves_between_servers_and_between_folders(
    source: Path, tmp_path: Path, postgres_server: Any, postgres_url: str
) -> None:
    original = embedded_rows(source)
    migrate_store(source, postgres_url, project="lab")
    elsewhere = postgres_server.new_database()
    migrate_store(postgres_url, elsewhere, project="lab")
    assert postgres_rows(elsewhere, "lab") == original
    copy = tmp_path / "copy"
    migrate_store(source, copy)
    assert embedded_rows(copy) == original
    with pytest.raises(npc_nb.ConfigError, match="the same store"):
        migrate_store(elsewhere, elsewhere, project="lab")


def test_a_store_with_anything_in_it_is_not_overwritten_without_force(
    source: Path, tmp_path: Path, postgres_url: str
) -> None:
    other = tmp_path / "other"
    nb = npc_nb.open(_project(other))
    kept = propose(nb, "a memory the target already holds")
    nb.close()
    with pytest.raises(npc_nb.StoreError, match="not empty .*1 memories.*--force"):
        migrate_store(source, other)
    assert kept in embedded_rows_ids(other)

    migrate_store(source, postgres_url, project="target")
    with pytest.raises(npc_nb.StoreError, match="not empty"):
        migrate_store(other, postgres_url, project="target")
    assert postgres_rows(postgres_url, "target") == embedded_rows(source)

    moved = migrate_store(other, postgres_url, project="target", force=True)
    assert moved.cleared and "replaced (--force)" in str(moved)
    assert postgres_rows(postgres_url, "target") == embedded_rows(other)
    migrate_store(source, other, force=True)
    assert embedded_rows(other) == embedded_rows(source)


def embedded_rows_ids(folder: Path) -> list[str]:
    return [row[0] for row in embedded_rows(folder)["memories"]]


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'other'\n")
    return folder


def test_the_command_line_moves_a_project_and_prints_rows_per_table(
    source: Path, postgres_url: str
) -> None:
    url = postgres_url.replace("postgres@", "postgres:hunter2secret@")
    out = io.StringIO()
    assert main(["migrate-store", str(source), url, "--project", "lab"], stdout=out) == 0
    printed = out.getvalue()
    assert "hunter2secret" not in printed and "***" in printed
    memories = len(embedded_rows(source)["memories"])
    assert any(line.split() == ["memories", str(memories)] for line in printed.splitlines())

    again = io.StringIO()
    assert main(["migrate-store", str(source), url, "--project", "lab"], stdout=again) == 2
    assert "not empty" in again.getvalue() and "hunter2secret" not in again.getvalue()
    assert main(["migrate-store", str(source), url, "--project", "lab", "--force"]) == 0


def test_the_command_line_never_prints_a_password_given_as_a_parameter(
    source: Path, postgres_url: str
) -> None:
    url = f"{postgres_url}?password=hunter2secret&sslmode=disable"
    out = io.StringIO()
    assert main(["migrate-store", str(source), url, "--project", "lab"], stdout=out) == 0
    again = io.StringIO()
    assert main(["migrate-store", str(source), url, "--project", "lab"], stdout=again) == 2
    printed = out.getvalue() + again.getvalue()
    assert "hunter2secret" not in printed and "?password=***&sslmode=disable" in printed


def test_a_url_end_needs_a_project_name_and_a_source_must_exist(
    tmp_path: Path, postgres_url: str
) -> None:
    out = io.StringIO()
    assert main(["migrate-store", str(tmp_path), postgres_url], stdout=out) == 2
    assert "--project NAME" in out.getvalue()
    mysql = "mysql://ada:hunter2secret@h/db"
    assert main(["migrate-store", str(tmp_path), mysql, "--project", "x"], stdout=out) == 2
    assert "not a PostgreSQL URL" in out.getvalue() and "hunter2secret" not in out.getvalue()
    with pytest.raises(npc_nb.ConfigError, match="neither end is a URL"):
        migrate_store(tmp_path / "a", tmp_path / "b", project="lab")
    with pytest.raises(npc_nb.ConfigError, match="No npc_nb store at"):
        migrate_store(tmp_path / "nowhere", tmp_path / "there")
    with pytest.raises(npc_nb.ConfigError, match="No npc_nb store for this project"):
        migrate_store(postgres_url, tmp_path / "there", project="never_made")
    assert not (tmp_path / "there").exists()


def test_the_user_store_moves_only_with_user(
    project_dir: Path, isolated_home: Path, tmp_path: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, create=True)  # a project store, which stays empty
    global_memory = propose(nb, f"Ada prefers {HOSTILE[0]}", scope="global", npc=None)
    nb.approve(global_memory)
    nb.close()

    migrate_store(project_dir, postgres_url, project="proj")
    assert postgres_rows(postgres_url, "proj")["memories"] == []  # global stays personal

    argv = ["migrate-store", str(isolated_home), postgres_url, "--project", "ada_global"]
    assert main([*argv, "--user"], stdout=io.StringIO()) == 0
    home_rows = embedded_rows(isolated_home, user=True)
    assert postgres_rows(postgres_url, "ada_global") == home_rows
    other_home = tmp_path / "other-home"
    migrate_store(postgres_url, other_home, project="ada_global", user=True)
    assert embedded_rows(other_home, user=True) == home_rows


def test_a_move_that_fails_part_way_leaves_the_target_as_it_was(
    source: Path, tmp_path: Path, postgres_url: str
) -> None:
    migrate_store(source, postgres_url, project="lab")
    before = postgres_rows(postgres_url, "lab")
    other = tmp_path / "other"
    nb = npc_nb.open(_project(other))
    propose(nb, "a memory that would be copied first")
    nb.sql(  # DuckDB keeps a NUL character; PostgreSQL refuses it
        "INSERT INTO messages (id, conversation_id, role, content, created_at) "
        "VALUES ('m-nul', 'c1', 'user', ?, now()::TIMESTAMP)",
        ["before\x00after"],
        allow_write=True,
    )
    nb.close()
    with pytest.raises(npc_nb.StoreError, match="Nothing was copied"):
        migrate_store(other, postgres_url, project="lab", force=True)
    assert postgres_rows(postgres_url, "lab") == before


def test_an_older_source_is_migrated_first_and_the_summary_says_so(tmp_path: Path) -> None:
    older = _project(tmp_path / "older")
    (older / ".npc_nb").mkdir()
    with (
        gzip.open(Path(__file__).parent / "data" / "store-m027.duckdb.gz", "rb") as packed,
        (older / ".npc_nb" / "memory.duckdb").open("wb") as store,
    ):
        shutil.copyfileobj(packed, store)  # made by the old ladder: upgraded to 0001 first
    moved = migrate_store(older, tmp_path / "newer")
    assert moved.source_migrated == ("0001", "0002")
    assert "The source was migrated first: 0001, 0002." in str(moved)
    assert embedded_rows(tmp_path / "newer") == embedded_rows(older)


#: Any text PostgreSQL can hold: no NUL, no lone surrogates.
ANY_TEXT = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30
)


@settings(max_examples=10)
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=4))
def test_any_text_survives_the_round_trip(
    project_dir: Path, tmp_path: Path, postgres_url: str, texts: list[str]
) -> None:
    nb = npc_nb.open(project_dir)
    nb.sql("DELETE FROM reproposals", allow_write=True)
    for number, text in enumerate(texts):
        nb.sql(  # a text column and a list of texts (PostgreSQL quotes array items)
            "INSERT INTO reproposals (id, recorded_at, memory_id, match_kind, match_type, "
            "similarity, proposed_text, flags) VALUES (?, now()::TIMESTAMP, ?, 'pending', "
            "'exact', 100, ?, ?)",
            [f"r{number}", text, text, [text, text + "\\", ""]],
            allow_write=True,
        )
    nb.close()
    original = embedded_rows(project_dir)
    migrate_store(project_dir, postgres_url, project="texts", force=True)
    assert postgres_rows(postgres_url, "texts") == original
    migrate_store(postgres_url, tmp_path / "back", project="texts", force=True)
    assert embedded_rows(tmp_path / "back") == original


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``npc-nb ARGV`` in a process of its own, under the common umask 022 (files 0644)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    command = [sys.executable, "-m", "npc_nb.cli", *argv]
    return subprocess.run(
        ["sh", "-c", 'umask 022 && exec "$@"', "sh", *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=240,
    )


def _modes(folder: Path) -> dict[str, int]:
    """The permission bits of a store folder and of every store file in it."""
    found = {".": stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.iterdir():
        if path.name.startswith("memory.duckdb"):
            found[path.name] = stat.S_IMODE(path.stat().st_mode)
    return found


def test_a_moved_store_is_private_whatever_the_umask(
    project_dir: Path, isolated_home: Path, tmp_path: Path
) -> None:
    """``migrate-store`` into folders that do not exist yet, under umask 022: the store
    folders are 0700 and the files 0600, as for a store npc_nb opens itself."""
    nb = npc_nb.open(project_dir)
    propose(nb, "a personal fact that moves with the project")
    nb.approve(propose(nb, "a global fact that moves with the user", scope="global", npc=None))
    nb.close()

    moved = _cli("migrate-store", str(project_dir), str(tmp_path / "new" / "project"), cwd=tmp_path)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert _modes(tmp_path / "new" / "project" / ".npc_nb") == {
        ".": 0o700, "memory.duckdb": 0o600,
    }  # fmt: skip

    home = tmp_path / "new" / "home"
    moved = _cli("migrate-store", str(isolated_home), str(home), "--user", cwd=tmp_path)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert _modes(home) == {".": 0o700, "memory.duckdb": 0o600}
