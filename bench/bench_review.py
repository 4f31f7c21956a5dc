"""Benchmark the kernel side of the review panel (run by hand).

    .venv/bin/python bench/bench_review.py [--sizes 1000 10000 50000] [--presses 40]

For each size, a store with that many pending candidates and as many approved memories
(generated set-wise in DuckDB) is opened, and timed:

- open        ``review_panel()``: read the queue, build the widgets, render the first card
- a/s key     one key message as the browser sends it (alternately ``a`` and ``s``):
              the decision written to the store, then the next card rendered (its
              source message, wordings and nearest approved memories) and the widgets
              updated
- wording     ``2`` on a card with three wordings: approve it with its second wording
- split       ``x`` then ``2``: split the second wording off as a card of its own
- requeue     put an automatic outcome (a reinforced repeat) back as its own card

The browser adds the comm round trip and drawing; ``tests/test_browser_review.py``
measures key-to-next-card there.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import MEMORY_COLUMNS, index_terms

import npc_nb

SEED = f"""
INSERT INTO memories {MEMORY_COLUMNS}
SELECT printf('r%09d', i), text, text, substr(md5(text), 1, 32), substr(md5(text), 1, 32),
    lower(text), ['decision', 'fact', 'constraint'][1 + i % 3],
    CASE WHEN i % 2 = 0 THEN 'pending_approval' ELSE 'human-approved' END, 'npc',
    'analyst', NULL, 'bench', NULL, NULL, NULL, NULL, 'bench/model', 'bench', 'v1', [],
    0.8, TIMESTAMP '2026-01-01' + to_seconds(i::BIGINT),
    CASE WHEN i % 2 = 0 THEN NULL ELSE TIMESTAMP '2026-01-02' END,
    CASE WHEN i % 2 = 0 THEN NULL ELSE 'ada' END,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL  -- ..., text_change
FROM (
    SELECT i, 'We store the ' || ['ringing', 'survey', 'nest', 'weather', 'tracking'][1 + i % 5]
        || ' data for Site' || (i % 997) || ' in ' || ['DuckDB', 'Zenodo', 'Postgres',
        'Figshare'][1 + i % 4] || ' with the Lab' || (i % 1009) || ' pipeline ' || i AS text
    FROM range($n) t(i)
)
"""

# Two more wordings merged into every pending card; two repeats reinforcing every tenth
# approved memory (automatic outcomes a reviewer may put back).
VARIANTS = """
INSERT INTO reproposals (id, recorded_at, memory_id, match_kind, match_type, similarity,
    proposed_text, category, scope, npc, extractor_model, provider, prompt_version, verdict,
    matcher, outcome)
SELECT printf('v%09d-%d', i, k), TIMESTAMP '2026-01-03' + to_seconds(i::BIGINT),
    printf('r%09d', i), CASE WHEN i % 2 = 0 THEN 'pending' ELSE 'approved' END, 'near', 90,
    'As noted, wording ' || k || ' of memory ' || i, 'fact', 'npc', 'analyst', 'bench/model',
    'bench', 'v1', 'same', 'offline', CASE WHEN i % 2 = 0 THEN 'merged' ELSE 'reinforced' END
FROM range($n) t(i), range(2) s(k)
WHERE i % 2 = 0 OR i % 20 = 1
"""


def _p50_p90(times: list[float]) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
    return f"{statistics.median(times) * 1000:>7.1f}ms {p90 * 1000:>7.1f}ms"


def _press(panel: Any, key: str) -> float:
    message = {"type": "key", "key": key, "card": panel.keys.card_id}
    started = time.perf_counter()
    panel.keys._handle_custom_msg(message, [])
    return time.perf_counter() - started


def main() -> None:
    from npc_nb.review.panel import ReviewPanel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--presses", type=int, default=40)
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores")
    print(
        f"{'pending':>8} {'approved':>9} {'open':>9}  {'a/s key p50, p90':>17}"
        f"  {'wording p50, p90':>17}  {'split p50, p90':>17}  {'requeue p50, p90':>17}"
    )
    for n in args.sizes:
        folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-review-{n}-"))
        os.environ["NPC_NB_HOME"] = str(folder / "home")
        nb = npc_nb.open(folder)
        nb.sql(SEED, {"n": 2 * n}, allow_write=True)
        nb.sql(VARIANTS, {"n": 2 * n}, allow_write=True)
        nb.close()
        index_terms(nb.store_path)  # what add_candidate stores for the neighbour index
        nb = npc_nb.open(folder)
        started = time.perf_counter()
        panel: ReviewPanel = nb.review_panel(by="bench")
        opened = time.perf_counter() - started
        keys = [_press(panel, "s" if press % 2 else "a") for press in range(args.presses)]
        wordings = [_press(panel, "2") for _ in range(args.presses)]  # 3 wordings a card
        splits = []
        for _ in range(args.presses):
            _press(panel, "x")
            splits.append(_press(panel, "2"))
            _press(panel, "a")  # on to the next card
        assert "npc-error" not in panel.status.value, panel.status.value
        panel.session.automatic()  # read once per review, then numbered
        requeues = []
        for number in range(1, args.presses + 1):
            started = time.perf_counter()
            panel.session.requeue(number)
            requeues.append(time.perf_counter() - started)
        print(
            f"{n:>8} {n:>9} {opened * 1000:>7.0f}ms  {_p50_p90(keys)}  {_p50_p90(wordings)}  "
            f"{_p50_p90(splits)}  {_p50_p90(requeues)}"
        )
        nb.close()


if __name__ == "__main__":
    main()
