"""Audited batches on the facade: ``nb.audit(...)``, ``nb.get_audit(name)``, ``nb.audits()``
and the ``Audit`` handle they return.

An audit takes the open candidates that qualify, reviews a seeded random sample of them
through the ordinary review, and approves the unsampled rest as one recorded batch only
when the sample bounds the batch's error rate below the tolerance (docs/audits.md,
docs/audit-workflow.md). ``AuditDesk`` holds the facade's three members (``Forward``
descriptors bind them, signature and docstring included); ``Audit`` is a handle on one
audit's record, and every question it answers is asked of the service
(``memory.audits.AuditService``) afresh, so a handle never goes stale.

Key design choice: the handle keeps only the audit's record (written once) and reads
its state each time; what it shows of memory text is data, escaped in HTML and made
visible in a terminal, never markup.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from ._foundations.arguments import Category, checked_methods
from ._foundations.markup import terminal_text
from ._foundations.results import DecisionResult
from ._foundations.tables import Kind, with_missing_as_na
from .errors import AuditError, DecisionError
from .memory.audits import AuditResult, AuditService, Plan
from .review.names import shortened

if TYPE_CHECKING:
    from .review.panel import ReviewPanel

__all__ = ["Audit", "AuditDesk", "AuditError", "AuditResult"]

#: ``nb.audits()``: its columns and their kinds.
LISTING_KINDS: dict[str, Kind] = {
    "audit": "text",
    "name": "text",
    "started_at": "time",
    "started_by": "text",
    "npc": "text",
    "category": "text",
    "conversation": "text",
    "population": "int",
    "excluded": "int",
    "looks": "other",
    "status": "text",
}
#: How many of the next sampled cards a handle's summary shows.
_SHOWN = 3
_DECIDING = {name: DecisionError for name in ("extend", "approve_rest", "review_rest")}


@checked_methods(_DECIDING)
class Audit:
    """One audited batch: ``result()`` says where it stands, ``pending()`` lists the
    sampled cards still to decide, ``review()`` opens the review panel on them,
    ``extend()`` moves to the next planned look, ``approve_rest(by=)`` approves the
    unsampled rest as one batch (only when the bound meets the tolerance) and
    ``review_rest()`` gives the audit up, leaving the rest to ordinary review."""

    def __init__(
        self, service: AuditService, record: dict[str, Any], review: Callable[..., Any]
    ) -> None:
        self._service = service
        self._record = record
        self._review = review

    @property
    def name(self) -> str:
        return str(self._record["name"])

    @property
    def id(self) -> str:
        return str(self._record["id"])

    @property
    def plan(self) -> Plan:
        """The pre-declared plan (an ``AuditPlan``): looks, thresholds, nominal confidence."""
        return self._service.plan(self._record)

    def result(self) -> AuditResult:
        """Where the audit stands now: the look, the sample decided, and once the look is
        complete its errors, the bound and whether it meets the tolerance."""
        return self._service.result(self._record)

    def pending(self, *, by: str | None = None) -> tuple[str, ...]:
        """The ids of the sampled cards at this look still awaiting a decision (in
        independent review, awaiting ``by``'s vote), in sample order."""
        return self._service.pending(self._record, by)

    def extend(self, *, by: str | None = None) -> AuditResult:
        """Sample more: the next planned look (only when the result's verdict is
        "extend"). The sample grows by the next cards of the seeded order."""
        return self._service.extend(self._record, by)

    def approve_rest(self, *, by: str | None = None) -> DecisionResult:
        """Approve the unsampled cards still open and unflagged as one batch (one undo
        step), each event naming the audit; refused unless the look's sample is all
        decided and its bound is below the tolerance. In independent review it is your
        sign-off (``decision`` "sign_off", nothing approved yet): the last of as many
        reviewers' sign-offs as the policy asks approves the rest, naming the signers."""
        return self._service.approve_rest(self._record, by)

    def review_rest(self, *, by: str | None = None) -> AuditResult:
        """Give the audit up: nothing is batch-approved, the rest stays in ordinary review."""
        return self._service.review_rest(self._record, by)

    def review(self, **options: Any) -> ReviewPanel:
        """The review panel on this audit's pending sampled cards
        (``nb.review(audit=name, ...)``)."""
        panel: ReviewPanel = self._review(audit=self.name, **options)
        return panel

    def __repr__(self) -> str:
        return f"<npc_nb.Audit {terminal_text(self.name)!r}: {self.result()}>"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        result = self.result()
        nxt = self._next_cards(result)
        excluded = self._service.excluded(self._record)
        aside = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in excluded.items())
        lines = [terminal_text(result.summary)]
        if aside:
            lines.append(f"set aside (ordinary review): {aside}")
        lines += [f"  next: {terminal_text(text)}" for text in nxt]
        items = "".join(f"<li>{html.escape(text)}</li>" for text in nxt)
        page = (
            f"<div><b>Audit {html.escape(self.name)}</b>{result._repr_mimebundle_()['text/html']}"
            + (f"<p>Set aside (ordinary review): {html.escape(aside)}</p>" if aside else "")
            + (f"<p>Next sampled cards:</p><ul>{items}</ul>" if items else "")
            + "</div>"
        )
        return {"text/plain": "\n".join(lines), "text/html": page}

    def _next_cards(self, result: AuditResult) -> list[str]:
        if result.status != "reviewing":
            return []
        ids = list(self.pending()[:_SHOWN])
        texts = self._service.texts(ids)
        return [shortened(texts[i]) for i in ids if i in texts]


