"""Benchmark the memory a kernel needs: peak RSS of fresh processes (run by hand).

    .venv/bin/python bench/bench_memory.py [--turns 100] [--memories 100000] [--json rows.json]

Each figure is the peak resident set size (``VmHWM``) of a fresh Python process with a
real IPython shell, in MB, next to the same process before npc_nb did the work:

- %load_ext npc_nb      after ``%load_ext npc_nb`` and the load of the model client
                        it starts in the background; baseline: the bare IPython shell
- 100-turn %%npc        after that many ``%%npc analyst`` turns with the offline model,
                        each reply's extraction finished; baseline: after ``%load_ext``
                        (and its background load)
- review panel open     ``nb.review()`` on a generated store (``bench/generate.py``:
                        ``--memories`` memories, 60% approved, 1,000 pending) with its
                        first card drawn and its neighbour index loaded; baseline: the
                        store opened and ipywidgets imported, before the panel
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table import Row, print_table, size_label, write_rows

import npc_nb
from npc_nb.models import preload

HERE = Path(__file__).resolve()


def peak_mb() -> float:
    """This process's peak resident set size so far, in MB (Linux ``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource  # elsewhere: ru_maxrss (KB on Linux, bytes on macOS)

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def _shell() -> object:
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance()


def child_load_ext(_: Path, __: int) -> tuple[float, float]:
    shell = _shell()
    before = peak_mb()
    shell.run_line_magic("load_ext", "npc_nb")  # type: ignore[attr-defined]
    preload.start().join()  # litellm, loading in the background: part of the cost
    return before, peak_mb()


def child_conversation(folder: Path, turns: int) -> tuple[float, float]:
    shell = _shell()
    nb = npc_nb.open(folder)
    shell.run_line_magic("load_ext", "npc_nb")  # type: ignore[attr-defined]
    preload.start().join()  # the baseline: after %load_ext, its background load done
    nb.npc("analyst", directive="You help analyse field data.")
    before = peak_mb()
    for turn in range(turns):
        source = f"%%npc analyst --no-stream\nWe decided to use DuckDB for survey {turn}."
        with contextlib.redirect_stdout(io.StringIO()):
            result = shell.run_cell(source, store_history=True)  # type: ignore[attr-defined]
        assert result.success, result.error_in_exec
        nb.extraction.wait()
    return before, peak_mb()


def child_panel(folder: Path, _: int) -> tuple[float, float]:
    import ipywidgets  # noqa: F401  (a kernel that shows widgets has them imported)
    from IPython.display import display

    _shell()
    nb = npc_nb.open(folder)
    nb.context("analyst")  # the store opened, as in a kernel that has used it
    before = peak_mb()
    with contextlib.redirect_stdout(io.StringIO()):
        panel = nb.review(by="bench")
        display(panel)  # the widgets and their first card
        panel.wait_for_index()  # and the neighbour index a large store loads behind it
    return before, peak_mb()


CHILDREN = {
    "load_ext": child_load_ext,
    "conversation": child_conversation,
    "panel": child_panel,
}


def measure(step: str, folder: Path, turns: int = 0) -> tuple[float, float]:
    """(baseline, peak) MB of ``step`` run in a fresh process."""
    env = {**os.environ, "NPC_NB_HOME": str(folder / ".npc-home")}
    child = ["--child", step, "--folder", str(folder), "--turns", str(turns)]
    result = subprocess.run(
        [sys.executable, str(HERE), *child],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"{step} failed:\n{result.stderr[-3000:]}")
    before, peak = json.loads(result.stdout.strip().splitlines()[-1])
    return before, peak


def rows(turns: int, memories: int) -> list[Row]:
    from generate import generate

    scratch = Path(tempfile.mkdtemp(prefix="npc-bench-memory-"))
    chat = scratch / "chat"
    chat.mkdir()
    store = scratch / "store"
    os.environ["NPC_NB_HOME"] = str(store / ".npc-home")
    generate(store, memories, pending=min(1_000, memories // 10))
    shell, loaded = measure("load_ext", chat)
    talked_before, talked = measure("conversation", chat, turns)
    opened, panel = measure("panel", store)
    shutil.rmtree(scratch, ignore_errors=True)
    label = f"{size_label(memories)} ({memories * 6 // 10:,} approved)"
    return [
        Row("peak RSS: %load_ext npc_nb", "-", loaded, loaded, "IPython shell", shell, shell,
            "MB"),
        Row(f"peak RSS: {turns}-turn %%npc with extraction", f"{turns} turns", talked, talked,
            "after %load_ext", talked_before, talked_before, "MB"),
        Row("peak RSS: review panel open", label, panel, panel, "store open, widgets imported",
            opened, opened, "MB"),
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args.folder, args.turns)))
        return
    print(f"npc_nb {npc_nb.__version__}, {os.cpu_count()} cores")
    found = rows(args.turns, args.memories)
    print_table(found)
    if args.json:
        write_rows(found, args.json)


if __name__ == "__main__":
    main()
