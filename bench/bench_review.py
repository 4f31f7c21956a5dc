"""Benchmark the kernel side of the review panel at lab scale (run by hand).

    .venv/bin/python bench/bench_review.py [--size 100000] [--pending 1000] [--presses 20]
        [--paced 5]

A store with ``--size`` approved memories, ``--pending`` candidates and their audit
events is generated set-wise in DuckDB (``build_store``, not row by row), then opened in
this process with the widget libraries already imported, as in a kernel that has shown a
widget before. Printed, in milliseconds:

- open        ``nb.review()``: read the queue, build the widgets, render the first card
              (its source, wordings and nearest approved memories through the neighbour
              index). The first open of a large store draws the card without waiting for
              that index, which loads behind it: printed on its own lines, the open and
              when the card shows its nearest memories; p50/p95 are of five more opens.
- a r s d     one key message as the browser sends it: the decision written to the store,
              then the next card rendered and the widgets updated
- e           the edit submitted (Ctrl+Enter in the edit box) after ``e`` opened it
- u           undo of the decision just made: the card comes back to the front
- a after 1 s ``a`` after a second on the card, as a person reads it (``--paced``
              presses): the store's connection was released meanwhile
              (``idle_release``, a checkpoint of the file) and the key opens it again
- refused     ``a`` on a card a notebook cell decided meanwhile: the panel says so and
              moves on to the next open card
- wording     ``2`` on a card with three wordings: approve it with its second wording
- split       ``x`` then ``2``: split the second wording off as a card of its own
- requeue     put an automatic outcome (a reinforced repeat) back as its own card

Each key's p50 and p95 over ``--presses`` presses (the target is p50 <= 20 ms for every
key, <= 300 ms to open), next to the baseline of the same run: ``approve()`` of a pending
memory through the Python API, what a key costs before the panel draws anything. The
browser adds the comm round trip and drawing: ``bench/bench_browser_review.py`` measures
key-to-next-card there.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import MEMORY_COLUMNS
from table import Row, percentiles, size_label, write_rows

import npc_nb
from npc_nb._foundations.terms import content_terms, joined_terms

# Pending candidates first (r000000000 ...), then the approved memories; varied wording
# so the neighbour index has rare terms (site, lab) and common ones to skip. Each text is
# made of fragments, and its content terms (what add_candidate stores for the neighbour
# index) are the union of the fragments' terms, worked out once each in Python.
TOPICS = ["ringing", "survey", "nest", "weather", "tracking"]
PLACES = ["DuckDB", "Zenodo", "Postgres", "Figshare"]
SITES, LABS = 997, 1009

SEED = f"""
INSERT INTO memories {MEMORY_COLUMNS[:-1]}, insert_seq, match_text)
SELECT printf('r%09d', i), text, text, substr(md5(text), 1, 32), substr(md5(text), 1, 32),
    lower(text), ['decision', 'fact', 'constraint'][1 + i % 3],
    CASE WHEN i < $pending THEN 'pending_approval' ELSE 'human-approved' END, 'npc',
    'analyst', NULL, 'bench', NULL, NULL, NULL, NULL, 'bench/model', 'bench', 'v1', [],
    0.8, TIMESTAMP '2026-01-01' + to_seconds(i::BIGINT),
    CASE WHEN i < $pending THEN NULL ELSE TIMESTAMP '2026-01-02' + to_seconds(i::BIGINT) END,
    CASE WHEN i < $pending THEN NULL ELSE 'ada' END,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,  -- ..., text_change
    nextval('memory_insert_seq'),
    array_to_string(list_sort(list_distinct(list_concat($topic_terms[1 + i % 5],
        $site_terms[1 + i % {SITES}], $place_terms[1 + i % 4], $lab_terms[1 + i % {LABS}],
        $tail_terms, [i::VARCHAR]))), ' ')
FROM (
    SELECT i, 'We store the ' || $topics[1 + i % 5] || ' data for Site' || (i % {SITES})
        || ' in ' || $places[1 + i % 4] || ' with the Lab' || (i % {LABS}) || ' pipeline '
        || i AS text
    FROM range($pending + $approved) t(i)
)
"""


def _fragment_terms() -> dict[str, list[list[str]] | list[str]]:
    def terms(text: str) -> list[str]:
        return sorted(content_terms(text))

    return {
        "topic_terms": [terms(f"We store the {topic} data for") for topic in TOPICS],
        "site_terms": [terms(f"Site{n}") for n in range(SITES)],
        "place_terms": [terms(place) for place in PLACES],
        "lab_terms": [terms(f"with the Lab{n}") for n in range(LABS)],
        "tail_terms": terms("pipeline"),
    }


# The audit log behind them: a proposal for every memory, an approval for each approved one.
EVENTS = """
INSERT INTO memory_events (seq, memory_id, occurred_at, actor, action, from_status,
    to_status, text_before, text_after, lead_time_ms, time_spent_ms)
