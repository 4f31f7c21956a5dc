"""``AuditService``: an audited batch from its start to the rest approved or given up.

``start`` freezes the batch (``selection``), puts it in its seeded random order
(``sampling``) and records it with its pre-declared plan; the sample at look ``j`` is
the first ``looks[j]`` cards of that order. ``result`` reads where the audit stands from
the record, its steps and the sampled cards' outcomes now (``outcomes``); ``extend``
moves to the next planned look, ``approve_rest`` approves the unsampled cards still open
and unflagged as one batch of the audit log, and ``review_rest`` gives the audit up.

Key design choices. The plan comes from the statistics (``plan_audit`` and its
``AuditPlan``, in the analytics layer above this one), handed in by the facade as a
``Planning``; a stored audit's plan is rebuilt from its record, never recomputed, so a
later change of the calibration cannot move an audit's thresholds. Nothing about an
audit's state is stored but its steps: the look is the number of ``extend`` steps, the
status is derived from the memories (an ``nb.undo()`` of the batch makes it
"approvable" again). The batch approval and its ``approve_rest`` step are written in one
transaction, each change conditional on the status it was planned from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..._foundations.ids import new_id
from ..._foundations.results import DecisionResult
from ..._foundations.utc import utc_now
from ...store import Store
from ...store.memories import audit_rows, events, memory_rows
from ...vocabulary import DEFERRED
from ..core import MemoryCore
from ..decisions import write_change
from ..queue import queue_filters
from ..transitions import plan as plan_change
from .naming import (
    already_approved,
    audit_name,
    batch_reason,
    cannot_approve,
    cannot_extend,
    changed_batch,
    check_seed,
    given_up,
    nothing_to_audit,
    unknown_audit,
)
from .outcomes import Tally, tally
from .result import AuditResult
from .selection import member_rows, select
from .sign_offs import already_signed, counted, recorded, signed_reason, signer

__all__ = ["AuditService", "Plan", "Planning"]


class Plan(Protocol):
    """What an audit uses of the statistics' ``AuditPlan`` (read-only: a frozen plan)."""

    @property
    def population(self) -> int | None: ...
    @property
    def tolerance(self) -> float: ...
    @property
    def confidence(self) -> float: ...
    @property
    def looks(self) -> tuple[int, ...]: ...
    @property
    def nominal_confidence(self) -> float: ...
    @property
    def thresholds(self) -> tuple[int, ...]: ...
    @property
    def method(self) -> str: ...
    def bound(self, errors: int, sample: int) -> float: ...
    def verdict(self, errors: int, sample: int) -> str: ...


@dataclass(frozen=True)
class Planning:
    """The statistics an audit is planned with: ``plan`` (``plan_audit``: population,
    tolerance, confidence, looks) and ``rebuild`` (a stored plan from its fields)."""

    plan: Callable[..., Plan]
    rebuild: Callable[..., Plan]


@dataclass(frozen=True)
class _State:
    """An audit as it stands: its plan, batch (in order), look, the look's tally, steps."""

    audit_id: str
    plan: Plan
    batch: list[str]
    positions: set[int]
    excluded: int
    look: int
    tally: Tally
    steps: list[dict[str, Any]]

    @property
    def sample(self) -> int:
        return self.tally.sample

    @property
    def verdict(self) -> str:
        if not self.tally.complete:
            return "reviewing"
        return self.plan.verdict(self.tally.errors, self.sample)

    @property
    def bound(self) -> float | None:
        return self.plan.bound(self.tally.errors, self.sample) if self.tally.complete else None

    def intact(self, population: int) -> bool:
        """Whether the batch is the one frozen at the start: ``population`` cards at the
        positions 0..population-1 (a row added later breaks it; none can be removed)."""
        return len(self.batch) == population == len(self.positions) and self.positions == set(
            range(population)
        )

    def last(self, step: str) -> dict[str, Any] | None:
        return next((s for s in reversed(self.steps) if s["step"] == step), None)


_STATUS = {"reviewing": "reviewing", "approve": "approvable", "extend": "extendable",
           "fail": "failed"}  # fmt: skip
_EXTENDED = "extend"
_CLOSED = ("approved", "given up")


