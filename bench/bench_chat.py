"""Benchmark what ``%%npc`` adds on top of the bare model call (run by hand).

    .venv/bin/python bench/bench_chat.py [--cells 50]

With the offline model (zero model latency) it times, p50 and p95 in milliseconds:

- bare model call   a cell calling npc_nb.models.gateway.complete() with a prompt of the same shape
- %%npc cell        a real IPython shell running ``%%npc analyst`` cells (recording both
                    turns, context, injections, the extraction job; the background
                    extraction of earlier cells runs meanwhile, as it would for a user)
- overhead          the difference of the two p50s (target: under 20 ms)

It also prints the wall time of ``import npc_nb`` and of ``%load_ext npc_nb`` in fresh
processes, next to a bare interpreter start. ``--json PATH`` also writes these figures
as rows of the one table ``bench/run_all.py`` prints.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import Row, percentiles, write_rows

import npc_nb
from npc_nb.models import gateway, offline


def timed(
    action: Callable[[int], object], repeat: int, between: Callable[[], object] | None = None
) -> tuple[float, float]:
    samples = []
    for n in range(repeat):
        if between is not None:
            between()
        started = time.perf_counter()
        action(n)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def process_time(code: str, repeat: int = 5) -> tuple[float, float]:
    """p50/p95 wall time (ms) of a fresh interpreter running ``code``."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=50)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="npc-bench-chat-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    nb = npc_nb.open(folder)
    shell.run_line_magic("load_ext", "npc_nb")
    nb.npc("analyst", directive="You help analyse field data.")
    for n in range(20):  # a realistic store: approved memories in context
        out = nb.add_candidate(
            f"Approved fact number {n} about the survey", category="fact", npc="analyst"
        )
        nb.approve(out.memory_id)

    def cell(source: str) -> None:
        with contextlib.redirect_stdout(io.StringIO()):  # the displayed reply
            result = shell.run_cell(source, store_history=True)
        assert result.success, result.error_in_exec

    message = "We decided to use DuckDB. What should we plot next for the survey?"
    probe = nb.chat("analyst", message)  # warm-up: imports litellm, fills caches
    nb.extraction.wait()
    shell.user_ns.update(llm=gateway, model=offline.MODEL, prompt=probe.messages)
    # The baseline is a cell making the bare call, so both sides pay IPython's own
    # per-cell cost (history, display hook) and the difference is npc_nb's alone.
    bare = timed(lambda n: cell("_ = llm.complete(model, prompt)"), args.cells)
    bare_stream = timed(lambda n: cell("_ = list(llm.stream(model, prompt))"), args.cells)

    # A user reads each reply before the next cell: extraction finishes in between
    # (outside the timing). "back to back" runs cells with no pause at all.
    paused = timed(
        lambda n: cell(f"%%npc analyst --no-stream\n{message} ({n})"),
        args.cells,
        between=nb.extraction.wait,
    )
    streamed = timed(
        lambda n: cell(f"%%npc analyst\n{message} (s{n})"), args.cells, between=nb.extraction.wait
    )
    rushed = timed(lambda n: cell(f"%%npc analyst --no-stream\n{message} (b{n})"), args.cells)
    nb.extraction.wait()

    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores, {args.cells} cells each")
    rows = [
        ("bare model call", bare),
        ("bare streamed call", bare_stream),
        ("%%npc --no-stream", paused),
        ("%%npc (streamed)", streamed),
        ("%%npc back to back", rushed),
    ]
    for label, (p50, p95) in rows:
        print(f"{label:<22} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms")
    print(f"overhead, --no-stream  p50 {paused[0] - bare[0]:7.2f} ms (target < 20 ms)")
    print(f"overhead, streamed     p50 {streamed[0] - bare_stream[0]:7.2f} ms")
    print(
        f"overhead, back to back p50 {rushed[0] - bare[0]:7.2f} ms "
        "(the previous cell's extraction competes for the 2 cores)"
    )

    python, python_p95 = process_time("pass")
    imported, imported_p95 = process_time("import npc_nb")
    loaded, loaded_p95 = process_time(
        "from IPython.core.interactiveshell import InteractiveShell; "
        "ip = InteractiveShell.instance(); ip.run_line_magic('load_ext', 'npc_nb')"
    )
    ipython, ipython_p95 = process_time(
        "from IPython.core.interactiveshell import InteractiveShell; InteractiveShell.instance()"
    )
    print(f"python -c pass            {python:7.1f} ms")
    print(f"import npc_nb             {imported:7.1f} ms  (+{imported - python:.1f} ms)")
    print(f"IPython shell             {ipython:7.1f} ms")
    print(f"IPython + %load_ext       {loaded:7.1f} ms  (+{loaded - ipython:.1f} ms)")
    if args.json:
        store = "20 approved"
        write_rows(
            [
                Row("%%npc turn (offline model)", store, *paused, "bare model call", *bare),
                Row("%%npc turn, streamed", store, *streamed, "bare streamed call", *bare_stream),
                Row(
                    "import npc_nb, fresh process",
                    "-",
                    imported,
                    imported_p95,
                    "python -c pass",
                    python,
                    python_p95,
                ),
                Row(
                    "%load_ext npc_nb, fresh process",
                    "-",
                    loaded,
                    loaded_p95,
                    "IPython shell",
                    ipython,
                    ipython_p95,
                ),
            ],
            args.json,
        )


if __name__ == "__main__":
    main()
