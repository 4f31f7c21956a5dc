"""Decision notices on a shared store are hints, never facts: a role that may only read
can still NOTIFY on a project's channel, and what it claims changes nothing until the
store shows it. Real decisions from another kernel still reach an open review."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import npc_nb
from npc_nb import Approve
from npc_nb.store.server.database import PostgresStore
from npc_nb.store.server.listener import channel_for
from npc_nb.store.server.roles import grant_statements
from tests.helpers import propose, wait_until
from tests.postgres import PostgresServer

#: How long a test waits for a notice to be heard (a limit on a wait, not on speed).
GENEROUS = 10.0


def project_store(nb: npc_nb.Project) -> PostgresStore:
    store = nb._memory.stores.project
    assert isinstance(store, PostgresStore)
    return store


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """Owner, reviewer and reader roles (unique to this test) on project 'alpha'."""
    database = PostgresServer.database_name(postgres_url)
    roles = {kind: f"{kind}_{database}" for kind in ("owner", "reviewer", "reader")}
    for role in roles.values():
        postgres_server.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    postgres_server.execute(f"GRANT CREATE ON DATABASE {database} TO {roles['owner']}")
    urls = {
        kind: postgres_server.url_for(database, user=role, password="pw")
        for kind, role in roles.items()
    }
    (tmp_path / "alpha" / ".git").mkdir(parents=True)
    npc_nb.open(tmp_path / "alpha", store=urls["owner"]).close()  # creates the schema
    for statement in grant_statements(
        "npc_alpha", reviewer=roles["reviewer"], reader=roles["reader"]
    ):
        postgres_server.execute(statement, database=urls["owner"])
    return urls


@pytest.fixture
def alice(lab: dict[str, str], tmp_path: Path) -> Iterator[npc_nb.Project]:
    """A reviewer's kernel, listening."""
    nb = npc_nb.open(
        tmp_path / "alpha", store=lab["reviewer"], reviewer="alice", extract_in_background=False
    )
    assert project_store(nb).wait_listening(GENEROUS)
    yield nb
    nb.close()


@pytest.fixture
def bob(lab: dict[str, str], tmp_path: Path) -> Iterator[npc_nb.Project]:
    """Another kernel deciding in the same project (its own connection and listener)."""
    nb = npc_nb.open(
        tmp_path / "alpha", store=lab["owner"], reviewer="bob", extract_in_background=False
    )
    yield nb
    nb.close()


def forge(reader_url: str, *payloads: dict[str, str | None]) -> None:
    """Send notices as the reader role, with pg_notify and with NOTIFY."""
    with psycopg.connect(reader_url, autocommit=True) as con:
        for n, payload in enumerate(payloads):
            text = json.dumps(payload)
            if n % 2:
                channel = psycopg.sql.Identifier(channel_for("npc_alpha"))
                con.execute(psycopg.sql.SQL("NOTIFY {}, {}").format(channel, text))
            else:
                con.execute("SELECT pg_notify(%s, %s)", [channel_for("npc_alpha"), text])


def test_a_forged_approval_leaves_the_card_in_review_and_is_counted(
    alice: npc_nb.Project, bob: npc_nb.Project, lab: dict[str, str]
) -> None:
    first = propose(alice, "The cluster is called Orca")
    second = propose(alice, "Backups run nightly at 02:00")
    session = alice.review_session()
    assert session.current == first  # its row is read: the card is on screen
    store = project_store(alice)

    forge(
        lab["reader"],
        {"id": first, "status": "human-approved", "by": "alice"},
        {"id": first, "status": "human-rejected", "by": "alice"},
        {"id": "0190-no-such-memory", "status": "human-approved", "by": "alice"},
    )
    bob.approve(second)  # a real decision, made after the forged ones

    wait_until(lambda: second not in session._queue, timeout=GENEROUS, what="the real drop")
    assert session.current == first  # the forged approval changed nothing
    assert session.remaining == 1
    assert session.elsewhere is not None and "approved by bob" in session.elsewhere
    assert store.unconfirmed_notices == 3
    status = str(alice.status())
    assert "3 decision notice(s) the store did not confirm (possible spoofing" in status
    assert "Orca" not in alice.context("analyst")  # the cache was not fooled either
    assert "Backups run nightly" in alice.context("analyst")
    assert session.decide(Approve(session.current)).memory_ids == [
        first
    ]  # still pending in the store


def test_a_real_notice_overtaken_by_a_later_decision_is_not_counted(
    alice: npc_nb.Project, bob: npc_nb.Project, lab: dict[str, str]
) -> None:
    memory_id = propose(alice, "The cluster is called Orca")
    keep = propose(alice, "Backups run nightly at 02:00")
    session = alice.review_session()
    store = project_store(alice)
    bob.approve(memory_id)
    bob.undo()  # back in the queue before anyone looked
    wait_until(lambda: memory_id in session._queue, timeout=GENEROUS, what="the undo")
    # The approval's claim, heard once more (late, or replayed): the store shows a later
    # status, its audit log the claimed change. Nothing changes, nothing is counted.
    forge(lab["reader"], {"id": memory_id, "status": "human-approved", "by": "bob"})
    bob.approve(keep)
    wait_until(lambda: keep not in session._queue, timeout=GENEROUS, what="the real drop")
    assert session.current == memory_id
    assert store.unconfirmed_notices == 0
    assert "WARNING" not in str(alice.status())


def test_a_burst_of_decisions_is_checked_in_a_few_reads(
    alice: npc_nb.Project, bob: npc_nb.Project
) -> None:
    ids = [propose(alice, f"Station {n} logs at {n} Hz") for n in range(60)]
    session = alice.review_session()
    store = project_store(alice)
    assert session.remaining == len(ids)
    reads = store._checks.reads
    bob.approve_all(bob.preview_approve_all(ids=ids))  # 60 notices, delivered together on commit
    wait_until(lambda: session.remaining == 0, timeout=GENEROUS, what="the burst")
    assert store._checks.reads - reads <= 6
    assert store.unconfirmed_notices == 0
