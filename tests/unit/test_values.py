"""The typed values the guards compare: every change of value issues 34 and 41 list is
one, in both directions (a value put in place of another, added or left out; a label;
a qualifier of a known kind), and every rewording they list is none; with properties
over numbers and a symmetry property over every kind of value."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npc_nb._foundations.values import read_values, value_changes
from npc_nb.memory.matching import guard, offline_matcher

#: (memory, candidate, what the change is called): a correction of a value.
CORRECTIONS = [
    ("Effects count as significant when p < 0.05.", "... when p > 0.05.", "comparator"),
    ("Each job may use ≤ 8 GPUs.", "Each job may use ≥ 8 GPUs.", "comparator"),
    ("Use at least 3 reviewers.", "Use more than 3 reviewers.", "comparator"),
    ("The correlation is 0.4.", "The correlation is -0.4.", "sign"),
    ("The correlation is 0.4.", "The correlation is \u22120.4.", "sign"),
    ("The offset is +0.3.", "The offset is -0.3.", "sign"),
    ("The offset is +0.3.", "The offset is \u22120.3.", "sign"),
    ("The learning rate is 0.01.", "The learning rate is -0.01.", "sign"),
    ("Store the samples at -20 °C.", "Store the samples at 20 °C.", "sign"),
    ("The request timeout is 120 ms.", "The request timeout is 120 s.", "unit"),
    ("The laser power is 5 mW.", "The laser power is 5 MW.", "unit"),
    ("We need 10⁵ samples.", "We need 105 samples.", "number"),
    ("The grid has 10<sup>3</sup> cells.", "The grid has 103 cells.", "number"),
    ("The hash table holds 2**16 entries.", "The hash table holds 216 entries.", "number"),
    ("The survey has three sections.", "The survey has 4 sections.", "number"),
    ("The batch size is 32.", "The batch size is 64.", "number"),
    ("We use Python 3.10.", "We use Python 3.1.", "version"),
    ("The paper is due on March 15.", "The paper is due on March 25.", "date"),
    ("The lab meets on Mondays.", "The lab meets on Thursdays.", "date"),
    ("Stand-up is at 9 am.", "Stand-up is at 10 am.", "time"),
    ("Maria leads the field survey.", "Mario leads the field survey.", "name"),
    ("Jira is the issue tracker.", "Linear is the issue tracker.", "name"),
    ("The user likes footnotes.", "The user dislikes footnotes.", "negation"),
    ("We use DuckDB for the store.", "We no longer use DuckDB for the store.", "negation"),
    ("Personal data must never leave the EU servers.", "Personal data may leave the EU servers.",
     "negation"),
    # Issue 41: labels, and qualifiers that add or leave out a value of a known kind.
    ("Plan B is approved.", "Plan A is approved.", "label"),
    ("We use option I.", "We use option a.", "label"),
    ("writer a fact number 7", "writer b fact number 7", "label"),
    ("The trial is in phase II.", "The trial is in phase III.", "label"),
    ("Samples go to freezer A.", "Samples go to a freezer.", "label"),
    ("The pilot starts in week 3.", "The pilot starts in week 3 of May.", "date"),
    ("The seminar is at 3 pm.", "The seminar is at 3 pm on Fridays.", "date"),
    ("The paper is due on March 15.", "The paper is due on March 15, 2026.", "date"),
    ("The workshop is in the main hall.", "The workshop is in the main hall in Berlin.", "name"),
    ("Budget of 10k approved.", "Budget approved.", "number"),
    ("The scan timeout is 30.", "The scan timeout is 30 s.", "unit"),
]  # fmt: skip

#: (memory, candidate): the same fact, worded otherwise; no value changes.
REWORDINGS = [
    ("The user dislikes footnotes.", "The user would rather not have footnotes."),
    ("P-values are shown to three decimal places.", "P-values are shown to 3 decimal places."),
    ("Jira is the issue tracker.", "Basically, jira is the issue tracker."),
    ("Personal data must never leave the EU servers.",
     "Personal data has to stay on servers in the EU."),
    ("We need 10⁵ samples.", "We need 100,000 samples."),
    ("We need 10⁵ samples.", "We need 10^5 samples."),
    ("The request timeout is 120 ms.", "The request timeout is 120 milliseconds."),
    ("The laser power is 5 mW.", "THE LASER POWER IS 5 MW!"),  # shouted: its case says nothing
    ("The offset is +0.3.", "The offset is 0.3."),
    ("Use at least 3 reviewers.", "Use no fewer than three reviewers."),
    ("The budget is 10k.", "The budget is 10,000."),
    ("The budget of 10k was approved.", "Basically, a budget of 10,000 was approved."),
    ("The paper is due on March 15.", "The paper is due on 15 March."),
    ("Plan B is approved.", "plan b is approved"),
    ("Plan B is approved.", "Plan \u0392 is approved."),  # a Greek capital Beta
    ("Plan A is approved.", "Plan \u13aa is approved."),  # a Cherokee letter like an A
    ("Uses P for the statistics.", "Uses \u03a1 for the statistics."),  # a Greek Rho
    ("Group A gets the placebo.", "The placebo goes to group A."),
    ("A tablet is used for the survey.", "The survey uses a tablet."),
    ("I prefer tea over coffee.", "Tea over coffee is what I prefer."),
    ("The lab meets on Mondays.", "Lab meetings are on Monday."),
    ("We use DuckDB for the store.", "DuckDB is what we use for the store."),
    ("Use 3-5 GPUs.", "Use between 3 and 5 GPUs."),
    ("The discount is 5 percent.", "The discount is 5%."),
]  # fmt: skip


@pytest.mark.parametrize(("memory", "candidate", "kind"), CORRECTIONS)
def test_a_changed_value_is_a_change_in_both_directions(
    memory: str, candidate: str, kind: str
) -> None:
    candidate = candidate.replace("...", memory.rsplit(" when ", 1)[0])
    forward, backward = value_changes(candidate, memory), value_changes(memory, candidate)
    assert forward and backward
    assert forward[0].startswith(f"{kind}:"), forward
    assert backward[0].startswith(f"{kind}:"), backward


@pytest.mark.parametrize(("memory", "candidate"), REWORDINGS)
def test_a_rewording_changes_no_value(memory: str, candidate: str) -> None:
    assert value_changes(candidate, memory) == []
    assert value_changes(memory, candidate) == []


def test_what_changed_is_named_as_written() -> None:
    assert value_changes("The timeout is 120 s.", "The timeout is 120 ms.") == [
        "unit: 120 ms → 120 s"
    ]
    assert value_changes("p > 0.05", "p < 0.05") == ["comparator: < 0.05 → > 0.05"]
    assert value_changes("We need 105 samples.", "We need 10⁵ samples.") == ["number: 10^5 → 105"]


def test_values_are_read_with_their_kind_and_amount() -> None:
    (value,) = read_values("Keep it under 2.5 × 10^3 ms.").values
    assert (value.kind, value.amount, value.comparator, value.unit) == (
        "number", Fraction(2500), "<", "ms",
    )  # fmt: skip
    (version,) = read_values("We use Python 3.10 now.").values
    assert (version.kind, version.amount) == ("version", ("3", "10"))
    (span,) = read_values("Use 3-5 GPUs.").values
    assert (span.kind, span.amount) == ("range", (Fraction(3), Fraction(5)))
    assert read_values("COVID-19 delayed us.").values[0].amount == Fraction(19)  # no sign


def test_names_are_compared_without_case_and_a_shouted_text_has_none() -> None:
    assert read_values("Basically, jira is the issue tracker").names == ()
    assert read_values("Jira is the issue tracker").names == ("jira",)
    assert read_values("JIRA IS THE ISSUE TRACKER").names == ()


_NUMBERS = st.decimals(min_value=-(10**6), max_value=10**6, places=3, allow_nan=False)
_WORDS = {3: "three", 4: "four", 7: "seven", 12: "twelve", 20: "twenty", 21: "twenty-one"}


@given(_NUMBERS, _NUMBERS)
def test_two_numbers_differ_exactly_when_their_values_do(a: object, b: object) -> None:
    changes = value_changes(f"The threshold is {b} units.", f"The threshold is {a} units.")
    assert bool(changes) == (Fraction(str(a)) != Fraction(str(b)))


@given(_NUMBERS.filter(lambda x: x != 0))
def test_a_sign_flip_is_always_a_change(a: object) -> None:
    flipped = -Fraction(str(a))
    changes = value_changes(
        f"The offset is {float(flipped)!r}.", f"The offset is {float(Fraction(str(a)))!r}."
    )
    assert changes and changes[0].startswith("sign:")


@given(st.sampled_from(sorted(_WORDS)), st.integers(min_value=0, max_value=99))
def test_a_number_word_is_its_digits_and_no_other_number(number: int, other: int) -> None:
    word = f"The survey has {_WORDS[number]} sections."
    assert value_changes(f"The survey has {number} sections.", word) == []
    assert bool(value_changes(f"The survey has {other} sections.", word)) == (other != number)


@given(st.text(max_size=80))
def test_a_text_never_changes_a_value_against_itself(text: str) -> None:
    assert value_changes(text, text) == []


_BOUNDS = st.sampled_from(["<", "≤", ">", "≥", "at least", "at most", "more than", "under"])


@given(_BOUNDS, _BOUNDS)
def test_comparators_differ_when_they_mean_different_bounds(one: str, two: str) -> None:
    meaning = {"at least": "≥", "at most": "≤", "more than": ">", "under": "<"}
    changed = value_changes(f"Use {two} 8 GPUs.", f"Use {one} 8 GPUs.")
    assert bool(changed) == (meaning.get(one, one) != meaning.get(two, two))


#: Every kind of value (issue 41), as a statement with a slot and what fills it: the
#: words and what they mean ("" leaves the value out: a qualifier removed).
_KINDS = {
    "number": ("We order {} pipette tips.", [("32", 32), ("64", 64), ("three", 3), ("3", 3),
                                             ("", None)]),
    "unit": ("The timeout is 30{}.", [(" ms", "ms"), (" s", "s"), (" seconds", "s"),
                                     (" min", "min"), ("", None)]),
    "date": ("The paper is due on March 15{}.", [("", None), (", 2026", 2026), (", 2027", 2027)]),
    "day": ("The paper is due on {}.", [("March 15", (3, 15)), ("15 March", (3, 15)),
                                        ("March 25", (3, 25))]),
    "month": ("The pilot starts in week 3{}.", [("", None), (" of May", 5), (" of June", 6)]),
    "weekday": ("The lab meets{}.", [("", None), (" on Mondays", 0), (" on Monday", 0),
                                     (" on Thursdays", 3)]),
    "time": ("Stand-up is{}.", [("", None), (" at 9 am", 540), (" at 09:00", 540),
                                (" at 10 am", 600)]),
    "version": ("We use Python {}.", [("3.10", "3.10"), ("3.1", "3.1"), ("3.12", "3.12")]),
    "person": ("The survey is led by {}.", [("Maria", "maria"), ("Mario", "mario"),
                                            ("the lead", None)]),
    "place": ("The workshop is in the main hall{}.", [("", None), (" in Berlin", "berlin"),
                                                      (" in Paris", "paris")]),
    "label": ("Plan {} is approved.", [("A", "a"), ("B", "b"), ("\u0392", "b"), ("C", "c"),
                                       ("II", "ii"), ("III", "iii")]),
    "letter": ("writer {} fact number 7", [("a", "a"), ("b", "b"), ("i", "i"), ("c", "c")]),
    "option": ("We use option {}.", [("I", "i"), ("a", "a"), ("A", "a"), ("B", "b"), ("", None)]),
    "negation": ("We {} DuckDB for the store.", [("use", True), ("no longer use", False),
                                                 ("do not use", False)]),
}  # fmt: skip


@st.composite
def _two_statements(draw: st.DrawFn) -> tuple[str, str, bool]:
    template, fillers = _KINDS[draw(st.sampled_from(sorted(_KINDS)))]
    (one, meant), (other, also) = draw(st.permutations(fillers))[:2]
    texts = (" ".join(template.format(f).split()).replace(" .", ".") for f in (one, other))
    return (*texts, meant != also)


@given(_two_statements())
def test_a_value_changes_one_way_exactly_when_it_changes_the_other(
    pair: tuple[str, str, bool],
) -> None:
    one, other, changed = pair
    forward, backward = value_changes(other, one), value_changes(one, other)
    assert bool(forward) == bool(backward) == changed, (forward, backward)
    if changed:  # the offline matcher asks both ways, and says the same both ways
        there = [verdict for verdict, _ in offline_matcher(other, [one])]
        assert there == [verdict for verdict, _ in offline_matcher(one, [other])]
        assert there != ["same"]
        assert guard(other, one, "same")[0] == guard(one, other, "same")[0] == "update"
    else:  # a judge's "same" on a rewording stands both ways
        assert guard(other, one, "same")[0] == guard(one, other, "same")[0] == "same"
