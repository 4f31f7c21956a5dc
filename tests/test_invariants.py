"""A stateful property test: random decision sequences never break the trust invariants.

After every step, checked against the real store:
- the context block holds exactly the approved, current memories each persona may see;
- every memory's audit trail is a gapless chain ending in its current status and text;
- the review queue is exactly the pending and due deferred memories;
and within steps: a rejected content is never queued again, and undo restores the
state before the decision it reverts.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import npc_nb
from npc_nb import Approve, Defer, Reject, Skip
from npc_nb._foundations.text import normalise

TEXTS = [
    "Deadline is Friday",
    "deadline is friday.",
    "We use DuckDB",
    "Prefers tea",
    "The lab meets Mondays",
    "Budget is 10k",
]
PERSONAS = ["analyst", "writer"]
LINE = re.compile(r"^- \[\w+/\w+\] (.*)$", re.MULTILINE)
LINE_TEXT = re.compile(r" \(valid (from \S+)? ?(until \S+)?\)$")


def visible(row: dict, npc: str | None) -> bool:
    return row["scope"] in ("project", "global") or row["npc"] == npc


class ReviewMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = tempfile.mkdtemp(prefix="npc-stateful-")
        self.saved_home = os.environ.get("NPC_NB_HOME")
        os.environ["NPC_NB_HOME"] = os.path.join(self.folder, "home")
        team = Path(self.folder, "npc_team")
        team.mkdir()
        for name in PERSONAS:  # defined, so filtering by one is valid before it has memories
            (team / f"{name}.npc").write_text(f"name: {name}\nprimary_directive: Help.\n")
        self.nb = npc_nb.open(self.folder)
        # A second Project on the same folder (a second handle in one kernel): decisions
        # made through it must be seen at once through the first, caches included.
        self.other = npc_nb.open(self.folder)
        self.undo_stack: list[dict[str, tuple[str, str]]] = []

    def teardown(self) -> None:
        self.nb.close()
        self.other.close()
        if self.saved_home is None:
            os.environ.pop("NPC_NB_HOME", None)
        else:
            os.environ["NPC_NB_HOME"] = self.saved_home
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- helpers ------------------------------------------------------------------------

    def rows(self) -> list[dict]:
        return self.nb.memories().to_dict("records")

    def snapshot(self) -> dict[str, tuple[str, str]]:
        return {r["id"]: (r["status"], r["final_text"]) for r in self.rows()}

    def ids_with(self, *statuses: str) -> list[str]:
        return [r["id"] for r in self.rows() if r["status"] in statuses]

    def decided(self, before: dict[str, tuple[str, str]]) -> None:
        self.undo_stack.append(before)

    # -- rules --------------------------------------------------------------------------

    @rule(
        text=st.sampled_from(TEXTS),
        npc=st.sampled_from(PERSONAS),
        scope=st.sampled_from(["npc", "project", "global"]),
    )
    def propose(self, text: str, npc: str, scope: str) -> None:
        owner = None if scope != "npc" else npc
        visible_rejected = {
            normalise(r["final_text"])
            for r in self.rows()
            if r["status"] == "human-rejected" and visible(r, owner)
        }
        outcome = self.nb.add_candidate(text, category="fact", npc=owner, scope=scope)
        if normalise(text) in visible_rejected:
            assert outcome.action == "suppressed", outcome

    @rule(
        data=st.data(),
        decision=st.sampled_from(["approve", "reject", "skip", "defer", "defer_due"]),
        through_other=st.booleans(),
    )
    def decide(self, data: st.DataObject, decision: str, through_other: bool) -> None:
        open_ids = self.ids_with("pending_approval", "deferred")
        if not open_ids:
            return
        project = self.other if through_other else self.nb
        before = self.snapshot()
        memory = data.draw(st.sampled_from(open_ids))
        if decision == "defer_due":
            project.defer(memory, until=datetime.now() - timedelta(minutes=1))
        else:
            kind = {"approve": Approve, "reject": Reject, "skip": Skip, "defer": Defer}[decision]
            project.apply(kind(memory))
        self.decided(before)

    @rule(data=st.data(), window=st.sampled_from(["ended", "future", "current", "clear"]))
    def set_validity(self, data: st.DataObject, window: str) -> None:
        ids = self.ids_with("human-approved", "human-edited")
        if not ids:
            return
        now = datetime.now()
        bounds = {
            "ended": {"valid_from": None, "valid_to": now - timedelta(days=1)},
            "future": {"valid_from": now + timedelta(days=1), "valid_to": None},
            "current": {"valid_from": now - timedelta(days=1), "valid_to": now + timedelta(days=1)},
            "clear": {"valid_from": None, "valid_to": None},
        }[window]
        before = self.snapshot()
        self.nb.set_validity(data.draw(st.sampled_from(ids)), **bounds)
        self.decided(before)

    @rule(data=st.data(), suffix=st.sampled_from([" (edited)", " at 5pm", ""]))
    def edit(self, data: st.DataObject, suffix: str) -> None:
        ids = self.ids_with("pending_approval", "deferred", "human-approved", "human-edited")
        if not ids:
            return
        memory = data.draw(st.sampled_from(ids))
        before = self.snapshot()
        self.nb.edit(memory, before[memory][1] + suffix + " v2")
        self.decided(before)

    @rule(data=st.data())
    def reject_approved(self, data: st.DataObject) -> None:
        ids = self.ids_with("human-approved", "human-edited")
        if ids:
            before = self.snapshot()
            self.nb.reject(data.draw(st.sampled_from(ids)), reason="retract")
            self.decided(before)

    @rule(npc=st.sampled_from([None, *PERSONAS]))
    def approve_all(self, npc: str | None) -> None:
        before = self.snapshot()
        result = self.nb.approve_all(self.nb.preview_approve_all(npc=npc))
        if result.changes:
            self.decided(before)

    @rule()
    def undo(self) -> None:
        if not self.undo_stack:
            return
        expected = self.undo_stack.pop()
        self.nb.undo()
        after = self.snapshot()
        for memory_id, state in expected.items():
            assert after[memory_id] == state, (memory_id, state, after[memory_id])
        created = {r["id"] for r in self.rows() if isinstance(r["supersedes"], str)}
        for memory_id in created - set(expected):  # made by the undone supersede
            assert after[memory_id][0] == "superseded"

    # -- invariants ---------------------------------------------------------------------

    @invariant()
    def context_holds_exactly_the_approved_visible_memories(self) -> None:
        rows = self.rows()
        now = datetime.now(UTC).replace(tzinfo=None)
        for npc in PERSONAS:
            expected = sorted(
                " ".join(r["final_text"].split())
                for r in rows
                if r["status"] in ("human-approved", "human-edited")
                and visible(r, npc)
                and (pd.isna(r["valid_from"]) or r["valid_from"] <= now)
                and (pd.isna(r["valid_to"]) or r["valid_to"] > now)
            )
            for project in (self.nb, self.other):
                shown = [LINE_TEXT.sub("", line) for line in LINE.findall(project.context(npc))]
                assert sorted(shown) == expected

    @invariant()
    def every_memory_has_a_gapless_audit_chain(self) -> None:
        events = self.nb.decisions()
        for row in self.rows():
            chain = events[events["memory_id"] == row["id"]].to_dict("records")
            assert chain[0]["action"] in ("propose", "supersede")
            assert pd.isna(chain[0]["from_status"])
            for earlier, later in itertools.pairwise(chain):
                assert later["from_status"] == earlier["to_status"]
                assert later["text_before"] == earlier["text_after"]
            assert chain[-1]["to_status"] == row["status"]
            assert chain[-1]["text_after"] == row["final_text"]
            assert all(isinstance(e["reviewer"], str) and e["reviewer"] for e in chain)

    @invariant()
    def queue_is_exactly_the_open_memories(self) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        expected = {
            r["id"]
            for r in self.rows()
            if r["status"] == "pending_approval"
            or (r["status"] == "deferred" and r["defer_until"] <= now)
        }
        assert set(self.nb.review_queue()["id"]) == expected


TestReviewInvariants = ReviewMachine.TestCase
TestReviewInvariants.settings = settings(
    max_examples=int(os.environ.get("NPC_NB_STATEFUL_EXAMPLES", "30")), stateful_step_count=25
)
