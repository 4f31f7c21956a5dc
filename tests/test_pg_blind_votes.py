"""Blind in the store: on a real PostgreSQL server, from each role's seat (owner,
reviewer, reader), another reviewer's vote on an open card is out of reach of every
read path (``nb.votes``, ``nb.decisions``, ``nb.sql`` on both paths, exports, the
agreement metrics, LISTEN), votes are append-only for every role, and a reviewer
casts votes only as the role it is connected as."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

import npc_nb
from npc_nb.store.server.listener import channel_for
from tests.helpers import propose, status_of
from tests.postgres import PostgresServer, lab_project

SCHEMA = "npc_alpha"
#: What alice wrote in her open vote: nothing of it may reach bob or the reader.
ALICES_EDIT = "The lab meets on Tuesdays at ten sharp"


@pytest.fixture
def lab(postgres_server: PostgresServer, postgres_url: str, tmp_path: Path) -> dict[str, str]:
    """An owner, two reviewers (alice, bob) and a reader, unique to this test, on project
    'alpha' in independent review; the owner granted each their level."""
    return lab_project(
        postgres_server,
        postgres_url,
        tmp_path / "alpha",
        {"alice": "reviewer", "bob": "reviewer", "reader": "reader"},
    )


def open_as(lab: dict[str, str], kind: str) -> npc_nb.Project:
    return npc_nb.open(
        lab["folder"], store=lab[kind], review_mode="independent", reviewer=kind, matcher=None
    )


def seen_by(nb: npc_nb.Project, url: str, tmp_path: Path, memory_id: str) -> str:
    """Everything this role's read paths give about the card, as one text: the API,
    both SQL paths (DuckDB over the attached schema, and the server's own SQL), and
    the exports."""
    folder = tmp_path / f"export-{id(nb)}"
    written = nb.exports.tables(folder, format="jsonl")
    parts = [
        nb.votes(history=True).to_string(),
        nb.decisions().to_string(),
        nb.sql("SELECT * FROM votes").to_string(),
        _server_rows(url, f"SELECT * FROM {SCHEMA}.votes"),
        _server_rows(url, f"SELECT * FROM {SCHEMA}.npc_nb_open_ballots()"),
        nb.sql("SELECT * FROM v_decisions WHERE memory_id = ?", [memory_id]).to_string(),
        *(path.read_text() for path in written.values()),
    ]
    return "\n".join(parts)


def _server_rows(url: str, sql: str) -> str:
    with psycopg.connect(url) as con:
        return repr(con.execute(sql).fetchall())


def test_an_open_vote_is_hidden_from_the_other_reviewer_and_the_reader(
    lab: dict[str, str], tmp_path: Path
) -> None:
    alice = open_as(lab, "alice")
    open_card = propose(alice, "The lab meets on Mondays")
    settled = propose(alice, "The budget is 10k")
    alice.edit(open_card, ALICES_EDIT)
    alice.approve(settled)
    bob = open_as(lab, "bob")
    bob.approve(settled)  # agreed: settled
    assert status_of(bob, settled) == "human-approved"
    reader = open_as(lab, "reader")
    owner = open_as(lab, "owner")
    for nb, kind in ((bob, "bob"), (reader, "reader")):
        shown = seen_by(nb, lab[kind], tmp_path, open_card)
        assert ALICES_EDIT not in shown
        assert open_card not in set(nb.votes(history=True)["memory_id"])
        assert open_card not in set(nb.sql("SELECT memory_id FROM votes")["memory_id"])
        assert sorted(nb.votes(settled)["reviewer"]) == ["alice", "bob"]  # settled: shown
        agreement = nb.metrics.agreement()
        assert agreement["cards"].tolist() == [1]  # only the settled card's votes count
        rewound = nb.metrics.agreement(as_of=datetime.now(UTC))  # blind in the past too
        assert rewound["cards"].tolist() == [1] and rewound["votes"].tolist() == [2]
    assert bob.review_queue(by="bob")[["id", "votes"]].values.tolist() == [[open_card, 1]]
    assert alice.votes(open_card)["final_text"].tolist() == [ALICES_EDIT]  # her own
    assert owner.votes(open_card)["final_text"].tolist() == [ALICES_EDIT]  # the owner: all
    for nb in (alice, bob, reader, owner):
        nb.close()


def test_a_complete_round_is_shown_to_reviewers_to_adjudicate_and_to_readers_once_settled(
    lab: dict[str, str],
) -> None:
    alice, bob, reader = open_as(lab, "alice"), open_as(lab, "bob"), open_as(lab, "reader")
    card = propose(alice, "We use DuckDB for everything")
    alice.approve(card)
    bob.reject(card)  # the round is complete, and disputed
    with pytest.raises(npc_nb.DecisionError, match="round is complete"):
        bob.undo()
    assert sorted(bob.votes(card)["decision"]) == ["approve", "reject"]  # to adjudicate
    assert reader.votes(card).empty  # not settled yet
    owner = open_as(lab, "owner")
    owner.adjudicate(card, vote=1)
    assert sorted(reader.votes(card)["decision"]) == ["approve", "reject"]
    for nb in (alice, bob, reader, owner):
        nb.close()


def test_votes_are_append_only_for_every_role(
    lab: dict[str, str], postgres_server: PostgresServer, postgres_url: str
) -> None:
    alice = open_as(lab, "alice")
    card = propose(alice, "Coffee is free on Tuesdays")
    alice.approve(card)
    alice.close()
    for url in (lab["owner"], lab["alice"], lab["bob"], lab["reader"], postgres_url):
        for statement in (
            f"UPDATE {SCHEMA}.votes SET decision = 'reject'",
            f"DELETE FROM {SCHEMA}.votes",
            f"TRUNCATE {SCHEMA}.votes",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                postgres_server.execute(statement, database=url)
    owner = open_as(lab, "owner")
    assert owner.votes(card)["decision"].tolist() == ["approve"]
    with pytest.raises(npc_nb.StoreError):
        owner.sql("UPDATE votes SET decision = 'reject'", allow_write=True)
    owner.close()


def test_a_reviewer_casts_votes_only_as_the_role_it_is(
    lab: dict[str, str], postgres_server: PostgresServer
) -> None:
    alice = open_as(lab, "alice")
    card = propose(alice, "The wiki moved")
    alice.approve(card)
    database = PostgresServer.database_name(lab["bob"])  # it ends every role's name
    bob_role = f"bob_{database}"
    spoof = (
        f"INSERT INTO {SCHEMA}.votes (id, memory_id, round, reviewer, decision, voted_at, "
        f"event_seq, reviewer_role) VALUES ('x', %s, 1, 'bob', 'approve', now(), 0, %s)"
    )
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # row-level security
        postgres_server.execute(spoof, [card, bob_role], database=lab["alice"])
    owner = open_as(lab, "owner")
    recorded = owner.sql("SELECT reviewer, reviewer_role FROM votes")
    assert recorded.values.tolist() == [["alice", f"alice_{database}"]]
    owner.close()
    alice.close()


def test_a_listen_on_the_project_s_channel_never_names_a_voter(lab: dict[str, str]) -> None:
    alice, bob = open_as(lab, "alice"), open_as(lab, "bob")
    card = propose(alice, "Standup is at 09:30")
    with psycopg.connect(lab["reader"], autocommit=True) as listener:
        listener.execute(f'LISTEN "{channel_for(SCHEMA)}"')
        alice.approve(card)
        bob.approve(card)  # completes an agreement
        payloads = [json.loads(n.payload) for n in listener.notifies(timeout=5, stop_after=3)]
    assert [p["id"] for p in payloads] == [card, card, card]
    assert [p["by"] for p in payloads] == [None] * len(payloads)  # votes and the agreement
    alice.close()
    bob.close()


def test_on_postgresql_a_reviewer_role_withdraws_and_adjudicates_under_its_own_role(
    lab: dict[str, str],
) -> None:
    alice, bob, owner = (open_as(lab, kind) for kind in ("alice", "bob", "owner"))
    withdrawn, disputed = propose(alice, "Standup is at 09:30"), propose(alice, "Budget is 10k")
    alice.approve(withdrawn)
    alice.undo()  # her round still collects votes: the vote is withdrawn
    alice.approve(disputed)
    bob.reject(disputed)
    owner.adjudicate(disputed, vote=2)
    owner.undo()  # the adjudication is reverted, the round reopened for adjudication
    log = owner.decisions()
    database = lab["alice"].rsplit("/", 1)[-1]
    roles = dict(zip(log["action"], log["reviewer_role"], strict=False))
    assert roles["withdraw_vote"] == f"alice_{database}"
    assert roles["adjudicate"] == roles["undo"] == f"owner_{database}"
    assert owner.votes(disputed)["reviewer_role"].tolist() == [
        f"alice_{database}",
        f"bob_{database}",
    ]
    for nb in (alice, bob, owner):
        nb.close()
