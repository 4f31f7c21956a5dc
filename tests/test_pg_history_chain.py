"""Tamper-evident history on the shared store (PostgreSQL): two kernels appending at
once still form one chain; every change made by SQL is found by ``nb.verify()``, by a
read at a snapshot or by a replay; recordings are append-only for every role, and a
reviewer's recording appended later under a genuine fingerprint is never served.

Each test gets a fresh database on the session's throwaway server.
"""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

import npc_nb
from npc_nb._foundations.store_url import project_schema
from npc_nb.errors import HistoryChangedError
from tests import fake_models
from tests.helpers import as_reviewer, propose
from tests.test_pg_roles import lab  # noqa: F401  (the owner, reviewer and reader fixture)

MODEL = "scripted/any"


@pytest.fixture(autouse=True)
def scripted() -> None:
    fake_models.install()


def run_sql(url: str, sql: str, params: list | None = None, schema: str = "project") -> None:
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f"SET search_path TO {project_schema(schema)}")
        con.execute(sql, params or [])


def test_two_kernels_appending_at_once_form_one_chain(project_dir: Path, postgres_url: str) -> None:
    kernels = [npc_nb.open(project_dir, store=postgres_url) for _ in range(2)]
    failures: list[BaseException] = []

    def propose_many(nb: npc_nb.Project, name: str) -> None:
        try:
            for i in range(12):
                nb.approve(propose(nb, f"Fact {i} told to {name}"), by=name)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [
        threading.Thread(target=propose_many, args=(nb, f"kernel{i}"))
        for i, nb in enumerate(kernels)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert failures == []
        found = kernels[0].verify()
        assert found.ok, found.problems
        seqs = kernels[0].sql("SELECT chain_seq FROM memory_events ORDER BY chain_seq")
        chained = seqs["chain_seq"].tolist()
        assert len(chained) >= 48 and chained == list(range(1, len(chained) + 1))
    finally:
        for nb in kernels:
            nb.close()


def test_recordings_are_append_only_and_a_reviewer_s_later_one_is_never_served(
    lab: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    owner = npc_nb.open(tmp_path / "alpha", store=lab["owner"])
    owner.configure(model_replay="record", extraction_model="npc_nb/offline")
    fake_models.SCRIPT.append("Large fonts, then.")
    owner.chat("analyst", "Which fonts?", model=MODEL, new=True)
    owner.close()
    for url in (lab["owner"], lab["reviewer"]):
        with pytest.raises(psycopg.Error, match="append-only|permission denied"):
            run_sql(url, "UPDATE model_recordings SET reply = 'Small fonts.'", schema="alpha")
    run_sql(
        lab["reviewer"],
        "INSERT INTO model_recordings (id, fingerprint, model, caller, request, reply, "
        "recorded_at) SELECT 'forged', fingerprint, model, caller, request, 'Small fonts.', "
        "recorded_at + interval '1 day' FROM model_recordings",
        schema="alpha",
    )
    reviewer = npc_nb.open(tmp_path / "alpha", store=lab["reviewer"], model_replay="replay")
    try:
        reply = reviewer.chat("analyst", "Which fonts?", model=MODEL, new=True)
        assert reply.text == "Large fonts, then."  # the first recording, never the later
        problems = " ".join(reviewer.verify().problems)
        assert "model_recordings row id='forged' has no hash" in problems
    finally:
        reviewer.close()


def test_a_memory_changed_by_sql_is_refused_at_the_snapshot_and_named_by_verify(
    project_dir: Path, postgres_url: str
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    try:
        fonts = propose(nb, "Fonts are large")
        nb.approve(fonts)
        nb.snapshot("submitted")
        assert "Fonts are large" in nb.context("analyst", as_of="submitted")
        run_sql(postgres_url, "UPDATE memories SET final_text = 'Fonts are small' WHERE id = %s",
                [fonts])  # fmt: skip
        other = npc_nb.open(project_dir, store=postgres_url)
        try:
            with pytest.raises(HistoryChangedError, match=fonts):
                other.context("analyst", as_of="submitted")
            problems = other.verify().problems
            assert any(fonts in p and "text was changed by SQL" in p for p in problems)
            assert any("snapshot 'submitted'" in p for p in problems)
        finally:
            other.close()
    finally:
        nb.close()


def test_a_memory_approved_by_sql_is_reported_and_not_exported(
    project_dir: Path, postgres_url: str, tmp_path: Path
) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    try:
        memory = propose(nb, "Budget is ten thousand")
        run_sql(postgres_url, "UPDATE memories SET status = 'human-approved' WHERE id = %s",
                [memory])  # fmt: skip
        problems = " ".join(nb.verify().problems)
        assert f"memory {memory!r} is human-approved but its last audit event" in problems
        with pytest.raises(HistoryChangedError, match="cannot be exported"):
            nb.export_bundle(tmp_path / "out.npcbundle")
    finally:
        nb.close()


def test_a_vote_changed_by_sql_is_named_by_verify(project_dir: Path, postgres_url: str) -> None:
    nb = npc_nb.open(project_dir, store=postgres_url)
    try:
        nb.configure(review_mode="independent", reviewers_per_card=2)
        as_reviewer(nb, "ana").approve(propose(nb, "Codes are upper case"))
        as_reviewer(nb, "zoe").approve(propose(nb, 'Größe: "très" grand ✓\nzweite Zeile \\ 100%'))
        assert nb.verify().ok
        # Votes are append-only for every role: a tamperer must be a superuser who
        # switches the guard off first. The chain still tells.
        run_sql(
            postgres_url,
            "ALTER TABLE votes DISABLE TRIGGER votes_no_change; "
            "UPDATE votes SET decision = 'reject'; "
            "ALTER TABLE votes ENABLE TRIGGER votes_no_change",
        )
        problems = " ".join(nb.verify().problems)
        assert "votes row id=" in problems and "changed after it was written" in problems
    finally:
        nb.close()


def test_a_reviewer_s_recording_forged_before_the_chain_s_first_place_is_never_served(
    lab: dict[str, str],  # noqa: F811
    tmp_path: Path,
) -> None:
    """The reviewer knows the documented link: a reply with the genuine fingerprint at
    place 0, linked from the chain's start, would come first in the chain's order."""
    from npc_nb.store.schema.chains import digest_sql, sha256_sql

    owner = npc_nb.open(tmp_path / "alpha", store=lab["owner"])
    owner.configure(model_replay="record", extraction_model="npc_nb/offline")
    fake_models.SCRIPT.append("Large fonts, then.")
    owner.chat("analyst", "Which fonts?", model=MODEL, new=True)
    owner.close()
    columns = (
        "id, fingerprint, model, caller, request, reply, prompt_tokens, completion_tokens, "
        "recorded_at, chain_seq"
    )
    forged_link = sha256_sql(digest_sql("model_recordings", duck=False), duck=False)
    run_sql(
        lab["reviewer"],
        f"INSERT INTO model_recordings ({columns}, chain_hash) "
        f"SELECT {columns}, {forged_link} FROM (SELECT 'forged' AS id, fingerprint, model, "
        "caller, request, 'Small fonts.' AS reply, prompt_tokens, completion_tokens, "
        "recorded_at, CAST(0 AS BIGINT) AS chain_seq FROM model_recordings) AS f",
        schema="alpha",
    )
    reviewer = npc_nb.open(tmp_path / "alpha", store=lab["reviewer"], model_replay="replay")
    try:
        try:
            reply = reviewer.chat("analyst", "Which fonts?", model=MODEL, new=True)
        except HistoryChangedError:
            pass  # refused: never the forged reply
        else:
            assert reply.text == "Large fonts, then."
    finally:
        reviewer.close()
    owner = npc_nb.open(tmp_path / "alpha", store=lab["owner"])
    try:
        assert "'forged'" in " ".join(owner.verify().problems)
    finally:
        owner.close()