SELECT nextval('memory_event_seq'), id, happened, actor, action, from_status, to_status,
    text_before, text_after, lead, spent
FROM (
    SELECT id, recorded_at AS happened, 'model:bench/model' AS actor, 'propose' AS action,
        NULL AS from_status, 'pending_approval' AS to_status, NULL AS text_before,
        initial_text AS text_after, 0 AS lead, NULL AS spent
    FROM memories
    UNION ALL
    SELECT id, decided_at, decided_by, 'approve', 'pending_approval', status, initial_text,
        final_text, 3000, 5000
    FROM memories WHERE decided_at IS NOT NULL
) ORDER BY happened
"""

# Two more wordings merged into every pending card; two repeats reinforcing every tenth
# approved memory (automatic outcomes a reviewer may put back).
VARIANTS = """
INSERT INTO reproposals (id, recorded_at, memory_id, match_kind, match_type, similarity,
    proposed_text, category, scope, npc, extractor_model, provider, prompt_version, verdict,
    matcher, outcome)
SELECT printf('v%09d-%d', i, k), TIMESTAMP '2026-01-03' + to_seconds(i::BIGINT),
    printf('r%09d', i), CASE WHEN i < $pending THEN 'pending' ELSE 'approved' END, 'near', 90,
    'As noted, wording ' || k || ' of memory ' || i, 'fact', 'npc', 'analyst', 'bench/model',
    'bench', 'v1', 'same', 'offline', CASE WHEN i < $pending THEN 'merged' ELSE 'reinforced' END
