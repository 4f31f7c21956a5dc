"""The permutation (randomisation) test over conversations that ``exp.compare()`` reports
as ``permutation_p``, checked against examples enumerated by hand and against SciPy, and
the note that says when the cluster bootstrap interval cannot be trusted.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_permutation.py (the fast tier).
"""

from __future__ import annotations

import json

import npc_nb
from npc_nb import Approve, Reject
from tests.unit.test_permutation import WORDS


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