class AuditService:
    """The audits of one project store, read and decided through the memory core."""

    def __init__(self, core: MemoryCore, planning: Planning) -> None:
        self._core = core
        self._planning = planning

    @property
    def _store(self) -> Store:
        return self._core.stores.project  # audits live in the project store only

    # -- starting and finding -----------------------------------------------------------

    def start(
        self,
        *,
        npc: str | None,
        category: str | None,
        conversation: str | None,
        tolerance: float,
        confidence: float,
        seed: int,
        stratify: bool,
        looks: int | Sequence[int] | None,
        name: str | None,
        by: str | None,
    ) -> dict[str, Any]:
        """Freeze the batch the filters select, order it, record it; the audit's record."""
        seed = check_seed(seed)
        name = audit_name(name, [audit["name"] for audit in self.records()])
        actor, now = self._core.actor(by), utc_now()
        chosen = select(self._store, npc=npc, category=category, conversation=conversation,
                        now=now)  # fmt: skip
        if not chosen.batch:
            raise nothing_to_audit(chosen.excluded)
        plan = self._planning.plan(
            len(chosen.batch), tolerance=tolerance, confidence=confidence, looks=looks
        )
        members = member_rows(chosen, seed, stratify)
        audit = {
            "id": new_id(), "name": name, "started_at": now, "started_by": actor,
            "npc": npc, "category": category, "conversation_id": conversation,
            "stratify": stratify, "tolerance": plan.tolerance, "confidence": plan.confidence,
            "seed": seed, "population": len(chosen.batch), "looks": list(plan.looks),
            "thresholds": list(plan.thresholds),
            "nominal_confidence": plan.nominal_confidence, "method": plan.method,
            "reviewer_role": self._core.identity().role,
        }  # fmt: skip
        audit_rows.insert_audit(self._store, audit, members)
        return self.find(str(audit["id"]))

    def find(self, name: str) -> dict[str, Any]:
        """The record of the audit named ``name`` (or with that id)."""
        found = audit_rows.find_audit(self._store, name)
        if found is None:
            known = [audit["name"] for audit in audit_rows.list_audits(self._store)]
            raise unknown_audit(name, known)
        return found

    def plan(self, audit: dict[str, Any]) -> Plan:
        """The audit's plan, rebuilt from its record (never recomputed)."""
        return self._planning.rebuild(
            population=audit["population"], tolerance=audit["tolerance"],
            confidence=audit["confidence"], looks=tuple(audit["looks"]),
            nominal_confidence=audit["nominal_confidence"],
            thresholds=tuple(audit["thresholds"]), method=audit["method"],
        )  # fmt: skip

    def records(self) -> list[dict[str, Any]]:
        """Every audit's record, oldest first."""
        return audit_rows.list_audits(self._store)

    def excluded(self, audit: dict[str, Any]) -> dict[str, int]:
        """{reason: how many cards} the audit set aside."""
        counts: dict[str, int] = {}
        for member in audit_rows.audit_members(self._store, audit["id"]):
            if member["excluded_because"] is not None:
                reason = member["excluded_because"]
                counts[reason] = counts.get(reason, 0) + 1
        return counts

    # -- where it stands ----------------------------------------------------------------

    def result(self, audit: dict[str, Any]) -> AuditResult:
        """Where ``audit`` stands now (see ``AuditResult``)."""
        state = self._state(audit)
        approved = self._approved(state)
        rest = self._rest(state, ("id", "flags", "status"))
        status = self._status(state, approved)
        errors = state.tally.errors if state.tally.complete else None
        return AuditResult(
            audit=audit["id"], name=audit["name"], population=audit["population"],
            excluded=state.excluded, look=state.look, looks=tuple(state.plan.looks),
            sample=state.sample, reviewed=state.tally.reviewed, errors=errors,
            bound=state.bound, tolerance=audit["tolerance"], confidence=audit["confidence"],
            nominal_confidence=audit["nominal_confidence"], meets=state.verdict == "approve",
            verdict=state.verdict, status=status, rest=len(rest),
            approved=approved or 0, seed=audit["seed"], method=audit["method"],
            **self._sign_offs(state),
        )  # fmt: skip

    def _sign_offs(self, state: _State) -> dict[str, Any]:
        """In independent review, who signed off (counting now) and how many are needed."""
        rules = self._core.votes.rules()
        if rules is None:
            return {}
        found = counted(state.steps, state.look, state.sample, state.tally.errors)
        return {"signed_off": tuple(s["actor"] for s in found), "sign_offs_needed": rules.needed}

    def pending(self, audit: dict[str, Any], by: str | None = None) -> tuple[str, ...]:
        """The sampled cards at the current look still awaiting a decision, in sample
        order (in independent review, those awaiting ``by``'s vote)."""
        state = self._state(audit)
        if state.last("review_rest") is not None:
            return ()
        waiting = list(state.tally.undecided)
        view = self._core.votes.view(self._core.voter(by), adjudicate=False)
        if view is None or not waiting:
            return tuple(waiting)
        shown = set(self._core.queue_order(view=view, ids=waiting))
        return tuple(memory_id for memory_id in waiting if memory_id in shown)

    def texts(self, ids: list[str]) -> dict[str, str]:
        """{id: text} of these cards (what a summary shows of the next ones)."""
        found = memory_rows.rows_with(self._store, ids, "id, final_text")
        return {row["id"]: row["final_text"] for row in found}

    # -- steps ----------------------------------------------------------------------------

    def extend(self, audit: dict[str, Any], by: str | None = None) -> AuditResult:
        """Move to the next planned look (only when the verdict is "extend")."""
        state = self._state(audit)
        self._refuse_closed(audit, state)
        if state.verdict != "extend":
            raise cannot_extend(audit, state.verdict, state.tally, state.bound)
        self._record(audit, state, _EXTENDED, self._core.actor(by))
        return self.result(audit)

    def review_rest(self, audit: dict[str, Any], by: str | None = None) -> AuditResult:
        """Give the audit up: its unsampled cards stay in ordinary review."""
        state = self._state(audit)
        self._refuse_closed(audit, state)
        self._record(audit, state, "review_rest", self._core.actor(by))
        return self.result(audit)

    def approve_rest(self, audit: dict[str, Any], by: str | None = None) -> DecisionResult:
        """Approve the unsampled cards still open and unflagged as one batch, when the
        verdict at a complete look is "approve"; the ``approve_rest`` step with it."""
        state = self._state(audit)
        self._refuse_closed(audit, state)
        if not state.intact(audit["population"]):
            raise changed_batch(audit, len(state.batch))
        if state.verdict != "approve":
            looks = len(state.plan.looks)
            raise cannot_approve(audit, state.verdict, state.tally, state.bound, looks)
        if self._core.votes.independent:
            return self.sign_off(audit, by)
        actor = self._core.actor(by)
        return self._approve_batch(audit, state, actor, self._rest(state))

    def sign_off(self, audit: dict[str, Any], by: str | None) -> DecisionResult:
        """In independent review, ``by``'s sign-off of the batch approval: the last of
        the sign-offs the policy asks for approves the rest (``sign_offs``)."""
        state = self._state(audit)
        actor = self._core.actor(by, independent=True)
        me, needed = self._core.identity().role, self._core.votes.policy().needed
        signed = counted(state.steps, state.look, state.sample, state.tally.errors)
        names = [step["actor"] for step in signed]
        if me in {signer(step) for step in signed}:
            if len(names) < needed:
                raise already_signed(audit, actor, names, needed)
            # Every sign-off is in (two signed at once): this call writes the batch.
            return self._approve_batch(audit, state, actor, self._rest(state), names)
        if len(names) + 1 < needed:
            self._record(audit, state, "sign_off", actor)
            return recorded(actor, [*names, actor], needed)
        rest = self._rest(state)
        return self._approve_batch(audit, state, actor, rest, [*names, actor], signing=True)

    def _approve_batch(
        self,
        audit: dict[str, Any],
        state: _State,
        actor: str,
        rest: list[dict[str, Any]],
        signers: list[str] | None = None,
        signing: bool = False,
    ) -> DecisionResult:
        """The rest approved as one batch with its ``approve_rest`` step (in independent
        review the reason names the ``signers``; ``signing``: the caller's own
        ``sign_off`` step is written with it)."""
        now, store = utc_now(), self._store
        looks = len(state.plan.looks)
        reason = batch_reason(audit, state.look, state.tally, state.bound, looks)
        if signers:
            reason = signed_reason(reason, signers)
        changes = [
            plan_change("approve", row, actor=actor, now=now, action="approve_all", reason=reason)
            for row in rest
        ]
        batch_id = new_id() if changes else None
        role = self._core.identity().role
        with store.write() as con:
            seqs = [
                write_change(store, con, change, actor=actor, now=now, batch_id=batch_id,
                             audit={"reviewer_role": role})
                for change in changes
            ]  # fmt: skip
            if signing:
                self._record(audit, state, "sign_off", actor, con=con, role=role)
            self._record(audit, state, "approve_rest", actor, batch_id=batch_id, con=con, role=role)
        moved = tuple((c.memory["id"], c.memory["status"], c.to_status) for c in changes)
        return DecisionResult("approve_all", actor, moved, batch_id, event_seqs=tuple(seqs))

    def _record(
        self,
        audit: dict[str, Any],
        state: _State,
        step: str,
        actor: str,
        *,
        batch_id: str | None = None,
        con: Any = None,
        role: str | None = None,
    ) -> None:
        """Append one step (in ``con``'s transaction when given; ``role``: who records,
        read before that transaction began)."""
        row = {
            "audit_id": audit["id"], "occurred_at": utc_now(), "actor": actor, "step": step,
            "look": state.look, "sample": state.sample, "errors": state.tally.errors,
            "bound": state.bound, "batch_id": batch_id,
            "reviewer_role": role or self._core.identity().role,
        }  # fmt: skip
        audit_rows.add_audit_step(self._store, row, con=con)

    def _refuse_closed(self, audit: dict[str, Any], state: _State) -> None:
        if state.last("review_rest") is not None:
            raise given_up(audit)
        approved = self._approved(state)
        if approved is not None:
            raise already_approved(audit, approved)

    # -- reading --------------------------------------------------------------------------

    def _state(self, audit: dict[str, Any]) -> _State:
        plan = self.plan(audit)
        members = audit_rows.audit_members(self._store, audit["id"])
        batch = [m["memory_id"] for m in members if m["position"] is not None]
        positions = {m["position"] for m in members if m["position"] is not None}
        steps = audit_rows.audit_steps(self._store, audit["id"])
        extended = sum(1 for step in steps if step["step"] == _EXTENDED)
        look = min(1 + extended, len(plan.looks))
        sampled = batch[: plan.looks[look - 1]]
        counted = tally(self._store, sampled, audit["started_at"])
        excluded = len(members) - len(batch)
        return _State(audit["id"], plan, batch, positions, excluded, look, counted, steps)

    def _approved(self, state: _State) -> int | None:
        """How many cards the ``approve_rest`` batches still hold approved: 0 when the rest
        was empty, None when no batch approval is in effect (undone, or never made). A
        step whose batch does not name this audit (a forged row) is none; an empty one
        (a second kernel finding the rest just approved) does not hide a batch."""
        named, empty = f"({state.audit_id}): ", False
        for step in reversed(state.steps):
            if step["step"] != "approve_rest":
                continue
            if step["batch_id"] is None:
                empty = True
                continue
            held = events.batch_events(self._store, step["batch_id"], ["approve_all"])
            if held and all(named in str(event["reason"] or "") for event in held):
                return len(held)
        return 0 if empty else None

    def _rest(self, state: _State, columns: tuple[str, ...] = ("*",)) -> list[dict[str, Any]]:
        """The unsampled members still pending and unflagged: whole rows by default, what
        approving them plans from (``columns`` with ``flags`` and ``status``: fewer, to
        count them). A deferred card is left out, due or not: a person chose not to
        decide it yet, and a batch approval must not decide it for them."""
        held = self._held_elsewhere(state)
        unsampled = [i for i in state.batch[state.sample :] if i not in held]
        if not unsampled:
            return []
        filters = queue_filters(None, None, None, None, None, unsampled)
        found = memory_rows.open_memories(self._store, filters, utc_now(), columns)
        return [row for row in found if not row["flags"] and row["status"] != DEFERRED]

    def _held_elsewhere(self, state: _State) -> set[str]:
        """The cards in the batch of another audit still open: this batch approval
        leaves them out, or it would decide that audit's sampled cards unseen."""
        held: set[str] = set()
        for other in self.records():
            if other["id"] == state.audit_id:
                continue
            theirs = self._state(other)
            if self._status(theirs, self._approved(theirs)) not in _CLOSED:
                held.update(theirs.batch)
        return held

    @staticmethod
    def _status(state: _State, approved: int | None) -> str:
        if state.last("review_rest") is not None:
            return "given up"
        if approved is not None:
            return "approved"
        return _STATUS[state.verdict]
