"""Read-only SQL stays read-only: the engine refuses, not a parser.

``nb.sql`` (and ``%npc_sql`` without ``--write``) runs on a connection that opened the
store read-only and may not reach files, extensions or settings. Each way out is tried
in its plain form and in the disguises that defeated a start-of-text check.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import npc_nb
from tests.helpers import propose

WRITES_A_FILE = [
    "COPY (SELECT * FROM memories) TO '{out}'",
    "EXPLAIN ANALYZE COPY (SELECT * FROM memories) TO '{out}'",
    "/* c */ EXPLAIN ANALYZE COPY (SELECT * FROM memories) TO '{out}'",
    "EXPLAIN (ANALYZE) COPY (SELECT * FROM memories) TO '{out}'",
    "EXPLAIN/**/ANALYZE COPY (SELECT * FROM memories) TO '{out}'",
    "EXPORT DATABASE '{out}'",
]


@pytest.mark.parametrize("statement", WRITES_A_FILE)
def test_no_read_only_query_writes_a_file(
    nb: npc_nb.Project, tmp_path: Path, statement: str
) -> None:
    propose(nb, "a fact")
    out = tmp_path / "leak.csv"
    with pytest.raises(npc_nb.NpcError):
        nb.sql(statement.format(out=out))
    assert not out.exists()


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM glob('/etc/*')",
    ],
)
def test_no_read_only_query_reads_other_files(nb: npc_nb.Project, statement: str) -> None:
    with pytest.raises(npc_nb.NpcError):
        nb.sql(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "ATTACH '{db}' AS other",
        "EXPLAIN ANALYZE ATTACH '{db}' AS other",
        "INSTALL fts",
        "LOAD fts",
        "EXPLAIN ANALYZE LOAD fts",
    ],
)
def test_no_read_only_query_attaches_a_database_or_loads_an_extension(
    nb: npc_nb.Project, tmp_path: Path, statement: str
) -> None:
    db = tmp_path / "other.duckdb"
    with pytest.raises(npc_nb.NpcError):
        nb.sql(statement.format(db=db))
    assert not db.exists()


@pytest.mark.parametrize(
    "statement",
    [
        "SET TimeZone = 'Pacific/Kiritimati'",
        "EXPLAIN ANALYZE SET TimeZone = 'Pacific/Kiritimati'",
        "/* c */ EXPLAIN ANALYZE SET TimeZone = 'Pacific/Kiritimati'",
        "EXPLAIN ANALYZE RESET TimeZone",
        "EXPLAIN ANALYZE SET threads = 1",
    ],
)
def test_no_read_only_query_changes_a_setting(nb: npc_nb.Project, statement: str) -> None:
    expired = propose(nb, "valid until a minute ago")
    nb.approve(expired)
    nb.set_validity(expired, valid_to=datetime.now(UTC) - timedelta(minutes=1))
    with pytest.raises(npc_nb.NpcError):
        nb.sql(statement)
    assert "valid until a minute ago" not in nb.context("analyst")


def test_no_read_only_query_advances_a_sequence_or_changes_data(nb: npc_nb.Project) -> None:
    memory = propose(nb, "a fact")
    before = nb.decisions()
    for statement in (
        "SELECT nextval('memory_event_seq')",
        "EXPLAIN ANALYZE SELECT nextval('memory_event_seq')",
        "EXPLAIN ANALYZE DELETE FROM memory_events",
        "/* c */ EXPLAIN ANALYZE UPDATE memories SET status = 'human-approved'",
        "EXPLAIN (ANALYZE) INSERT INTO store_state VALUES ('x', 1)",
        "WITH x AS (SELECT 1) DELETE FROM memories",
    ):
        with pytest.raises(npc_nb.NpcError):
            nb.sql(statement)
    nb.approve(memory)
    after = nb.decisions()
    assert after["seq"].tolist() == [*before["seq"].tolist(), before["seq"].max() + 1]
    assert nb.memories()["status"].tolist() == ["human-approved"]


def test_the_approval_predicate_ignores_a_session_time_zone_change(nb: npc_nb.Project) -> None:
    """Even a --write query that moves the store connection's clock by 14 hours cannot
    reopen an expired validity window: readers compare explicit UTC timestamps."""
    memory = propose(nb, "expired an hour ago")
    nb.approve(memory)
    nb.set_validity(memory, valid_to=datetime.now(UTC) - timedelta(hours=1))
    nb.sql("SET TimeZone = 'Pacific/Kiritimati'", allow_write=True)
    assert "expired an hour ago" not in nb.context("analyst")
    assert nb.memories(status="approved").empty
    view = nb.sql("SELECT count(*) AS n FROM approved_memories")
    assert view["n"].item() == 0


def test_read_only_queries_still_read_everything(nb: npc_nb.Project) -> None:
    memory = propose(nb, "a fact")
    nb.approve(memory)
    frame = nb.sql("EXPLAIN ANALYZE SELECT * FROM v_memories WHERE id = $id", {"id": memory})
    assert not frame.empty
    rows = nb.sql("SELECT final_text FROM approved_memories")
    assert rows["final_text"].tolist() == ["a fact"]
    assert "a fact" in nb.context("analyst")  # the store connection is back afterwards