FROM range($pending + $approved) t(i), range(2) s(k)
WHERE i < $pending OR i % 10 = 1
"""


def build_store(folder: Path, approved: int, pending: int) -> Path:
    """A project store in ``folder`` with ``approved`` approved memories and ``pending``
    candidates (every one with two merged wordings), events and re-proposals; its path.

    Set-wise in DuckDB; swap in a shared generator here when one covers the review queue.
    """
    nb = npc_nb.open(folder)
    sizes = {"approved": approved, "pending": pending}
    fragments = {"topics": TOPICS, "places": PLACES} | _fragment_terms()
    nb.sql(SEED, sizes | fragments, allow_write=True)
    nb.sql(EVENTS, allow_write=True)
    nb.sql(VARIANTS, sizes, allow_write=True)
    sample = nb.sql("SELECT final_text, match_text FROM memories USING SAMPLE 50 ROWS")
    for text, stored in sample.itertuples(index=False):
        assert stored == joined_terms(content_terms(text)), (text, stored)  # as add_candidate
    nb.close()
    return Path(nb.store_path)


def _timed(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _send(panel: Any, message: dict[str, Any]) -> float:
    return _timed(lambda: panel.keys._handle_custom_msg(message, []))


def _press(panel: Any, key: str) -> float:
    return _send(panel, {"type": "key", "key": key, "card": panel.keys.card_id})


def _check(panel: Any) -> None:
    assert "npc-error" not in panel.status.value, panel.status.value


def _keys(nb: Any, panel: Any, presses: int) -> dict[str, list[float]]:
    """Every decision key, undo and a refused decision, ``presses`` times each."""
    times: dict[str, list[float]] = {key: [] for key in ("a", "r", "e", "s", "d", "u")}
    times["refused"] = []
    panel.defer_until.value = date.today() + timedelta(days=30)
    for press in range(presses):
        for key in ("a", "r", "s", "d"):
            times[key].append(_press(panel, key))
            _check(panel)
        _press(panel, "e")
        card = panel.keys.card_id
        edit = {"type": "submit_edit", "text": f"Edited in the bench, {press}", "card": card}
        times["e"].append(_send(panel, edit))
        _check(panel)
        times["u"].append(_press(panel, "u"))  # takes the edit back: that card is current
        _check(panel)
        assert panel.keys.card_id == card, "undo did not bring the card back"
        nb.approve(card, by="someone else")  # a notebook cell decides the card on screen
        times["refused"].append(_press(panel, "a"))
        assert "already" in panel.status.value, panel.status.value
        assert panel.keys.card_id != card, "the refused card is still shown"
    return times


def _paced(panel: Any, presses: int, pause: float) -> dict[str, list[float]]:
    """``a`` after a pause, as a person reads the card first: the store's connection was
    released meanwhile (``idle_release``) and is opened again by the key."""
    times = []
    for _ in range(presses):
        time.sleep(pause)
        times.append(_press(panel, "a"))
    _check(panel)
    return {f"a after {pause:g} s reading": times}


def _wordings(panel: Any, presses: int) -> dict[str, list[float]]:
    wordings = [_press(panel, "2") for _ in range(presses)]  # 3 wordings a card
    splits = []
    for _ in range(presses):
        _press(panel, "x")
        splits.append(_press(panel, "2"))
        _press(panel, "a")  # on to the next card
    _check(panel)
    panel.session.automatic()  # read once per review, then numbered
    requeues = [_timed(lambda n=n: panel.session.requeue(n)) for n in range(1, presses + 1)]
    return {"wording": wordings, "split": splits, "requeue": requeues}


def main() -> None:
    import ipywidgets  # noqa: F401  (a kernel that has shown a widget has these loaded)

    from npc_nb.review.panel import ReviewPanel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="approved memories")
    parser.add_argument("--pending", type=int, default=1_000, help="candidates to review")
    parser.add_argument("--presses", type=int, default=20, help="presses of each key")
    parser.add_argument("--paced", type=int, default=5, help="presses after a pause")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    if args.pending < 9 * args.presses + args.paced:
        parser.error("--pending must be at least 9 x --presses + --paced")
    folder = Path(tempfile.mkdtemp(prefix="npc-bench-review-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    started = time.perf_counter()
    build_store(folder, args.size, args.pending)
    nb = npc_nb.open(folder)
    counts = nb.sql(
        "SELECT (SELECT count(*) FROM approved_memories) AS approved, "
        "(SELECT count(*) FROM memories WHERE status = 'pending_approval') AS pending, "
        "(SELECT count(*) FROM memory_events) AS events"
    ).iloc[0]
    print(
        f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores: {counts['approved']:,} approved, "
        f"{counts['pending']:,} pending, {counts['events']:,} events "
        f"(built in {time.perf_counter() - started:.0f} s)"
    )
    panels: list[ReviewPanel] = []
    first = _timed(lambda: panels.append(nb.review(by="bench")))
    loaded = first + _timed(lambda: panels[0].wait_for_index())
    opens = [_timed(lambda: panels.append(nb.review(by="bench"))) for _ in range(5)]
    panel = panels[-1]
    times = {"first open": [first], "first open, nearest shown": [loaded], "open": opens}
    times |= _keys(nb, panel, args.presses)
    times |= _paced(panel, args.paced, pause=1.0)
    times |= _wordings(panel, args.presses)
    baseline = percentiles(api_approvals(nb, args.presses))
    print(f"{'':<30} {'p50':>8} {'p95':>8}   ms ({args.presses} presses of each key)")
    for key, samples in times.items():
        p50, p95 = percentiles([seconds * 1000 for seconds in samples])
        print(f"{key:<30} {p50:8.1f} {p95:8.1f}")
    print(f"{'approve() (API, baseline)':<30} {baseline[0]:8.1f} {baseline[1]:8.1f}")
    nb.close()
    if args.json:
        store = f"{size_label(args.size)} approved, {size_label(args.pending)} pending"
        rows = [
            Row(
                f"panel: {key if 'open' in key else f'key {key}'}",
                store,
                *percentiles([seconds * 1000 for seconds in samples]),
                "approve() (API)",
                *baseline,
            )
            for key, samples in times.items()
        ]
        write_rows([*rows, Row("approve() (API)", store, *baseline)], args.json)


def api_approvals(nb: Any, count: int) -> list[float]:
    """``approve()`` of ``count`` pending memories through the Python API, in ms."""
    pending = nb.review_queue()["id"].tolist()[-count:]
    return [
        _timed(lambda memory_id=memory_id: nb.approve(memory_id, by="bench")) * 1000
        for memory_id in pending
    ]


if __name__ == "__main__":
    main()
