"""Metrics on stores with known decisions, compared with values worked out by hand."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest

import npc_nb
from npc_nb.analytics.intervals import wilson_interval
from npc_nb.store.schema.views import VIEW_COLUMNS
from tests.helpers import propose


def at(nb: npc_nb.Project, memory_id: str, recorded: datetime, *decided: datetime) -> None:
    """Pin a memory's proposal time and its decision events' times (in order)."""
    nb.sql("UPDATE memories SET recorded_at = ? WHERE id = ?", [recorded, memory_id],
           allow_write=True)  # fmt: skip
    seqs = nb.sql("SELECT seq FROM memory_events WHERE memory_id = ? AND action <> 'propose' "
                  "ORDER BY seq", [memory_id])["seq"].tolist()  # fmt: skip
    nb.sql("UPDATE memory_events SET occurred_at = ? WHERE memory_id = ? AND action = 'propose'",
           [recorded, memory_id], allow_write=True)  # fmt: skip
    for seq, moment in zip(seqs, decided, strict=True):
        nb.sql("UPDATE memory_events SET occurred_at = ? WHERE seq = ?", [moment, seq],
               allow_write=True)  # fmt: skip


def row(frame, **keys) -> dict:
    selected = frame
    for column, value in keys.items():
        selected = selected[selected[column] == value]
    (record,) = selected.to_dict("records")
    return record


def test_no_memories_gives_zero_counts_and_undefined_rates(nb: npc_nb.Project) -> None:
    frame = nb.metrics.approval_rate()
    (record,) = frame.to_dict("records")
    assert (record["proposed"], record["decided"]) == (0, 0)
    assert frame["approval_rate"].iloc[0] is pd.NA  # undefined: <NA>, as every missing value
    assert nb.metrics.approval_rate(group_by="model").empty
    assert nb.metrics.backlog().empty


def test_only_skips_decide_nothing(nb: npc_nb.Project) -> None:
    for n in range(3):
        nb.skip(propose(nb, f"candidate number {n} skipped"))
    (record,) = nb.metrics.approval_rate().to_dict("records")
    assert (record["proposed"], record["decided"], record["open"]) == (3, 0, 3)
    assert pd.isna(record["approval_rate"]) and pd.isna(record["rejection_rate"])


def test_rates_by_model_match_hand_counts(nb: npc_nb.Project) -> None:
    a = propose(nb, "alpha statement one", model="m1")
    b = propose(nb, "bravo statement two", model="m1")
    c = propose(nb, "abcdefghij", model="m1")
    propose(nb, "delta statement four", model="m1")
    e = propose(nb, "echo statement five", model="m2")
    f = propose(nb, "foxtrot statement six", model="m2")
    nb.approve(a)
    nb.reject(b)
    nb.edit(c, "abcdefghXY")  # 2 changes in 10 characters: text change 0.2
    assert set(nb.approve_all(nb.preview_approve_all(npc="analyst")).memory_ids) >= {e, f}
    frame = nb.metrics.approval_rate(group_by="model")
    m1, m2 = row(frame, model="m1"), row(frame, model="m2")
    # m1: a approved, b rejected, c edited; d went with the approve_all batch.
    assert (m1["proposed"], m1["decided"], m1["approved"], m1["edited"], m1["rejected"]) == (
        4, 4, 3, 1, 1,
    )  # fmt: skip
    assert m1["approval_rate"] == pytest.approx(3 / 4)
    assert m1["rejection_rate"] == pytest.approx(1 / 4)
    assert m1["edit_rate"] == pytest.approx(1 / 4)
    assert m1["mean_text_change"] == pytest.approx(0.2)
    assert (m2["decided"], m2["approval_rate"], m2["open"]) == (2, 1.0, 0)
    assert str(frame["proposed"].dtype) == "int64"


def test_another_wording_the_model_proposed_is_approved_not_edited(nb: npc_nb.Project) -> None:
    topics = ("ringing", "weather", "survey")
    fact, wording = "We store the {} data in DuckDB.", "Note: we store the {} data in DuckDB."
    cards = [propose(nb, fact.format(topic), model="m1") for topic in topics]
    for topic in topics:
        merged = nb.add_candidate(wording.format(topic), category="fact", npc="analyst",
                                  model="m1")  # fmt: skip
        assert merged.action == "merged", merged
    variants = nb.reproposals().set_index("memory_id")["id"]
    nb.approve(cards[0], variant=variants[cards[0]])  # approved as the other wording
    # An older npc_nb recorded that as an edit to the wording's text: told by the data.
    old_style = nb.reproposals().set_index("id").loc[variants[cards[1]], "proposed_text"]
    nb.edit(cards[1], old_style)
    nb.edit(cards[2], "We keep the ringing data in a DuckDB file.")  # the reviewer's own text
    edit = row(nb.metrics.edit_rate(group_by="model"), model="m1")
    assert (edit["decided"], edit["approved"], edit["edited"], edit["other_wording"]) == (
        3, 3, 1, 2,
    )  # fmt: skip
    assert edit["edit_rate"] == pytest.approx(1 / 3)
    approval = row(nb.metrics.approval_rate(group_by="model"), model="m1")
    assert (approval["approval_rate"], approval["other_wording"]) == (1.0, 2)


def test_rate_frames_carry_n_and_a_wilson_interval(nb: npc_nb.Project) -> None:
    ids = [propose(nb, f"interval statement {n}", model="m1") for n in range(4)]
    for memory in ids[:3]:
        nb.approve(memory)
    nb.reject(ids[3])
    approval = row(nb.metrics.approval_rate(group_by="model"), model="m1")
    assert (approval["approval_rate"], approval["n"]) == (0.75, 4)
    # 3 of 4: the Wilson interval worked by hand, (p + z²/2n ± z·sqrt(...)) / (1 + z²/n).
    assert (approval["ci_low"], approval["ci_high"]) == (
        pytest.approx(0.3006, abs=1e-4), pytest.approx(0.9544, abs=1e-4),
    )  # fmt: skip
    rejection = row(nb.metrics.rejection_rate(group_by="model"), model="m1")
    assert (rejection["rejection_rate"], rejection["n"]) == (0.25, 4)
    assert (rejection["ci_low"], rejection["ci_high"]) == (
        pytest.approx(0.0456, abs=1e-4), pytest.approx(0.6994, abs=1e-4),
    )  # fmt: skip
    edit = row(nb.metrics.edit_rate(group_by="model"), model="m1")
    assert (edit["edit_rate"], edit["n"], edit["ci_low"]) == (0.0, 4, 0.0)
    assert edit["ci_high"] == pytest.approx(0.4899, abs=1e-4)  # 0 of 4 is not "surely 0"


def test_wilson_interval_matches_published_values() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 81/263 and 15/148.
    low, high = wilson_interval(pd.Series([81, 15, 0, 2]), pd.Series([263, 148, 0, 2]))
    assert low.tolist()[:2] == [pytest.approx(0.2553, abs=1e-4), pytest.approx(0.0624, abs=1e-4)]
    assert high.tolist()[:2] == [pytest.approx(0.3662, abs=1e-4), pytest.approx(0.1605, abs=1e-4)]
    assert math.isnan(low[2]) and math.isnan(high[2])  # no denominator, no interval
    assert high[3] == 1.0 and 0 < low[3] < 1  # 2 of 2 stays inside 0..1


def test_an_undefined_rate_has_no_interval(nb: npc_nb.Project) -> None:
    nb.skip(propose(nb, "skipped, so nothing decided"))
    (record,) = nb.metrics.approval_rate().to_dict("records")
    assert record["n"] == 0
    assert pd.isna(record["ci_low"]) and pd.isna(record["ci_high"])


def test_reproposal_interval_allows_more_repeats_than_candidates(nb: npc_nb.Project) -> None:
    nb.reject(propose(nb, "the user likes jazz music"))
    for text in ["The user likes jazz music.", "the user likes jazz music", "USER LIKES JAZZ"]:
        nb.add_candidate(text, category="fact", npc="analyst")
    frame = nb.metrics.repeats_per_candidate()
    (record,) = frame.to_dict("records")
    assert (record["repeats_per_candidate"], record["n"]) == (3.0, 1)
    assert (
        "exceeds 1 when repeats outnumber new candidates" in frame.attrs["repeats_per_candidate"]
    )  # the frame says why it may exceed 1
    # Poisson score interval, (x + z²/2 ± z·sqrt(x + z²/4)) / n with x = 3, n = 1.
    assert (record["ci_low"], record["ci_high"]) == (
        pytest.approx(1.0203, abs=1e-4), pytest.approx(8.8212, abs=1e-4),
    )  # fmt: skip


def test_matcher_precision_has_n_and_an_interval(nb: npc_nb.Project) -> None:
    frame = nb.metrics.matching()
    assert {"precision", "n", "ci_low", "ci_high"} <= set(frame.columns)


def test_text_change_counts_characters_not_bytes(nb: npc_nb.Project) -> None:
    memory = propose(nb, "会議は月曜日です")
    nb.edit(memory, "会議は火曜日です")
    change = nb.sql("SELECT text_change FROM v_memories")["text_change"].item()
    assert change == pytest.approx(1 / 8)


def test_an_approved_update_counts_as_a_proposal_of_its_model(nb: npc_nb.Project) -> None:
    old = propose(nb, "The batch size is 32", model="m1")
    nb.approve(old)
    update = nb.add_candidate("The batch size is 64", category="fact", npc="analyst", model="m2")
    assert update.queued and update.updates == old  # a correction, queued as an update
    nb.approve(update.memory_id)  # ... which supersedes the old value
    frame = nb.metrics.approval_rate(group_by="model")
    m1, m2 = row(frame, model="m1"), row(frame, model="m2")
    assert (m1["proposed"], m1["decided"], m1["approved"]) == (1, 1, 1)
    assert (m2["proposed"], m2["decided"], m2["approved"]) == (1, 1, 1)


def test_an_undone_approval_is_not_an_approval(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, "approved then undone"))
    nb.undo()
    (record,) = nb.metrics.approval_rate().to_dict("records")
    assert (record["decided"], record["open"]) == (0, 1)


def test_a_superseded_memory_still_counts_as_approved_once(nb: npc_nb.Project) -> None:
    memory = propose(nb, "deadline is friday")
    nb.approve(memory)
    nb.supersede(memory, "deadline is monday")
    (record,) = nb.metrics.approval_rate().to_dict("records")
    assert (record["proposed"], record["decided"], record["approved"]) == (1, 1, 1)


def test_repeats_per_candidate_splits_by_what_was_repeated(nb: npc_nb.Project) -> None:
    approved = propose(nb, "the lab meets on mondays", model="m1")
    rejected = propose(nb, "the user likes jazz music", model="m1")
    propose(nb, "pending fact about ringing", model="m1")
    propose(nb, "another pending statement", model="m1")
    nb.approve(approved)
    nb.reject(rejected)
    for text, action in [
        ("The user likes jazz music.", "suppressed"),
        ("the user likes jazz music", "suppressed"),
        ("the user likes jazz musics", "suppressed"),
        ("The lab meets on Mondays", "reinforced"),
        ("pending fact about ringing", "merged"),
    ]:
        outcome = nb.add_candidate(text, category="fact", npc="analyst", model="m1")
        assert outcome.action == action, (text, outcome)
    record = row(nb.metrics.repeats_per_candidate(group_by="model"), model="m1")
    assert (record["new_candidates"], record["reproposals"]) == (4, 5)
    assert (record["rejected"], record["approved"], record["pending"]) == (3, 1, 1)
    assert record["repeats_per_candidate"] == pytest.approx(4 / 4)
    assert record["pending_per_candidate"] == pytest.approx(1 / 4)


def test_the_old_name_reproposal_rate_is_gone(nb: npc_nb.Project) -> None:
    """Nothing is released before 0.1.0: the renamed metric keeps no alias."""
    assert not hasattr(nb.metrics, "reproposal_rate")
    with pytest.raises(npc_nb.NpcError, match="reproposal_rate"):
        nb.metrics.plot_rate("reproposal_rate")


def test_backlog_over_days(nb: npc_nb.Project) -> None:
    day = datetime(2026, 3, 2)
    first, second, third = (propose(nb, f"backlog item {n}") for n in range(3))
    nb.approve(first)
    nb.reject(second)
    at(nb, first, day, day + timedelta(days=2))
    at(nb, second, day, day + timedelta(days=3))
    at(nb, third, day + timedelta(days=1))
    frame = nb.metrics.backlog(period="day")
    assert frame["period"].tolist() == [day + timedelta(days=n) for n in range(4)]
    assert frame["proposed"].tolist() == [2, 1, 0, 0]
    assert frame["closed"].tolist() == [0, 0, 1, 1]
    assert frame["backlog"].tolist() == [2, 3, 2, 1]


def test_time_to_decision_ignores_undone_decisions(nb: npc_nb.Project) -> None:
    start = datetime(2026, 3, 2, 8)
    fast, slow = propose(nb, "decided in two hours"), propose(nb, "decided in ten hours")
    nb.approve(fast)
    nb.approve(slow)
    nb.undo()  # undoes slow's approval
    nb.reject(slow)
    at(nb, fast, start, start + timedelta(hours=2))
    at(
        nb,
        slow,
        start,
        start + timedelta(hours=1),
        start + timedelta(hours=1),
        start + timedelta(hours=10),
    )
    (record,) = nb.metrics.time_to_decision().to_dict("records")
    assert record["decided"] == 2
    assert record["median_hours"] == pytest.approx(6.0)
    assert record["mean_hours"] == pytest.approx(6.0)


def test_reviewer_throughput_leaves_out_breaks(nb: npc_nb.Project) -> None:
    start = datetime(2026, 3, 2, 9)
    cards = [propose(nb, f"card number {n} for ada") for n in range(4)]
    for card in cards:
        nb.approve(card, by="ada")
    offsets = [0, 30, 90, 90 + 20 * 60]  # seconds; the last gap is a 20-minute break
    for card, offset in zip(cards, offsets, strict=True):
        at(nb, card, start - timedelta(hours=1), start + timedelta(seconds=offset))
    record = row(nb.metrics.reviewer_throughput(), reviewer="ada")
    assert record["cards"] == 4
    assert record["active_minutes"] == pytest.approx(1.5)
    assert record["cards_per_minute"] == pytest.approx(4 / 1.5)
    assert record["median_seconds_per_card"] == pytest.approx(45.0)
    assert record["batch_approvals"] == 0
    by_persona = row(nb.metrics.reviewer_throughput(group_by="npc"), npc="analyst")
    assert (by_persona["cards"], by_persona["active_minutes"]) == (4, pytest.approx(1.5))


def test_batch_approvals_count_batches(nb: npc_nb.Project) -> None:
    for n in range(4):
        propose(nb, f"batch fact number {n}")
    nb.approve_all(nb.preview_approve_all(), by="ada")
    (record,) = nb.metrics.reviewer_throughput().to_dict("records")
    assert (record["batch_approvals"], record["batch_approved_memories"]) == (1, 4)
    assert (record["cards"], record["active_minutes"]) == (0, 0.0)


def test_injections_per_memory_counts_prompts(nb: npc_nb.Project) -> None:
    used = propose(nb, "the user prefers SI units")
    unused = propose(nb, "the writer's own fact", npc="writer")
    nb.approve(used)
    nb.approve(unused)
    nb.chat("analyst", "hello")
    nb.chat("analyst", "again")
    frame = nb.metrics.injections_per_memory().set_index("memory_id")
    assert frame.loc[used, "injections"] == 2
    assert frame.loc[unused, "injections"] == 0


def test_unknown_dimension_is_a_clear_error(nb: npc_nb.Project) -> None:
    with pytest.raises(npc_nb.NpcError, match="Cannot group by 'colour'"):
        nb.metrics.approval_rate(group_by="colour")
    with pytest.raises(npc_nb.NpcError, match="Cannot group by 'reviewer'"):
        nb.metrics.repeats_per_candidate(group_by="reviewer")


# -- the views and exports ---------------------------------------------------------------


def test_every_view_column_is_documented(nb: npc_nb.Project) -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "analytics.md").read_text()
    for view, columns in VIEW_COLUMNS.items():
        assert list(nb.sql(f"SELECT * FROM {view} LIMIT 0").columns) == list(columns)
        for column in columns:
            assert f"| `{column}` |" in docs, (view, column)


def test_exports_round_trip(nb: npc_nb.Project, tmp_path: Path) -> None:
    kept = propose(nb, "exported fact")
    nb.approve(kept)
    nb.reject(propose(nb, "rejected export"))
    nb.skip(propose(nb, "skipped export"))
    paths = nb.exports.tables(tmp_path / "out")
    assert duckdb.sql(f"SELECT count(*) FROM '{paths['memories']}'").fetchone() == (3,)
    assert duckdb.sql(f"SELECT count(*) FROM '{paths['decisions']}'").fetchone() == (6,)
    jsonl = nb.exports.tables(tmp_path / "json", format="jsonl")
    assert len(jsonl["decisions"].read_text().splitlines()) == 6
    log = [json.loads(line) for line in nb.exports.review_log(tmp_path / "log.jsonl")
           .read_text().splitlines()]  # fmt: skip
    assert [entry["answer"] for entry in log] == ["accept", "reject", "ignore"]
    assert log[0]["text"] == "exported fact" and log[0]["_annotator_id"] == "tester"
    with pytest.raises(npc_nb.NpcError, match="format"):
        nb.exports.tables(tmp_path, format="xlsx")
