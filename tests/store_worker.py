"""A second kernel, for tests and the benchmark: ``python -m tests.store_worker MODE ...``.

It opens the project, prints ``ready``, waits for a line on stdin (so every worker
starts at once, without timed waits), does its work and prints one JSON line.

Modes:
- ``decide PROJECT_DIR STORE DECISION IDS_FILE``: decide every id (as the reviewer saw
  it, pending) and report the ids it won and the errors it got, by class.
- ``propose PROJECT_DIR STORE TEXTS_FILE``: propose every text and report the outcomes.
- ``extract PROJECT_DIR STORE``: run the queued extraction jobs, report the status.
- ``mixed PROJECT_DIR STORE SEED N``: N mixed operations (add a candidate, decide one,
  read a context) and the latency of each kind.
- ``vote PROJECT_DIR STORE REVIEWER PLAN_FILE``: in independent review, as REVIEWER, vote
  on every card of the plan (one ``memory_id decision`` a line) as it was seen
  (pending); report the cards this vote made final and the errors, by class.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import npc_nb

REPO = Path(__file__).resolve().parents[1]


def run_together(*workers: list[str], timeout: float = 1800) -> tuple[list[dict], float]:
    """Start one worker per argument list, let each open its project, release them all
    at once, and collect each one's JSON line, with the seconds from the release until
    the last one finished."""
    env = os.environ | {"PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.store_worker", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=env,
        )
        for args in workers
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    released = time.perf_counter()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"a worker failed (exit {proc.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results, time.perf_counter() - released


def _open(project_dir: str, store: str, name: str, **more: object) -> npc_nb.Project:
    # Kernels on one embedded file take turns; with four of them in tight loops on a
    # loaded 2-core machine a turn can take longer than the default 10 s lock timeout.
    embedded = {"lock_timeout": 120}
    settings = {"store": store} if store != "embedded" else embedded
    return npc_nb.open(project_dir, reviewer=name, extract_in_background=False, **settings, **more)


def _start() -> None:
    print("ready", flush=True)
    sys.stdin.readline()


#: A decision on what the worker read: refused if the card changed since.
SHOWN = npc_nb.ReviewContext(shown_status="pending_approval")


def decide(nb: npc_nb.Project, decision: str, ids: list[str]) -> dict:
    won, errors = [], Counter()
    for memory_id in ids:
        try:
            getattr(nb, decision)(memory_id, context=SHOWN)
            won.append(memory_id)
        except npc_nb.NpcError as exc:
            errors[type(exc).__name__] += 1
    return {"won": won, "errors": dict(errors)}


def vote(nb: npc_nb.Project, reviewer: str, plan: list[tuple[str, str]]) -> dict:
    """A vote's result is the same whatever it completed: the cards this reviewer's
    votes made final are read from the audit log afterwards (their ``agree`` events)."""
    errors: Counter[str] = Counter()
    for memory_id, decision in plan:
        try:
            getattr(nb, decision)(memory_id, context=SHOWN)
        except npc_nb.NpcError as exc:
            errors[type(exc).__name__] += 1
    log = nb.decisions()
    mine = log[(log["action"] == "agree") & (log["reviewer"] == reviewer)]
    planned = {memory_id for memory_id, _ in plan}
    final = [m for m in mine["memory_id"].tolist() if m in planned]
    return {"final": final, "errors": dict(errors)}


def propose(nb: npc_nb.Project, texts: list[str]) -> dict:
    actions = Counter()
    for text in texts:
        actions[nb.add_candidate(text, category="fact", npc="analyst").action] += 1
    return {"actions": dict(actions)}


def mixed(nb: npc_nb.Project, seed: int, count: int) -> dict:
    rng = random.Random(seed)
    timings: dict[str, list[float]] = {"add": [], "decide": [], "context": []}
    added: list[str] = []  # every candidate this worker added
    pending: list[str] = []  # those it has not decided yet
    decided: list[str] = []
    lost = 0
    for n in range(count):
        kind = rng.choices(["add", "decide", "context"], weights=[2, 1, 2])[0]
        if kind == "decide" and not pending:
            kind = "add"
        began = time.perf_counter()
        if kind == "add":
            text = f"worker {seed} fact {n}: the value is {rng.randrange(10**9)}"
            added.append(nb.add_candidate(text, category="fact", npc="analyst").memory_id)
            pending.append(added[-1])
        elif kind == "decide":
            memory_id = pending.pop(rng.randrange(len(pending)))
            try:
                rng.choice([nb.approve, nb.reject])(memory_id, context=SHOWN)
                decided.append(memory_id)
            except npc_nb.AlreadyDecidedError:
                lost += 1
        else:
            nb.context("analyst")
        timings[kind].append(time.perf_counter() - began)
    return {"added": added, "decided": decided, "lost": lost, "timings": timings}


def main(argv: list[str]) -> None:
    mode, project_dir, store = argv[:3]
    if mode == "vote":
        nb = _open(project_dir, store, argv[3], review_mode="independent")
    else:
        nb = _open(project_dir, store, f"worker-{mode}-{[*argv, ''][3]}")
    try:
        if mode == "vote":
            lines = Path(argv[4]).read_text().splitlines()
            plan = [(memory_id, decision) for memory_id, decision in map(str.split, lines)]
            _start()
            result = vote(nb, argv[3], plan)
        elif mode == "decide":
            ids = Path(argv[4]).read_text().split()
            _start()
            result = decide(nb, argv[3], ids)
        elif mode == "extract":
            _start()
            result = {"status": str(nb.extraction.wait())}
        elif mode == "propose":
            texts = Path(argv[3]).read_text().splitlines()
            _start()
            result = propose(nb, texts)
        else:
            _start()
            result = mixed(nb, int(argv[3]), int(argv[4]))
    finally:
        nb.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
