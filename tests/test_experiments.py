"""Extraction experiments: arms kept apart from each other and from live memory, nothing
of an experiment in any live read before promote, blind review, resuming a killed run,
promotion through the live matcher, reproducible runs."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

import npc_nb
from npc_nb import Approve, Reject, Skip
from npc_nb.errors import ConfigError, InvalidValueError
from tests.helpers import as_reviewer, run_python, wait_until

SAME_FACT = "We decided to use DuckDB for all survey data."


def _script(*statements: str):
    """A scripted arm: the same statements for every exchange (evidence from the user)."""

    def extractor(user: str, reply: str) -> str:
        items = [
            {"statement": s, "category": "decision", "evidence_quote": s.rstrip(".")}
            for s in statements
            if s.rstrip(".") in user
        ]
        return json.dumps({"memories": items})

    return extractor


def _chat(nb: npc_nb.Project) -> None:
    nb.configure(extract_in_background=False)
    nb.npc("analyst", directive="You help analyse field data.", model="npc_nb/offline")
    nb.chat("analyst", f"{SAME_FACT} I prefer plots with large fonts.")
    nb.chat("analyst", "By Friday I will send the ringing dataset. We agreed to ring only adults.")
    nb.extraction.wait()


def _arms() -> dict:
    return {
        "A": {"extractor": _script(SAME_FACT, "By Friday I will send the ringing dataset.")},
        "B": {"extractor": _script(SAME_FACT), "prompt_version": "v2-secret"},
    }


def _live_texts(nb: npc_nb.Project) -> list[str]:
    return list(nb.review_queue()["final_text"])


def test_the_same_fact_from_two_arms_makes_two_cards_apart_from_live_memory(
    nb: npc_nb.Project,
) -> None:
    _chat(nb)
    live = nb.review_queue()
    live_card = live.loc[live["final_text"] == SAME_FACT, "id"].iloc[0]
    nb.reject(live_card, by="alice")  # a live tombstone of the very same fact
    exp = nb.experiment("apart", arms=_arms(), npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    session = exp.review_session(by="bob")
    texts = []
    while (card := session.card()) is not None:
        texts.append(card.text)
        session.decide(Approve(session.current))
    # one card per arm for the shared fact: not merged across arms, not suppressed by
    # the live tombstone; the live tombstone is untouched
    assert texts.count(SAME_FACT) == 2
    assert sorted(exp.results()["cards"]) == [1, 2]
    assert nb.memories(status="human-rejected")["final_text"].tolist() == [SAME_FACT]
    assert nb.reproposals().empty


def test_a_repeat_within_an_arm_is_merged_onto_that_arms_own_card(nb: npc_nb.Project) -> None:
    _chat(nb)
    nb.chat("analyst", f"Again: {SAME_FACT}")
    exp = nb.experiment("within", arms=_arms(), npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    results = exp.results().set_index("arm")
    assert results.loc["B", "candidates"] == 2 and results.loc["B", "cards"] == 1
    assert results.loc["B", "merged"] == 1


def test_nothing_of_an_experiment_reaches_any_live_read_before_promote(
    nb: npc_nb.Project, tmp_path: Path
) -> None:
    _chat(nb)
    live_queue = set(nb.review_queue()["id"])
    before = nb.snapshot("before")
    exp = nb.experiment("hidden", arms=_arms(), npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    session = exp.review_session(by="bob")
    while session.card() is not None:
        session.decide(Approve(session.current))
    assert exp.results()["approved"].sum() == 3
    # context, the live queue, the frames, the graph, metrics, exports, snapshots
    assert "DuckDB" not in nb.context("analyst", query="DuckDB survey data")
    assert set(nb.review_queue()["id"]) == live_queue
    assert nb.memories(status="approved").empty
    assert set(nb.memories()["id"]) == live_queue
    assert set(nb.decisions()["action"]) == {"propose"}
    nodes, edges = nb.graph.frames()
    assert nodes.empty and edges.empty
    assert nb.metrics.approval_rate()["approved"].sum() == 0
    paths = nb.exports.tables(tmp_path / "out", format="jsonl")
    assert "DuckDB" not in Path(paths["memories"]).read_text().replace("DuckDB for all", "")
    assert nb.snapshot("after").hash == before.hash
    assert nb._memory.nearest_approved(SAME_FACT, "analyst", None, limit=5, min_similarity=0) == []
    assert nb.sql("SELECT count(*) AS n FROM approved_memories")["n"][0] == 0
    # promoted, it does reach the prompt
    exp.promote("B", by="carol")
    assert SAME_FACT in nb.context("analyst", query="DuckDB survey data")


def test_promote_goes_through_the_live_matcher_and_does_nothing_twice(
    nb: npc_nb.Project,
) -> None:
    nb.configure(extract_in_background=False)
    nb.npc("analyst", directive="You help.", model="npc_nb/offline")
    facts = ["We use R for the statistics.", "We ring only adult birds.",
             "We keep the raw data on the lab server.", "We publish the code openly."]  # fmt: skip
    nb.chat("analyst", " ".join(facts))
    pending = nb.add_candidate(facts[0], category="decision", npc="analyst").memory_id
    approved = nb.add_candidate(facts[1], category="decision", npc="analyst").memory_id
    tombstone = nb.add_candidate(facts[2], category="decision", npc="analyst").memory_id
    nb.approve(approved, by="alice")
    nb.reject(tombstone, by="alice")
    arms = {"A": {"extractor": _script(*facts)}, "B": {"extractor": _script()}}
    exp = nb.experiment("promo", arms=arms, npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    session = exp.review_session(by="bob")
    while session.card() is not None:
        session.decide(Approve(session.current))
    promoted = exp.promote("A", by="carol")
    assert promoted.counts == {"approved": 1, "approved_card": 1, "reinforced": 1, "tombstoned": 1}
    assert promoted.tombstoned == [facts[2]]
    assert nb.memories(status="approved").set_index("final_text").loc[facts[0], "id"] == pending
    card_event = nb.decisions().set_index("memory_id").loc[pending].iloc[-1]
    assert card_event["reviewer"] == "carol" and "promoted from experiment" in card_event["reason"]
    assert facts[3] in set(nb.memories(status="approved")["final_text"])
    assert facts[2] not in set(nb.memories(status="approved")["final_text"])
    again = exp.promote("A", by="carol")
    assert len(again.rows) == 0 and "nothing new" in str(again)


def test_a_blind_card_shows_nothing_that_names_the_arm(nb: npc_nb.Project) -> None:
    _chat(nb)
    arms = {"control": {"model": "npc_nb/offline"}, "treatment": _arms()["B"]}
    exp = nb.experiment("blind", arms=arms, npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    session = exp.review_session(by="bob")
    shown = []
    while (card := session.card()) is not None:
        values = [v for k, v in dataclasses.asdict(card).items() if k != "memory_id"]
        shown.append(f"{card}\n{values}\n{card!r}".replace(card.memory_id, ""))
        session.decide((Skip if len(shown) > 10 else Approve)(session.current))
    text = "\n".join(shown)
    assert shown
    for revealing in ("control", "treatment", "v2-secret", "npc_nb/offline", "tests.test_exp"):
        assert revealing not in text
    recorded = nb.sql("SELECT hidden, card_order FROM experiment_reviews")
    assert "extractor model" in json.loads(recorded["hidden"][0])
    assert len(json.loads(recorded["card_order"][0])) == len(shown)


def test_the_blind_order_is_reproducible_from_the_seed(nb: npc_nb.Project) -> None:
    _chat(nb)
    nb.chat("analyst", "I prefer plots with large fonts. We agreed to ring only adults.")
    arms = {
        "A": {"model": "npc_nb/offline"},
        "B": {"model": "npc_nb/offline", "max_memories_per_exchange": 1},
    }

    def order(name: str, seed: int) -> list[tuple]:
        exp = nb.experiment(name, arms=arms, npc="analyst", seed=seed)
        exp.run()
        exp.wait(timeout=120)
        ids = exp.review_session().card_order()
        keys = nb.sql(
            "SELECT i.memory_id, a.name, i.message_id, i.item FROM experiment_items i "
            "JOIN experiment_arms a ON a.id = i.arm_id"
        )
        what = {row.memory_id: (row.name, row.message_id, row.item) for row in keys.itertuples()}
        return [what[i] for i in ids]

    first, again, other = order("s1", 7), order("s2", 7), order("s3", 8)
    assert first == again
    assert first != other and sorted(first) == sorted(other)
    arms_in_order = [arm for arm, _, _ in first]
    assert arms_in_order != sorted(arms_in_order)  # interleaved, not arm by arm


def test_an_experiment_opens_again_by_name_and_refuses_other_arms(nb: npc_nb.Project) -> None:
    _chat(nb)
    arms = {"A": {"model": "npc_nb/offline"}, "B": {"model": "npc_nb/offline", "temperature": 0.2}}
    exp = nb.experiment("again", arms=arms, npc="analyst", seed=3)
    assert nb.experiment("again").configuration() == exp.configuration()
    assert exp.configuration()["arms"]["B"]["temperature"] == 0.2
    with pytest.raises(ConfigError, match="exists with other arms"):
        nb.experiment("again", arms={"A": {}, "C": {}})
    with pytest.raises(ConfigError, match="unknown key 'modle'"):
        nb.experiment("typo", arms={"A": {"modle": "x"}, "B": {}})
    with pytest.raises(InvalidValueError, match="no arm 'Z'"):
        exp.promote("Z")
    listed = nb.experiments()
    assert listed["name"].tolist() == ["again"] and listed["state"].tolist() == ["created"]


def test_a_failing_arm_is_visible_per_arm(nb: npc_nb.Project) -> None:
    _chat(nb)

    def broken(user: str, reply: str) -> str:
        return "this is not JSON"

    arms = {"A": {"model": "npc_nb/offline"}, "B": {"extractor": broken}}
    exp = nb.experiment("fails", arms=arms, npc="analyst")
    exp.run()
    status = exp.wait(timeout=120)
    rows = {row["arm"]: row for row in status.rows}
    assert rows["A"]["failed"] == 0 and rows["B"]["failed"] == 2
    assert "OutputError" in rows["B"]["last_error"]
    assert "B: 0/2 done, 2 failed" in str(status)


def test_a_killed_run_resumes_without_duplicates(project_dir: Path, isolated_home: Path) -> None:
    nb = npc_nb.open(project_dir)
    _chat(nb)
    for n in range(6):
        nb.chat("analyst", f"We decided to use plan {n} for the survey. I prefer plot style {n}.")
    nb.extraction.wait()
    nb.close()
    code = f"""
        import npc_nb
        nb = npc_nb.open({str(project_dir)!r}, offline_delay=1.0)
        exp = nb.experiment("killed", arms={{"A": {{"model": "npc_nb/offline"}},
            "B": {{"model": "npc_nb/offline", "max_memories_per_exchange": 1}}}}, npc="analyst")
        exp.run()
        print("running", flush=True)
        exp.wait(timeout=600)
    """
    process = run_python(code, env_home=isolated_home, wait=False)
    assert process.stdout.readline().strip() == "running"

    def items_done() -> int:
        found = run_python(
            f"import npc_nb; nb = npc_nb.open({str(project_dir)!r}, create=False);"
            "print(nb.sql('SELECT count(*) AS n FROM experiment_items')['n'][0])",
            env_home=isolated_home,
        )
        return int(found.strip()) >= 3

    wait_until(items_done, what="some items proposed by the first run")
    process.kill()  # a real kill, mid-run: no clean-up of any kind
    process.communicate()
    nb = npc_nb.open(project_dir)
    exp = nb.experiment("killed")
    assert exp.status().state.startswith("interrupted")
    assert 0 < sum(row["done"] for row in exp.status().rows) < 16  # killed mid-run
    exp.run()
    exp.wait(timeout=240)
    jobs = nb.sql("SELECT state, count(*) AS n FROM experiment_jobs GROUP BY state")
    assert jobs.set_index("state")["n"].to_dict() == {"done": 16}
    cards = nb.sql(
        "SELECT experiment_arm, source_message_id, final_text, count(*) AS n FROM memories "
        "WHERE experiment_arm IS NOT NULL GROUP BY ALL HAVING count(*) > 1"
    )
    assert cards.empty
    reproposed = nb.sql(
        "SELECT count(*) AS n FROM reproposals r JOIN memories m ON m.id = r.memory_id "
        "WHERE m.experiment_arm IS NOT NULL"
    )
    assert reproposed["n"][0] == 0
    items = nb.sql("SELECT count(*) AS n FROM experiment_items")["n"][0]
    assert items == exp.results()["candidates"].sum() == exp.results()["cards"].sum()
    nb.close()


def test_a_replayed_run_on_a_copy_extracts_the_same(project_dir: Path, tmp_path: Path) -> None:
    nb = npc_nb.open(project_dir, model_replay="record")
    _chat(nb)
    arms = {
        "A": {"model": "npc_nb/offline"},
        "B": {"model": "npc_nb/offline", "prompt": "Only decisions, at most {limit}."},
    }
    exp = nb.experiment("replayed", arms=arms, npc="analyst", seed=5)
    exp.run()
    exp.wait(timeout=120)
    first = _extracted(nb)
    nb.close()
    copy = tmp_path / "copy"
    shutil.copytree(project_dir, copy)
    again = npc_nb.open(copy, model_replay="replay")
    # The recordings stay whole: a row deleted by SQL breaks their hash chain, and a replay
    # refuses the recordings after it (it cannot vouch for them). Replay calls no model.
    rerun = again.experiment("replayed-again", arms=arms, npc="analyst", seed=5)
    rerun.run()
    rerun.wait(timeout=120)
    assert _extracted(again, "replayed-again") == first
    assert rerun.configuration()["arms"] == exp.configuration()["arms"]
    again.close()


def _extracted(nb: npc_nb.Project, name: str = "replayed") -> list[tuple]:
    return [
        tuple(row)
        for row in nb.sql(
            "SELECT a.name, j.message_id, j.raw_output FROM experiment_jobs j "
            "JOIN experiment_arms a ON a.id = j.arm_id "
            "JOIN experiments e ON e.id = a.experiment_id "
            "WHERE e.name = $name ORDER BY a.name, j.message_id",
            {"name": name},
        ).itertuples(index=False)
    ]


def test_in_independent_review_an_experiment_card_needs_two_votes_and_disagreements_are_adjudicated(
    project_dir: Path,
) -> None:
    """Two reviewers review an experiment blind and independently: agreeing votes make a
    card final within its arm, a disagreement waits for an adjudicator who did not vote,
    and none of it reaches live memory before promote."""
    nb = npc_nb.open(project_dir, review_mode="independent")
    _chat(nb)
    exp = nb.experiment("double", arms=_arms(), npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    ada = as_reviewer(nb, "ada").experiment("double").review_session()
    while ada.card() is not None:
        ada.decide(Approve(ada.current))
    bob = as_reviewer(nb, "bob").experiment("double").review_session()
    notes = []
    while (card := bob.card()) is not None:
        notes.append(card.review_note)
        assert "ada" not in repr(card)
        bob.decide((Reject if card.text == SAME_FACT else Approve)(bob.current))
    assert notes == ["independent review: 1 of 2 votes"] * 3
    results = exp.results().set_index("arm")
    assert results.loc["A", "approved"] == 1 and results.loc["B", "approved"] == 0
    assert (
        as_reviewer(nb, "ada").experiment("double").review_session(adjudicate=True).card() is None
    )  # she voted on them
    carol = as_reviewer(nb, "carol").experiment("double").review_session(adjudicate=True)
    waiting = []
    while (card := carol.card()) is not None:
        waiting.append(card.text)
        carol.decide(Approve(carol.current))
    assert waiting == [SAME_FACT, SAME_FACT]  # one card per arm, both disagreed on
    assert exp.results().set_index("arm")["approved"].to_dict() == {"A": 2, "B": 1}
    assert "DuckDB" not in nb.context("analyst", query="DuckDB survey data")
    nb.close()
