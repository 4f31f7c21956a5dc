"""Benchmark the kernel side of the review panel (run by hand).

    .venv/bin/python bench/bench_review.py [--sizes 1000 10000 50000] [--presses 40]

For each size, a store with that many pending candidates and as many approved memories
(generated set-wise in DuckDB) is opened, and timed:

- open        ``review_panel()``: read the queue, build the widgets, render the first card
- key p50/p90 one key message as the browser sends it (alternately ``a`` and ``s``):
              the decision written to the store, then the next card rendered (its
              source message and nearest approved memories) and the widgets updated

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import index_terms

import npc_nb

SEED = """
INSERT INTO memories (id, initial_text, final_text, initial_hash, final_hash, norm_text,
    category, status,
    scope, npc, team, project, conversation_id, source_message_id, evidence,
    evidence_verified, extractor_model, provider, prompt_version, flags, confidence,
    recorded_at, decided_at, decided_by, valid_from, valid_to, supersedes, superseded_by,
    superseded_at, defer_until, skipped_at, text_change)
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


def main() -> None:
    from npc_nb.review.panel import ReviewPanel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--presses", type=int, default=40)
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores")
    print(f"{'pending':>8} {'approved':>9} {'open':>9} {'key p50':>9} {'key p90':>9}")
    for n in args.sizes:
        folder = Path(tempfile.mkdtemp(prefix=f"npc-bench-review-{n}-"))
        os.environ["NPC_NB_HOME"] = str(folder / "home")
        nb = npc_nb.open(folder)
        nb.sql(SEED, {"n": 2 * n}, allow_write=True)
        nb.close()
        index_terms(nb.store_path)  # what add_candidate stores for the neighbour index
        nb = npc_nb.open(folder)
        started = time.perf_counter()
        panel: ReviewPanel = nb.review_panel(by="bench")
        opened = time.perf_counter() - started
        times = []
        for press in range(args.presses):
            message = {"type": "key", "key": "s" if press % 2 else "a"}
            message["card"] = panel.keys.card_id
            started = time.perf_counter()
            panel.keys._handle_custom_msg(message, [])
            times.append(time.perf_counter() - started)
        assert "npc-error" not in panel.status.value, panel.status.value
        p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
        print(
            f"{n:>8} {n:>9} {opened * 1000:>7.0f}ms {statistics.median(times) * 1000:>7.1f}ms "
            f"{p90 * 1000:>7.1f}ms"
        )
        nb.close()


if __name__ == "__main__":
    main()
