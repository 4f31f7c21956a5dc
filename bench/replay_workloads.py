"""The workloads ``replay_matching.py`` replays: streams of candidate memories, in
sessions, each labelled with the distinct fact it states.

- ``synthetic``: facts, then their exact, trivial, filler and paraphrased repeats, and
  near-miss corrections (another number, date, version, name, licence, role, negation);
- ``near_miss``: the pairs of issue 34. Paraphrases on which a wording guard overrode a
  correct judge ("dislikes footnotes" / "would rather not have footnotes", "three" /
  "3 decimal places", "Jira" / "basically, jira", "never leave the EU servers" / "stay
  on servers in the EU"), and corrections the guards and normalisation used to miss
  (a sign, a comparator, a unit prefix or case, an exponent, a superscript, a number
  word): each correction is a fact of its own, which must be asked;
- ``labels``: the pairs of issue 41, each replayed in both directions (either side first,
  the other its correction): one-letter labels ("Plan B" / "Plan A", "option I" /
  "option a", "writer a" / "writer b"), Roman numerals, lookalike letters, and
  qualifiers that add a value of a known kind ("week 3" / "week 3 of May": a month; a
  weekday, a place, a person, a quantity, a unit, a year); and two writers proposing
  "writer a fact number N" and "writer b fact number N" in one session, distinct facts;
- ``locomo``: LoCoMo (Maharana et al., ACL 2024) conversations 26 and 30, read from
  the path given (``candidates.json``, ``facts-conv26.json``); conversation 30's labels
  are ours (``bench/labels/``). Conversation 26 is where the offline matcher was tuned;
  conversation 30 is held out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

LABELS = Path(__file__).resolve().parent / "labels"


@dataclass
class Item:
    text: str
    fact: str
    npc: str
    correction_of: str | None = None  # near-misses: the fact they correct


Workload = list[list[Item]]  # sessions of items


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
    families = [
        (template.format(v=value), [paraphrase.format(v=value)], [template.format(v=fixed)])
        for template, paraphrase, (value, fixed) in _FAMILIES
    ]
    return _rounds(families, copies, "S")


#: (fact, its paraphrases, its corrections) for the near-miss workload (issue 34).
_NEAR_MISSES = [
    # Paraphrases a wording guard overrode; each has a real correction as well.
    (
        "The user dislikes footnotes.",
        ["The user would rather not have footnotes."],
        ["The user likes footnotes."],
    ),
    (
        "P-values should be shown to three decimal places.",
        ["P-values should be shown to 3 decimal places."],
        ["P-values should be shown to 4 decimal places."],
    ),
    (
        "Jira is the issue tracker.",
        ["Basically, jira is the issue tracker."],
        ["Linear is the issue tracker."],
    ),
    (
        "Personal data must never leave the EU servers.",
        ["Personal data has to stay on servers in the EU."],
        ["Personal data may leave the EU servers."],
    ),
    # Corrections of a value that the guards or the normalisation missed.
    (
        "Effects count as significant when p < 0.05.",
        ["An effect is significant if p < 0.05."],
        ["Effects count as significant when p > 0.05."],
    ),
    ("Each job may use ≤ 8 GPUs.", ["A job can use ≤ 8 GPUs."], ["Each job may use ≥ 8 GPUs."]),
    (
        "The correlation of dose and response is 0.4.",
        ["Dose and response correlate at 0.4."],
        [
            "The correlation of dose and response is -0.4.",
            "The correlation of dose and response is \u22120.4.",
        ],
    ),
    (
        "The calibration offset is +0.3.",
        ["The offset of the calibration is +0.3."],
        ["The calibration offset is -0.3.", "The calibration offset is \u22120.3."],
    ),
    (
        "The request timeout is 120 ms.",
        ["Requests time out after 120 ms."],
        ["The request timeout is 120 s."],
    ),
    (
        "The learning rate is 0.01.",
        ["We train with a learning rate of 0.01."],
        ["The learning rate is -0.01."],
    ),
    ("The laser power is 5 mW.", ["The laser runs at 5 mW."], ["The laser power is 5 MW."]),
    ("We need 10⁵ samples.", ["The study needs 10⁵ samples."], ["We need 105 samples."]),
    (
        "The grid has 10<sup>3</sup> cells.",
        ["There are 10<sup>3</sup> cells in the grid."],
        ["The grid has 103 cells."],
    ),
    (
        "The hash table holds 2**16 entries.",
        ["The hash table has room for 2**16 entries."],
        ["The hash table holds 216 entries."],
    ),
    (
        "Store the samples at -20 °C.",
        ["The samples are stored at -20 °C."],
        ["Store the samples at 20 °C."],
    ),
    (
        "The survey has three sections.",
        ["There are three sections in the survey."],
        ["The survey has 4 sections."],
    ),
]


def near_miss(copies: int = 3) -> Workload:
    """The pairs of issue 34: paraphrases a correct judge must be let call the same
    fact, and corrections of a value that must always be asked."""
    return _rounds(_NEAR_MISSES, copies, "N")


#: (one statement, the other): a label or a qualifier of a known kind changed, added or
#: removed (issue 41). ``labels`` replays each pair both ways.
_LABEL_PAIRS = [
    ("Plan B is approved.", "Plan A is approved."),
    ("Samples go to freezer B.", "Samples go to freezer A."),
    ("We store raw data on drive B.", "We store raw data on drive A."),
    ("We use option I.", "We use option a."),
    ("The trial is in phase II.", "The trial is in phase III."),
    ("Group A gets the placebo.", "Group B gets the placebo."),
    ("The cohort is split into arms A and B.", "The cohort is split into arms A and C."),
    ("Results go in appendix C.", "Results go in appendix D."),
    ("Uses R for the statistics.", "Uses P for the statistics."),
    ("Protocol \u0392 is the default.", "Protocol C is the default."),  # a Greek Beta: a B
    ("The pilot starts in week 3.", "The pilot starts in week 3 of May."),
    ("The seminar is at 3 pm.", "The seminar is at 3 pm on Fridays."),
    ("The workshop is in the main hall.", "The workshop is in the main hall in Berlin."),
    ("The field notes are checked by the lead.", "The field notes are checked by Priya."),
    ("Order pipette tips for the lab.", "Order 500 pipette tips for the lab."),
    ("The scan timeout is 30.", "The scan timeout is 30 s."),
    ("The paper is due on March 15.", "The paper is due on March 15, 2027."),
    ("Budget of 10k approved.", "Budget approved."),
]


def labels(copies: int = 3, writers: int = 20) -> Workload:
    """The pairs of issue 41, each replayed with either side first and the other as its
    correction, then two writers' interleaved facts ("writer a fact number N", "writer b
    fact number N"), distinct facts proposed in one session."""
    forward = [(one, [], [other]) for one, other in _LABEL_PAIRS]
    backward = [(other, [], [one]) for one, other in _LABEL_PAIRS]
    sessions = _rounds(forward, copies, "L", "forward") + _rounds(backward, copies, "M", "backward")
    interleaved = [
        Item(f"writer {w} fact number {n}", f"W.{w}.{n}", "writer")
        for n in range(1, writers + 1)
        for w in ("a", "b")
    ]
    return [*sessions, interleaved]


def _rounds(
    families: list[tuple[str, list[str], list[str]]],
    copies: int,
    tag: str,
    persona: str = "persona",
) -> Workload:
    """Per round (a persona each): the facts, then a session of their exact, trivial
    (shouted) and filler repeats, paraphrases, and corrections (a fact of their own)."""
    sessions: Workload = []
    for round_ in range(copies):
        first: list[Item] = []
        later: list[Item] = []
        npc = f"{persona}{round_}"
        for index, (text, paraphrases, corrections) in enumerate(families):
            fact, fixed = f"{tag}{round_}.{index}", f"{tag}{round_}.{index}.fix"
            first.append(Item(text, fact, npc))
            later += [
                Item(text, fact, npc),  # exact
                Item(text.upper().rstrip(".") + "!", fact, npc),  # trivial
                Item(f"Note: {text[0].lower()}{text[1:]}", fact, npc),  # filler
                Item(text.rstrip(".") + ", as discussed.", fact, npc),  # filler
                *(Item(p, fact, npc) for p in paraphrases),
                *(Item(c, fixed, npc, correction_of=fact) for c in corrections),
            ]
        sessions += [first, later]
    return sessions