@checked_methods({"audit": DecisionError})
class AuditDesk:
    """The facade's audit members: start an audit, open one by name, list them."""

    def __init__(
        self,
        service: AuditService,
        check_npc: Callable[[str | None], None],
        review: Callable[..., Any],
    ) -> None:
        self._service = service
        self._check_npc = check_npc
        self._review = review

    def audit(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        conversation: str | None = None,
        tolerance: float = 0.05,
        confidence: float = 0.95,
        seed: int = 0,
        stratify: bool = False,
        looks: int | list[int] | None = None,
        name: str | None = None,
        by: str | None = None,
    ) -> Audit:
        """Audit the open candidates the filters select: the ones never batch-approved
        (flagged, proposed updates, split off, near a tombstone, imported with a
        conflict) are set aside for ordinary review, the rest is the batch, put in a
        random order from ``seed`` (``stratify=True``: proportional by persona and
        category). Its plan (``npc_nb.plan_audit(population, tolerance, confidence,
        looks)``: None the sequential default, 1 one fixed sample, or a list of sample
        sizes) says how many to sample at each look. Review the sample
        (``audit.review()``), then ``audit.result()`` and ``audit.approve_rest()``.
        Cards proposed later are not in it. Nothing is approved until ``approve_rest``."""
        self._check_npc(npc)
        record = self._service.start(
            npc=npc, category=category, conversation=conversation, tolerance=tolerance,
            confidence=confidence, seed=seed, stratify=stratify, looks=looks, name=name, by=by,
        )  # fmt: skip
        return Audit(self._service, record, self._review)

    def get_audit(self, name: str) -> Audit:
        """The audit named ``name`` (or with that id)."""
        return Audit(self._service, self._service.find(name), self._review)

    def audits(self) -> pd.DataFrame:
        """Every audit of the project, oldest first: its filters, batch, plan and status."""
        rows = []
        for record in self._service.records():
            result = self._service.result(record)
            rows.append({
                "audit": record["id"], "name": record["name"],
                "started_at": record["started_at"], "started_by": record["started_by"],
                "npc": record["npc"], "category": record["category"],
                "conversation": record["conversation_id"], "population": record["population"],
                "excluded": result.excluded, "looks": list(record["looks"]),
                "status": result.status,
            })  # fmt: skip
        frame = pd.DataFrame(rows, columns=list(LISTING_KINDS))
        return with_missing_as_na(frame, LISTING_KINDS)
