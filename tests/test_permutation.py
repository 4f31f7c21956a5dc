"""The permutation (randomisation) test over conversations that ``exp.compare()``
reports as ``permutation_p``, checked against examples enumerated by hand and against
SciPy, and the note that says when the cluster bootstrap interval cannot be trusted."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import npc_nb
from npc_nb import Approve, Reject
from npc_nb.analytics.comparison import permutation_test_difference
from npc_nb.experiments.results import compare_frame


def _cards(counts: dict[str, list[tuple[int, int]]]) -> pd.DataFrame:
    """One row per card: ``counts[arm][k]`` is (approved, cards) of the arm in
    conversation k; the approved cards come first."""
    return pd.DataFrame(
        [
            {"conversation": k, "arm": arm, "approved": int(i < approved)}
            for arm, per_conversation in counts.items()
            for k, (approved, cards) in enumerate(per_conversation)
            for i in range(cards)
        ]
    )


def _permutation(frame: pd.DataFrame, **options: object) -> tuple[float, int, str]:
    return permutation_test_difference(
        frame,
        cluster="conversation",
        group="arm",
        outcome="approved",
        baseline="A",
        other="B",
        **options,  # type: ignore[arg-type]
    )


def test_the_permutation_p_value_of_three_conversations_enumerated_by_hand() -> None:
    """Conversation 1: A 1 of 3 approved, B 2 of 2; conversation 2: A 0 of 1, B 1 of 1;
    conversation 3: A 1 of 1, B 0 of 1. Observed: B 3/4 - A 2/5 = 0.75 - 0.40 = 0.35.

    Under the null the two arms' cards of a conversation could have carried either
    label: swapping them in any subset of the 3 conversations gives 2³ = 8 arrangements
    (s1 s2 s3, 1 = swapped), each with B's and A's pooled rates:

        000  B (2+1+0)/(2+1+1) = 3/4   A (1+0+1)/(3+1+1) = 2/5   T =  0.35
        100  B (1+1+0)/(3+1+1) = 2/5   A (2+0+1)/(2+1+1) = 3/4   T = -0.35
        010  B (2+0+0)/(2+1+1) = 2/4   A (1+1+1)/(3+1+1) = 3/5   T = -0.10
        001  B (2+1+1)/(2+1+1) = 4/4   A (1+0+0)/(3+1+1) = 1/5   T =  0.80
        110  B (1+0+0)/(3+1+1) = 1/5   A (2+1+1)/(2+1+1) = 4/4   T = -0.80
        101  B (1+1+1)/(3+1+1) = 3/5   A (2+0+0)/(2+1+1) = 2/4   T =  0.10
        011  B (2+0+1)/(2+1+1) = 3/4   A (1+1+0)/(3+1+1) = 2/5   T =  0.35
        111  B (1+0+1)/(3+1+1) = 2/5   A (2+1+0)/(2+1+1) = 3/4   T = -0.35

    |T| >= 0.35 in 000, 100, 001, 110, 011, 111: 6 of 8, so p = 6/8 = 0.75.
    """
    frame = _cards({"A": [(1, 3), (0, 1), (1, 1)], "B": [(2, 2), (1, 1), (0, 1)]})
    assert _permutation(frame) == (0.75, 8, "exact")


def test_four_conversations_cannot_give_a_p_value_below_one_eighth() -> None:
    """Four conversations, one card per arm in each: A never approved, B always. Observed
    T = 4/4 - 0/4 = 1. Swapping j of the 4 conversations gives T = ((4 - j) - j) / 4, so
    |T| = 1 only for j = 0 (1 arrangement) and j = 4 (1 arrangement): p = 2/16 = 0.125,
    however strong the effect looks; the smallest p of K conversations is 2/2^K."""
    frame = _cards({"A": [(0, 1)] * 4, "B": [(1, 1)] * 4})
    assert _permutation(frame) == (0.125, 16, "exact")


def _scipy_exact(frame: pd.DataFrame) -> float:
    """SciPy's paired permutation test (each conversation's two arms swapped or not, all
    2^K arrangements) of the same statistic: pooled rate of B minus pooled rate of A."""
    conversations = sorted(frame["conversation"].unique())
    sums = {
        (arm, k): (part["approved"].sum(), len(part))
        for (arm, k), part in frame.groupby(["arm", "conversation"])
    }
    cells = [sums.get(("A", k), (0, 0)) for k in conversations]
    cells += [sums.get(("B", k), (0, 0)) for k in conversations]

    def statistic(a: np.ndarray, b: np.ndarray) -> float:
        def rate(side: np.ndarray) -> float:
            return sum(cells[i][0] for i in side) / sum(cells[i][1] for i in side)

        return rate(b) - rate(a)

    k = len(conversations)
    found = scipy.stats.permutation_test(
        (np.arange(k), np.arange(k, 2 * k)),
        statistic,
        permutation_type="samples",
        vectorized=False,
        n_resamples=np.inf,
    )
    return float(found.pvalue)


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_permutation_test_agrees_with_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts: dict[str, list[tuple[int, int]]] = {"A": [], "B": []}
    for _ in range(int(rng.integers(3, 9))):
        for arm in counts:
            cards = int(rng.integers(1, 5))
            counts[arm].append((int(rng.integers(0, cards + 1)), cards))
    frame = _cards(counts)
    p, arrangements, method = _permutation(frame)
    assert method == "exact" and arrangements == 2 ** frame["conversation"].nunique()
    assert p == pytest.approx(_scipy_exact(frame), abs=1e-12)


def test_many_conversations_are_a_seeded_monte_carlo_stating_its_count() -> None:
    rng = np.random.default_rng(7)
    counts = {
        "A": [(int(rng.integers(0, 3)), 2) for _ in range(18)],
        "B": [(int(rng.integers(1, 3)), 2) for _ in range(18)],
    }
    frame = _cards(counts)
    p, drawn, method = _permutation(frame, resamples=4000, seed=1)
    assert (drawn, method) == (4000, "monte carlo")
    assert _permutation(frame, resamples=4000, seed=1) == (p, drawn, method)
    exact, every, how = _permutation(frame, exact_limit=2**18)
    assert (every, how) == (2**18, "exact")
    # (1 + hits) / (1 + draws): within 4 standard errors of the exact value, never 0
    assert abs(p - exact) < 4 * (exact * (1 - exact) / drawn) ** 0.5 + 1 / drawn
    assert p > 0


def test_the_permutation_test_of_an_arm_without_cards_is_nan_and_leaves_out_undecided() -> None:
    frame = _cards({"A": [(1, 2), (0, 1)], "B": [(2, 2), (1, 1)]})
    p, arrangements, method = _permutation(frame[frame["arm"] == "A"])
    assert np.isnan(p) and arrangements == 0 and method == "exact"
    undecided = pd.concat([frame, frame.head(2).assign(approved=None)], ignore_index=True)
    assert _permutation(undecided) == _permutation(frame)
    with pytest.raises(npc_nb.NpcError, match="True/False or 0/1"):
        _permutation(frame.assign(approved=frame["approved"] * 2))
    with pytest.raises(npc_nb.NpcError, match="resamples"):
        _permutation(frame, resamples=0)


# -- what exp.compare() reports -----------------------------------------------------------


def _experiment_cards(counts: dict[str, list[tuple[int, int]]]) -> pd.DataFrame:
    """The cards frame compare() reads: arm, decision, conversation_id."""
    frame = _cards(counts)
    return pd.DataFrame(
        {
            "arm": frame["arm"],
            "decision": frame["approved"].map({1: "approve", 0: "reject"}),
            "conversation_id": frame["conversation"].map(lambda k: f"c{k}"),
        }
    )


@pytest.mark.parametrize(
    ("counts", "says"),
    [
        ({"A": [(1, 2)] * 19, "B": [(1, 2)] * 18 + [(2, 2)]}, ["19 conversations"]),
        ({"A": [(1, 2)] * 20, "B": [(2, 2)] * 20}, ["arm 'B' has a rate of 1"]),
        ({"A": [(0, 2)] * 20, "B": [(1, 2)] * 20}, ["arm 'A' has a rate of 0"]),
        ({"A": [(0, 1)] * 4, "B": [(1, 1)] * 4}, ["4 conversations", "arm 'B' has a rate of 1"]),
    ],
)
def test_the_bootstrap_interval_comes_with_a_note_where_it_cannot_be_trusted(
    counts: dict[str, list[tuple[int, int]]], says: list[str]
) -> None:
    row = compare_frame(_experiment_cards(counts), ["A", "B"], "approval_rate", "A", 0).iloc[0]
    assert not np.isnan(row["bootstrap_low"])  # reported, with the note beside it
    for words in says:
        assert words in row["note"]
    assert "bootstrap" in row["note"] and "permutation_p" in row["note"]


def test_twenty_conversations_with_rates_strictly_inside_need_no_note() -> None:
    counts = {"A": [(1, 2)] * 20, "B": [(1, 2)] * 10 + [(2, 2)] * 10}
    row = compare_frame(_experiment_cards(counts), ["A", "B"], "approval_rate", "A", 0).iloc[0]
    assert pd.isna(row["note"])
    assert (row["conversations"], row["permutations"], row["permutation_method"]) == (
        20,
        10_000,
        "monte carlo",
    )


WORDS = (
    "alder birch cedar dogwood elm fir ginkgo hazel ironwood juniper larch maple oak pine "
    "quince rowan spruce teak walnut yew acacia beech cypress ebony holly laurel linden"
).split()


def test_exp_compare_on_the_issues_four_conversations(nb: npc_nb.Project) -> None:
    """Four conversations; arm A proposes 5, 4, 5, 4 cards (3 approved in each: 12/18),
    arm B 2, 2, 3, 2 (2 approved in each: 8/9). Newcombe's interval [-0.144, 0.469] and
    Fisher's p = 0.363 say the difference 0.222 is not established; the permutation
    test can do no better than 2/16 = 0.125 with 4 conversations, and it is that: only
    the observed arrangement and its mirror image reach |T| = 0.222."""
    plan = {"A": [5, 4, 5, 4], "B": [2, 2, 3, 2]}
    approved_per_conversation = {"A": 3, "B": 2}
    statements = {arm: [] for arm in plan}  # per arm, per conversation
    words = iter(WORDS)
    for arm, sizes in plan.items():
        statements[arm] = [[f"The {next(words)} protocol is final." for _ in range(n)]
                           for n in sizes]  # fmt: skip
    nb.configure(extract_in_background=False)
    nb.npc("analyst", directive="You help.", model="npc_nb/offline")
    for k in range(4):
        nb.chat("analyst", f"Conversation number {k}.", new=True)

    def scripted(arm: str):
        def extractor(user: str, reply: str) -> str:
            k = int(user.rstrip(".").rsplit(" ", 1)[1])
            items = [{"statement": s, "category": "fact"} for s in statements[arm][k]]
            return json.dumps({"memories": items})

        return extractor

    arms = {arm: {"extractor": scripted(arm), "max_memories_per_exchange": 10} for arm in plan}
    exp = nb.experiment("issue", arms=arms, npc="analyst")
    exp.run()
    exp.wait(timeout=120)
    approve = {
        text
        for arm, per_conversation in statements.items()
        for texts in per_conversation
        for text in texts[: approved_per_conversation[arm]]
    }
    session = exp.review_session(by="bob")
    while (card := session.card()) is not None:
        session.decide((Approve if card.text in approve else Reject)(session.current))
    row = exp.compare(baseline="A").iloc[0]
    assert (row["successes"], row["trials"]) == (8, 9)
    assert (row["baseline_successes"], row["baseline_trials"]) == (12, 18)
    assert round(row["ci_low"], 3) == -0.144 and round(row["ci_high"], 3) == 0.469
    assert round(row["p_value"], 3) == 0.363
    assert (row["permutation_p"], row["permutations"]) == (0.125, 16)
    assert row["permutation_method"] == "exact" and row["conversations"] == 4
    assert "4 conversations" in row["note"]
