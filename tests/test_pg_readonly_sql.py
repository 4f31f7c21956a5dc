"""Read-only SQL has no side effects on PostgreSQL either: ``nb.sql`` without
``allow_write`` reaches the server only through the attached tables, so it cannot send a
notice, take a lock or change a setting there, however the call is disguised."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import psycopg
import pytest

import npc_nb
from npc_nb.store.server.attach import connect as analysis_connection
from npc_nb.store.server.database import PostgresStore
from npc_nb.store.server.read_only import REFUSED
from tests.helpers import propose, wait_until

CHANNEL = "npc_nb_test_channel"
NOTIFY = f"SELECT pg_notify(''{CHANNEL}'', ''forged'')"
SERVER_CALL = f"postgres_query('pg', '{NOTIFY}')"
INNER = f"SELECT * FROM {SERVER_CALL}"

DISGUISES = [
    INNER,
    f"SELECT * FROM POSTGRES_QUERY('pg', '{NOTIFY}')",
    f"SELECT * FROM \"postgres_query\"('pg', '{NOTIFY}')",
    f"SELECT * FROM Postgres_Query/* a comment */('pg', '{NOTIFY}')",
    f"SELECT * FROM system.main.postgres_query('pg', '{NOTIFY}')",
    f"WITH n AS (SELECT * FROM {SERVER_CALL}) SELECT * FROM n",
    f"SELECT (SELECT count(*) FROM {SERVER_CALL}) AS n",
    f"SELECT * FROM memories WHERE EXISTS (FROM {SERVER_CALL})",
    f"SELECT 1; {INNER}",
    f"FROM {SERVER_CALL}",
    f"SUMMARIZE {INNER}",
    f"EXPLAIN ANALYZE {INNER}",
    f"EXPLAIN (ANALYZE) {INNER}",
    f"/* c */ EXPLAIN/**/ANALYZE {INNER}",
    f"EXPLAIN {INNER}",
    "SELECT * FROM query('{}')".format(INNER.replace("'", "''")),
    "SELECT * FROM query(CASE WHEN random() < 2 THEN '{}' ELSE 'SELECT 1' END)".format(
        INNER.replace("'", "''")
    ),
    "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('{}'))".format(
        INNER.replace("'", "''")
    ),
    f"SELECT * FROM postgres_execute('pg', 'NOTIFY {CHANNEL}, ''forged''')",
    f"CALL postgres_execute('pg', 'NOTIFY {CHANNEL}, ''forged''')",
]


@pytest.fixture
def nb(project_dir: Path, postgres_url: str) -> Iterator[npc_nb.Project]:
    project = npc_nb.open(project_dir, store=postgres_url, extract_in_background=False)
    propose(project, "The cluster is called Orca")
    yield project
    project.close()


@pytest.fixture
def listening(postgres_url: str) -> Iterator[psycopg.Connection]:
    """A connection LISTENing on the test channel."""
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute(f"LISTEN {CHANNEL}")
        yield con


def heard(listening: psycopg.Connection, postgres_url: str) -> list[str]:
    """What ``listening`` received before a sentinel sent now (notices arrive in commit
    order, so anything a query sent earlier arrives before the sentinel)."""
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute("SELECT pg_notify(%s, 'sentinel')", [CHANNEL])
    payloads: list[str] = []

    def sentinel_arrived() -> bool:
        payloads.extend(n.payload for n in listening.notifies(timeout=0.2))
        return "sentinel" in payloads

    wait_until(sentinel_arrived, what="the sentinel notice")
    return payloads[: payloads.index("sentinel")]


@pytest.mark.parametrize("statement", DISGUISES)
def test_read_only_sql_cannot_send_a_notice_through_the_server(
    nb: npc_nb.Project, listening: psycopg.Connection, postgres_url: str, statement: str
) -> None:
    with pytest.raises(npc_nb.QueryError, match="read-only query path|could change the store"):
        nb.sql(statement)
    assert heard(listening, postgres_url) == []


def test_read_only_sql_cannot_hide_the_call_in_a_parameter(
    nb: npc_nb.Project, listening: psycopg.Connection, postgres_url: str
) -> None:
    with pytest.raises(npc_nb.QueryError, match=r"query\(\) runs SQL"):
        nb.sql("SELECT * FROM query(?)", [INNER])
    serialized = duckdb.execute("SELECT json_serialize_sql(?)", [INNER]).fetchone()
    assert serialized is not None
    with pytest.raises(npc_nb.QueryError, match="read-only query path"):
        nb.sql("PRAGMA json_execute_serialized_sql('{}')".format(serialized[0].replace("'", "''")))
    assert heard(listening, postgres_url) == []


@pytest.mark.parametrize(
    "server_sql",
    [
        "SELECT pg_advisory_lock(42)",
        "SELECT pg_try_advisory_lock(hashtextextended(''npc_nb:worker'', 0))",
        "SELECT set_config(''statement_timeout'', ''1'', false)",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    ],
)
def test_read_only_sql_cannot_lock_or_set_anything_on_the_server(
    nb: npc_nb.Project, server_sql: str
) -> None:
    with pytest.raises(npc_nb.QueryError, match=r"postgres_query\(\) sends SQL"):
        nb.sql(f"SELECT * FROM postgres_query('pg', '{server_sql}')")
    assert len(nb.sql("SELECT * FROM memories")) == 1  # the store still answers


def test_the_attached_server_session_is_read_only_as_well(
    nb: npc_nb.Project, postgres_url: str
) -> None:
    """A path the check missed still could not write: the server refuses."""
    store = nb._memory.stores.project
    assert isinstance(store, PostgresStore)
    con = analysis_connection(store.url, store.schema, locked=True)
    try:
        found = con.execute(
            "SELECT * FROM postgres_query('pg', "
            "'SELECT current_setting(''default_transaction_read_only'') AS v')"
        ).fetchall()
        assert found == [("on",)]
        with pytest.raises(duckdb.Error, match="read-only transaction"):
            con.execute(f"CALL postgres_execute('pg', 'CREATE TABLE {store.schema}.leak (x int)')")
    finally:
        con.close()


@pytest.mark.parametrize(
    ("statement", "params"),
    [
        ("SELECT count(*) AS n FROM memories WHERE final_text LIKE ?", ["%Orca%"]),
        ("EXPLAIN SELECT * FROM memories", None),
        ("EXPLAIN ANALYZE SELECT count(*) FROM v_memories", None),
        ("/* why */ SELECT * FROM query_table('memories')", None),
        ("DESCRIBE memories", None),
        ("SUMMARIZE SELECT final_text FROM memories", None),
        ("WITH m AS (SELECT * FROM memories) SELECT count(*) FROM m, range(2)", None),
        ("SELECT * FROM pragma_version()", None),
    ],
)
def test_ordinary_analysis_still_runs(
    nb: npc_nb.Project, statement: str, params: list[Any] | None
) -> None:
    assert len(nb.sql(statement, params)) >= 1


def test_every_server_function_of_the_extension_is_refused(nb: npc_nb.Project) -> None:
    store = nb._memory.stores.project
    assert isinstance(store, PostgresStore)
    with store.analysis() as con:
        names = {
            name
            for (name,) in con.execute(
                "SELECT DISTINCT function_name FROM duckdb_functions() "
                "WHERE function_type = 'table' AND "
                "(function_name LIKE 'postgres%' OR function_name LIKE '%postgres_binary')"
            ).fetchall()
        }
    assert names and names <= REFUSED
