"""Replay re-proposals through the public API and count the questions a reviewer is asked.

    python bench/replay_matching.py --locomo PATH/TO/locomo      # every workload
    python bench/replay_matching.py                              # the synthetic ones only
    python bench/replay_matching.py --judge-error 0.05           # a judge wrong 5% of the time

Each workload (``replay_workloads.py``) is a stream of candidate memories, in sessions,
each labelled with the distinct fact it states. They are proposed with
``nb.add_candidate`` (one persona per speaker), and after every session a simulated
reviewer answers every card in the queue: it rejects 30% of the facts (a fixed choice
per fact) and approves the rest, answering the same way whenever a fact comes back.
Printed per workload and matcher:

- questions per distinct fact: cards the reviewer answered / distinct facts (1.00 is
  one question per fact);
- false merges: candidates absorbed (merged, suppressed, reinforced) into a memory of
  another fact, as a share of distinct facts; and facts lost (never asked at all);
- corrections lost: a corrected fact ("batch size 64" after "32") absorbed into the
  fact it corrects; must be zero;
- neighbour recall: of the candidates judged while a memory of their fact was there
  to be found (exact repeats aside: the hash catches those), the share whose
  neighbours, as shown to the matcher, held one. Read from ``nb.metrics.matching(
  labels=...)`` where the package records the neighbours, else from what the matcher
  was asked;
- splits and requeues: the reviewer sees one card per fact with its merged wordings and
  splits off any wording of another fact (``nb.requeue``); at the end of each review it
  is shown what was suppressed or reinforced without asking and puts back any of
  another fact. Printed as corrections / automatic outcomes of that kind; a split or
  requeued candidate becomes a card, so it is counted as a question when answered.

Matchers: ``exact`` (no matcher: exact repeats only), ``offline`` (the offline matcher),
``oracle`` (a correct judge plugged in as a callable: it knows the labels, so it
measures everything but the judgement), ``judge`` (the model judge, ``matcher="model"``,
through a scripted model that answers from the labels, wrong on ``--judge-error`` of
the pairs: ``replay_judge.py``), ``same`` (says "same" to everything: only the guards
stand between it and a lost correction) and ``legacy`` (the rule before same-fact
matching: 85% Indel similarity to a rejected memory suppresses; today's guards apply).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import replay_judge
from replay_workloads import Item, Workload, labels, locomo, near_miss, synthetic

import npc_nb
from npc_nb._foundations.text import normalise
from npc_nb.memory.matching import MEANING_SAME, offline_matcher

REJECT_SHARE = 0.3
MATCHERS = ["exact", "legacy", "offline", "oracle", "judge", "same"]


@dataclass
class Tally:
    questions: int = 0
    false_merges: int = 0
    corrections_lost: int = 0
    asked: set[str] = field(default_factory=set)
    facts: set[str] = field(default_factory=set)
    outcomes: dict[str, int] = field(default_factory=dict)
    splits: int = 0  # merged wordings of another fact, split off their card
    requeues: int = 0  # suppressed or reinforced repeats of another fact, put back
    findable: int = 0  # judged while a memory of the same fact was there to be found
    found: int = 0  # ... and one was among the neighbours shown
    recall: float | None = None  # nb.metrics.matching's, where the package has it
    judge_calls: int = 0
    judge_tokens: int = 0

    def rate(self, count: int, *outcomes: str) -> str:
        automatic = sum(self.outcomes.get(o, 0) for o in outcomes)
        return f"{count}/{automatic}" if automatic else "0/0"

    @property
    def neighbour_recall(self) -> float | None:
        if self.recall is not None:
            return self.recall
        return self.found / self.findable if self.findable else None


# -- matchers ----------------------------------------------------------------------------


def truth(facts_of: dict[str, str], corrections: dict[str, str]) -> Callable[[str, str], str]:
    """The right verdict for one (candidate, memory) pair, from the labels."""

    def verdict(candidate: str, memory: str) -> str:
        ours, theirs = facts_of.get(normalise(candidate)), facts_of.get(normalise(memory))
        if ours is not None and theirs == ours:
            return "same"
        if corrections.get(ours or "") == theirs or corrections.get(theirs or "") == ours:
            return "update"
        return "different"

    return verdict


def oracle(right: Callable[[str, str], str]) -> Callable:
    """Knows the labels: "same" for the same fact, "update" for a correction."""

    def judge(candidate: str, neighbours: list[str]) -> list[Any]:
        return [right(candidate, text) for text in neighbours]

    return judge


def legacy(rejected: set[str]) -> Callable:
    """The rule before same-fact matching: 85% Indel similarity to a rejected memory."""

    def judge(candidate: str, neighbours: list[str]) -> list[Any]:
        ours = normalise(candidate)
        return [
            "same"
            if normalise(t) in rejected and fuzz.ratio(ours, normalise(t)) >= 85
            else "different"
            for t in neighbours
        ]

    return judge


def always_same(candidate: str, neighbours: list[str]) -> list[Any]:
    return ["same"] * len(neighbours)


class Watched:
    """A matcher that remembers what it was asked (the neighbours it was shown)."""

    def __init__(self, matcher: Callable, name: str) -> None:
        self.matcher, self.__name__ = matcher, name
        self.asked: list[tuple[str, list[str]]] = []

    def __call__(self, candidate: str, neighbours: list[str]) -> Any:
        self.asked.append((candidate, list(neighbours)))
        return self.matcher(candidate, neighbours)


# -- the replay --------------------------------------------------------------------------


def rejects(fact: str) -> bool:
    digest = hashlib.sha256(fact.encode()).digest()
    return digest[0] / 256 < REJECT_SHARE


@dataclass
class Replay:
    """One workload replayed under one matcher: what the reviewer and the bench know."""

    nb: npc_nb.Project
    fact_of_wording: dict[tuple[str, str], str]
    corrections: dict[str, str]
    asked: list[tuple[str, list[str]]]  # what the matcher was shown, call by call
    rejected_texts: set[str]
    matched: bool  # a matcher is set (not exact repeats only)
    tally: Tally = field(default_factory=Tally)
    fact_of_memory: dict[str, str] = field(default_factory=dict)
    npc_of_memory: dict[str, str] = field(default_factory=dict)
    updates_of: dict[str, str] = field(default_factory=dict)
    superseded: set[str] = field(default_factory=set)


def replay(workload: Workload, matcher_name: str, judge_error: float = 0.0) -> Tally:
    folder = Path(tempfile.mkdtemp(prefix="npc-replay-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    facts_of = {normalise(i.text): i.fact for s in workload for i in s}
    corrections = {i.fact: i.correction_of for s in workload for i in s if i.correction_of}
    right = truth(facts_of, corrections)
    rejected_texts: set[str] = set()
    settings: dict[str, Any] = {}
    calls = None
    if matcher_name == "judge":
        calls = replay_judge.install(right, judge_error)
        settings = {"matcher": "model", "match_model": replay_judge.MODEL}
        asked = calls.asked
    elif matcher_name == "exact":
        settings, asked = {"matcher": None}, []
    else:
        plain = {
            "offline": lambda c, n: offline_matcher(c, n, meaning_same=MEANING_SAME),
            "oracle": oracle(right),
            "legacy": legacy(rejected_texts),
            "same": always_same,
        }[matcher_name]
        watched = Watched(plain, matcher_name)
        settings, asked = {"matcher": watched}, watched.asked
    nb = npc_nb.open(folder / "project", create=True, reviewer="replay", **settings)
    run = Replay(
        nb,
        {(i.npc, normalise(i.text)): i.fact for s in workload for i in s},
        corrections,
        asked,
        rejected_texts,
        matcher_name != "exact",
    )
    for session in workload:
        for item in session:
            run.tally.facts.add(item.fact)
            _propose(run, item)
        _review(run)
    if matcher_name != "exact":
        run.tally.recall = _metrics_recall(nb, workload)
    if calls is not None:
        run.tally.judge_calls, run.tally.judge_tokens = len(calls.asked), calls.tokens
    nb.close()
    return run.tally


def _propose(run: Replay, item: Item) -> None:
    tally = run.tally
    findable = any(
        fact == item.fact and run.npc_of_memory[m] == item.npc and m not in run.superseded
        for m, fact in run.fact_of_memory.items()
    )
    before = len(run.asked)
    outcome = run.nb.add_candidate(item.text, category="fact", npc=item.npc)
    tally.outcomes[outcome.action] = tally.outcomes.get(outcome.action, 0) + 1
    if findable and outcome.match_type != "exact" and run.matched:
        shown = [text for _, texts in run.asked[before:] for text in texts]
        tally.findable += 1
        tally.found += any(
            run.fact_of_wording.get((item.npc, normalise(t))) == item.fact for t in shown
        )
    if outcome.queued:
        run.fact_of_memory[outcome.memory_id] = item.fact
        run.npc_of_memory[outcome.memory_id] = item.npc
        if outcome.updates:
            run.updates_of[outcome.memory_id] = outcome.updates
        return
    absorbed_by = run.fact_of_memory.get(outcome.memory_id)
    if absorbed_by != item.fact:
        tally.false_merges += 1
        if run.corrections.get(item.fact) == absorbed_by:
            tally.corrections_lost += 1


def _review(run: Replay) -> None:
    """One card per fact: split off any wording of another fact, answer the card once;
    when the queue is empty, put back any automatic outcome of another fact (the end of
    a review lists them) and answer those too."""
    nb, tally = run.nb, run.tally
    while True:
        for row in nb.review_queue().itertuples():
            fact = run.fact_of_memory[row.id]
            if row.variants > 1:
                _split_others(run, row.id, fact)
            tally.questions += 1
            tally.asked.add(fact)
            if rejects(fact):
                nb.reject(row.id)
                run.rejected_texts.add(normalise(row.final_text))
            else:
                nb.approve(row.id)
                # Approving an update supersedes the memory it updates.
                if row.id in run.updates_of:
                    run.superseded.add(run.updates_of[row.id])
        if not _requeue_others(run):
            return


def _put_back(run: Replay, reproposal_id: str, fact: str, npc: str) -> None:
    new = str(run.nb.requeue(reproposal_id).new_memory_id)
    run.fact_of_memory[new], run.npc_of_memory[new] = fact, npc


def _split_others(run: Replay, card: str, fact: str) -> None:
    repeats = run.nb.reproposals()
    wordings = repeats[
        (repeats["memory_id"] == card) & (repeats["outcome"] == "merged") & repeats["label"].isna()
    ]
    for wording in wordings.itertuples():
        other = run.fact_of_wording[(wording.npc, normalise(wording.proposed_text))]
        if other != fact:
            _put_back(run, wording.id, other, wording.npc)
            run.tally.splits += 1


def _requeue_others(run: Replay) -> bool:
    put_back = False
    for entry in run.nb.review_session().automatic():
        if entry["outcome"] == "merged":
            continue  # checked on its card
        other = run.fact_of_wording[(entry["npc"], normalise(entry["proposed_text"]))]
        if other != run.fact_of_memory.get(entry["memory_id"]):
            _put_back(run, entry["id"], other, entry["npc"])
            run.tally.requeues += 1
            put_back = True
    return put_back


def _metrics_recall(nb: npc_nb.Project, workload: Workload) -> float | None:
    """``neighbour_recall`` as ``nb.metrics.matching(labels=...)`` computes it from the
    neighbours the store recorded (None on a version that does not record them)."""
    labels = pd.DataFrame(
        [(i.text, i.fact, i.npc) for s in workload for i in s], columns=["text", "fact", "npc"]
    )
    try:
        frame = nb.metrics.matching(group_by=(), labels=labels)
    except TypeError:  # an npc_nb before neighbour recall
        return None
    value = frame["neighbour_recall"].iloc[0] if len(frame) else None
    return None if value is None or pd.isna(value) else float(value)


def report(name: str, workload: Workload, matchers: list[str], judge_error: float) -> None:
    items = sum(len(s) for s in workload)
    facts = {i.fact for s in workload for i in s}
    print(f"\n{name}: {items} candidates, {len(facts)} distinct facts")
    print(
        f"{'matcher':<9}{'questions/fact':>16}{'false merges':>15}{'facts lost':>12}"
        f"{'corrections lost':>18}{'recall':>8}{'splits':>9}{'requeues':>10}   outcomes"
    )
    for matcher in matchers:
        t = replay(workload, matcher, judge_error)
        lost = len(t.facts - t.asked)
        merges = f"{t.false_merges} ({t.false_merges / len(t.facts):.1%})"
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(t.outcomes.items()))
        if t.judge_calls:
            outcomes += f"; {t.judge_calls} judge calls, {t.judge_tokens:,} tokens"
        recall = "-" if t.neighbour_recall is None else f"{t.neighbour_recall:.3f}"
        print(
            f"{matcher:<9}{t.questions / len(t.facts):>16.3f}{merges:>15}{lost:>12}"
            f"{t.corrections_lost:>18}{recall:>8}{t.rate(t.splits, 'merged'):>9}"
            f"{t.rate(t.requeues, 'suppressed', 'reinforced'):>10}   {outcomes}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, help="folder with candidates.json and facts")
    parser.add_argument("--matchers", nargs="+", default=MATCHERS, choices=MATCHERS)
    parser.add_argument("--copies", type=int, default=3, help="synthetic rounds")
    parser.add_argument("--judge-error", type=float, default=0.0, help="share of wrong answers")
    parser.add_argument(
        "--workloads", nargs="+", default=["synthetic", "near-miss", "labels", "locomo"],
        choices=["synthetic", "near-miss", "labels", "locomo"],
    )  # fmt: skip
    args = parser.parse_args()
    print(
        f"npc_nb {npc_nb.__version__}; reviewer rejects {REJECT_SHARE:.0%} of facts; "
        f"the scripted judge is wrong on {args.judge_error:.0%} of pairs"
    )
    run = [args.matchers, args.judge_error]
    if "synthetic" in args.workloads:
        report("synthetic", synthetic(args.copies), *run)
    if "near-miss" in args.workloads:
        report("near-miss (issue 34's pairs)", near_miss(args.copies), *run)
    if "labels" in args.workloads:
        report("labels and qualifiers (issue 41's pairs, both ways)", labels(args.copies), *run)
    if args.locomo and "locomo" in args.workloads:
        report("LoCoMo conversation 26 (tuned on)", locomo(args.locomo, "26"), *run)
        report("LoCoMo conversation 30 (held out)", locomo(args.locomo, "30"), *run)


if __name__ == "__main__":
    main()
