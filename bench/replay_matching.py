"""Replay re-proposals through the public API and count the questions a reviewer is asked.

    python bench/replay_matching.py --locomo PATH/TO/locomo        # LoCoMo and synthetic
    python bench/replay_matching.py                                # synthetic only

Each workload is a stream of candidate memories, in sessions, each labelled with the
distinct fact it states. They are proposed with ``nb.add_candidate`` (one persona per
speaker), and after every session a simulated reviewer answers every card in the queue:
it rejects 30% of the facts (a fixed choice per fact) and approves the rest, answering
the same way whenever a fact comes back. Printed per workload and matcher:

- questions per distinct fact: cards the reviewer answered / distinct facts (1.00 is
  one question per fact);
- false merges: candidates absorbed (merged, suppressed, reinforced) into a memory of
  another fact, as a share of distinct facts; and facts lost (never asked at all);
- near-miss corrections lost (synthetic): a corrected fact ("batch size 64" after
  "32") absorbed into the fact it corrects; must be zero;
- splits and requeues: the reviewer sees one card per fact with its merged wordings and
  splits off any wording of another fact (``nb.requeue``); at the end of each review it
  is shown what was suppressed or reinforced without asking and puts back any of
  another fact. Printed as corrections / automatic outcomes of that kind; a split or
  requeued candidate becomes a card, so it is counted as a question when answered.

Matchers: ``exact`` (no matcher: exact repeats only), ``offline`` (the default),
``oracle`` (knows the labels: it measures everything but the judgement, i.e. that the
right neighbours are found and that verdicts become one question per fact), and
``legacy`` (the rule before same-fact matching: 85% Indel similarity to a rejected
memory suppresses; today's guards still apply).

LoCoMo (Maharana et al., ACL 2024) is public data and is read from the path given:
``candidates.json`` and ``facts-conv26.json`` there; conversation 30's labels are ours
(``bench/labels/locomo-conv30-facts.json``, item ids only). Conversation 26 is where
the offline matcher was tuned; conversation 30 is held out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import npc_nb
from npc_nb._foundations.text import normalise

LABELS = Path(__file__).resolve().parent / "labels"
REJECT_SHARE = 0.3


@dataclass
class Item:
    text: str
    fact: str
    npc: str
    correction_of: str | None = None  # synthetic near-misses: the fact they correct


Workload = list[list[Item]]  # sessions of items


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

    def rate(self, count: int, *outcomes: str) -> str:
        automatic = sum(self.outcomes.get(o, 0) for o in outcomes)
        return f"{count}/{automatic}" if automatic else "0/0"


# -- workloads ---------------------------------------------------------------------------


def locomo(path: Path, conversation: str) -> Workload:
    data = json.loads((path / "candidates.json").read_text())
    labels_file = (
        path / "facts-conv26.json"
        if conversation == "26"
        else LABELS / f"locomo-conv{conversation}-facts.json"
    )
    labels = json.loads(labels_file.read_text())["facts"]
    return [
        [
            Item(c["text"], labels[c["item"]], c["npc"])
            for c in session
            if c["item"].startswith(f"{conversation}/")
        ]
        for session in data["sessions"]
    ]


#: (fact template, paraphrase template, near-miss value) per synthetic family.
_FAMILIES = [
    ("The batch size is {v}.", "We train with a batch size of {v}.", ("32", "64")),
    ("The paper is due on March {v}.", "Deadline for the paper: March {v}.", ("15", "25")),
    ("We use Python {v} for the analysis.", "The analysis runs on Python {v}.", ("3.11", "3.12")),
    ("{v} leads the field survey.", "The field survey is led by {v}.", ("Maria", "Mario")),
    ("The dataset is licensed {v}.", "The licence of the dataset is {v}.", ("CC BY", "CC BY-NC")),
    ("The draft goes to {v} next.", "Next, the draft goes to {v}.", ("review", "copy-editing")),
    ("The budget for the pilot is {v}.", "The pilot's budget is {v}.", ("10k", "20k")),
    (
        "We {v} DuckDB for the store.",
        "DuckDB is what we {v} for the store.",
        ("use", "no longer use"),
    ),
    ("The lab meets on {v}.", "Lab meetings are on {v}.", ("Mondays", "Thursdays")),
    ("The survey has {v} questions.", "There are {v} questions in the survey.", ("12", "21")),
]


def synthetic(copies: int = 3) -> Workload:
    """Facts, then their exact, trivial, filler and paraphrased repeats, and near-miss
    corrections (another number, date, version, name, licence, role, negation)."""
    sessions: Workload = []
    for round_ in range(copies):
        first: list[Item] = []
        later: list[Item] = []
        for index, (template, paraphrase, (value, corrected)) in enumerate(_FAMILIES):
            npc = f"persona{round_}"
            fact, fixed = f"S{round_}.{index}", f"S{round_}.{index}.fix"
            text = template.format(v=value)
            first.append(Item(text, fact, npc))
            later += [
                Item(text, fact, npc),  # exact
                Item(text.upper().rstrip(".") + "!", fact, npc),  # trivial
                Item(f"Note: {text[0].lower()}{text[1:]}", fact, npc),  # filler
                Item(text.rstrip(".") + ", as discussed.", fact, npc),  # filler
                Item(paraphrase.format(v=value), fact, npc),  # paraphrase
                Item(template.format(v=corrected), fixed, npc, correction_of=fact),
            ]
        sessions += [first, later]
    return sessions


# -- matchers ----------------------------------------------------------------------------


def oracle(facts_of: dict[str, str], corrections: dict[str, str]) -> Callable:
    """Knows the labels: "same" for the same fact, "update" for a correction."""

    def judge(candidate: str, neighbours: list[str]) -> list[Any]:
        ours = facts_of[normalise(candidate)]
        verdicts = []
        for text in neighbours:
            theirs = facts_of.get(normalise(text))
            if theirs == ours:
                verdicts.append("same")
            elif corrections.get(ours) == theirs or corrections.get(theirs) == ours:
                verdicts.append("update")
            else:
                verdicts.append("different")
        return verdicts

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


# -- the replay --------------------------------------------------------------------------


def rejects(fact: str) -> bool:
    digest = hashlib.sha256(fact.encode()).digest()
    return digest[0] / 256 < REJECT_SHARE


def replay(workload: Workload, matcher_name: str) -> Tally:
    folder = Path(tempfile.mkdtemp(prefix="npc-replay-"))
    os.environ["NPC_NB_HOME"] = str(folder / "home")
    facts_of = {normalise(i.text): i.fact for s in workload for i in s}
    # the same words may be another persona's fact (the synthetic rounds)
    fact_of_wording = {(i.npc, normalise(i.text)): i.fact for s in workload for i in s}
    corrections = {i.fact: i.correction_of for s in workload for i in s if i.correction_of}
    rejected_texts: set[str] = set()
    matcher: Any = {
        "exact": None,
        "offline": "offline",
        "oracle": oracle(facts_of, corrections),
        "legacy": legacy(rejected_texts),
    }[matcher_name]
    nb = npc_nb.open(folder / "project", create=True, matcher=matcher, reviewer="replay")
    tally = Tally()
    fact_of_memory: dict[str, str] = {}
    for session in workload:
        for item in session:
            tally.facts.add(item.fact)
            _propose(nb, item, fact_of_memory, tally, corrections)
        _review(nb, fact_of_memory, fact_of_wording, tally, rejected_texts)
    nb.close()
    return tally


def _propose(
    nb: npc_nb.Project,
    item: Item,
    fact_of_memory: dict[str, str],
    tally: Tally,
    corrections: dict[str, str],
) -> None:
    outcome = nb.add_candidate(item.text, category="fact", npc=item.npc)
    tally.outcomes[outcome.action] = tally.outcomes.get(outcome.action, 0) + 1
    if outcome.queued:
        fact_of_memory[outcome.memory_id] = item.fact
        return
    absorbed_by = fact_of_memory.get(outcome.memory_id)
    if absorbed_by != item.fact:
        tally.false_merges += 1
        if corrections.get(item.fact) == absorbed_by:
            tally.corrections_lost += 1


def _review(
    nb: npc_nb.Project,
    fact_of_memory: dict[str, str],
    facts_of: dict[tuple[str, str], str],
    tally: Tally,
    rejected: set[str],
) -> None:
    """One card per fact: split off any wording of another fact, answer the card once;
    when the queue is empty, put back any automatic outcome of another fact (the end of
    a review lists them) and answer those too."""
    while True:
        for row in nb.review_queue().itertuples():
            fact = fact_of_memory[row.id]
            if row.variants > 1:
                _split_others(nb, row.id, fact, fact_of_memory, facts_of, tally)
            tally.questions += 1
            tally.asked.add(fact)
            if rejects(fact):
                nb.reject(row.id)
                rejected.add(normalise(row.final_text))
            else:
                nb.approve(row.id)
            # Approving an update supersedes the memory it updates; the new card carries on.
        if not _requeue_others(nb, fact_of_memory, facts_of, tally):
            return


def _split_others(
    nb: npc_nb.Project,
    card: str,
    fact: str,
    fact_of_memory: dict[str, str],
    facts_of: dict[tuple[str, str], str],
    tally: Tally,
) -> None:
    repeats = nb.reproposals()
    wordings = repeats[
        (repeats["memory_id"] == card) & (repeats["outcome"] == "merged") & repeats["label"].isna()
    ]
    for wording in wordings.itertuples():
        other = facts_of[(wording.npc, normalise(wording.proposed_text))]
        if other != fact:
            fact_of_memory[nb.requeue(wording.id)] = other
            tally.splits += 1


def _requeue_others(
    nb: npc_nb.Project,
    fact_of_memory: dict[str, str],
    facts_of: dict[tuple[str, str], str],
    tally: Tally,
) -> bool:
    put_back = False
    for entry in nb.review_session().automatic():
        if entry["outcome"] == "merged":
            continue  # checked on its card
        other = facts_of[(entry["npc"], normalise(entry["proposed_text"]))]
        if other != fact_of_memory.get(entry["memory_id"]):
            fact_of_memory[nb.requeue(entry["id"])] = other
            tally.requeues += 1
            put_back = True
    return put_back


def report(name: str, workload: Workload, matchers: list[str]) -> None:
    items = sum(len(s) for s in workload)
    facts = {i.fact for s in workload for i in s}
    print(f"\n{name}: {items} candidates, {len(facts)} distinct facts")
    print(
        f"{'matcher':<9}{'questions/fact':>16}{'false merges':>15}{'facts lost':>12}"
        f"{'corrections lost':>18}{'splits':>9}{'requeues':>10}   outcomes"
    )
    for matcher in matchers:
        t = replay(workload, matcher)
        lost = len(t.facts - t.asked)
        merges = f"{t.false_merges} ({t.false_merges / len(t.facts):.1%})"
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(t.outcomes.items()))
        print(
            f"{matcher:<9}{t.questions / len(t.facts):>16.3f}{merges:>15}{lost:>12}"
            f"{t.corrections_lost:>18}{t.rate(t.splits, 'merged'):>9}"
            f"{t.rate(t.requeues, 'suppressed', 'reinforced'):>10}   {outcomes}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, help="folder with candidates.json and facts")
    parser.add_argument("--matchers", nargs="+", default=["exact", "legacy", "offline", "oracle"])
    parser.add_argument("--copies", type=int, default=3, help="synthetic rounds")
    args = parser.parse_args()
    print(f"npc_nb {npc_nb.__version__}; reviewer rejects {REJECT_SHARE:.0%} of facts")
    report("synthetic", synthetic(args.copies), args.matchers)
    if args.locomo:
        report("LoCoMo conversation 26 (tuned on)", locomo(args.locomo, "26"), args.matchers)
        report("LoCoMo conversation 30 (held out)", locomo(args.locomo, "30"), args.matchers)


if __name__ == "__main__":
    main()
