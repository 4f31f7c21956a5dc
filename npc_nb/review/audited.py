"""An audit's sample as a review: which cards it lists, and its progress in words, blind.

A review opened with ``audit=`` (``nb.review(audit=NAME)``, ``%npc_review --audit``,
``npc-nb review --audit``) lists only the audit's sampled cards still awaiting the
reviewer (``Audited.pending(by)``), in the audit's seeded order. Key design choice: the
review is BLIND while the audit is open. What it says about the audit is only
``AuditProgress``: how many of the look's sampled cards are decided, and whether the
look is complete; never how many were approved or rejected, nor the errors (the panel
and the terminal hide their tally in an audit review). The bound is read with
``audit.result()``, once the sample is complete; once the audit is closed (the rest
approved, or the audit given up) the review's summary states it too
(``closed_outcome``: the errors, the bound and what became of the rest).

The review service cannot import the audit's public handle (it lives above it); it
takes any object with ``Audited``'s members, which the facade hands it. Reporting
adds to ``AuditProgress`` (a field and a line in ``lines``) without touching the
front ends: they show ``lines`` as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ArgumentError, DecisionError
from ..memory.audits.result import percent

__all__ = [
    "AUDIT_COMPLETE",
    "AuditProgress",
    "Audited",
    "audit_progress",
    "check_audit_review",
    "closed_outcome",
    "in_sample",
    "refuse_approve_all",
]

#: What a review says once the look's sample is all decided (never the errors).
AUDIT_COMPLETE = "The sample is complete: call audit.result()"


class Audited(Protocol):
    """What an audit review needs of the audit (``npc_nb.Audit`` has these)."""

    @property
    def name(self) -> str: ...

    def pending(self, *, by: str | None = None) -> tuple[str, ...]: ...

    def result(self) -> Any: ...


@dataclass(frozen=True)
class AuditProgress:
    """Where an audit's sample stands, as a reviewer may see it: no tally, no errors."""

    name: str
    decided: int  # the look's sampled cards decided (by this reviewer, in independent review)
    sample: int  # the look's planned sample
    complete: bool  # every sampled card of the look decided (never said in independent review)
    voting: bool = False  # independent review: ``decided`` counts this reviewer's votes
    status: str = "reviewing"  # the audit's status (``AuditResult.status``)
    #: Once the audit is closed (approved, given up): its errors and bound, in words.
    outcome: str = ""

    @property
    def open(self) -> bool:
        """Whether the audit is still undecided (the review stays blind)."""
        return self.status not in ("approved", "given up")

    @property
    def progress(self) -> str:
        """ "12 of 59 sampled cards decided" (votes cast, in independent review)."""
        done = "voted on by you" if self.voting else "decided"
        return f"{self.decided} of {self.sample} sampled cards {done}"

    def lines(self) -> list[str]:
        """What a review says about the audit, one sentence each."""
        lines = [f"Audit {self.name}: {self.progress}."]
        if not self.open:
            said = f": {self.outcome}" if self.outcome else ""
            lines.append(f"The audit is {self.status}{said}; see audit.result().")
        elif self.complete:
            lines.append(f"{AUDIT_COMPLETE}.")
        elif self.voting and self.decided == self.sample:
            lines.append("Your votes are in: audit.result() says where the look stands.")
        return lines

    def __str__(self) -> str:
        return " ".join(self.lines())


def audit_progress(audit: Audited, by: str | None, *, voting: bool) -> AuditProgress:
    """The audit's progress from ``by``'s seat. In independent review ``decided`` counts
    only ``by``'s own votes: a count of settled cards would move with the others' votes."""
    result = audit.result()
    sample = int(result.sample)
    decided = sample - len(audit.pending(by=by)) if voting else int(result.reviewed)
    return AuditProgress(
        name=audit.name,
        decided=max(decided, 0),
        sample=sample,
        # In independent review the look completes with the others' votes: not said.
        complete=result.bound is not None and not voting,
        voting=voting,
        status=str(result.status),
        outcome=closed_outcome(result),
    )


def closed_outcome(result: Any) -> str:
    """A closed audit's errors and bound in words (an ``AuditResult``); "" while it is
    open: the review says nothing of the errors before approve_rest or review_rest."""
    if result.status not in ("approved", "given up") or result.bound is None:
        return ""
    relation = "<" if result.meets else ">="
    then = (
        f"{result.approved} unsampled card(s) approved as one batch"
        if result.status == "approved"
        else "the rest left to ordinary review"
    )
    return (
        f"{result.errors} error(s) in {result.sample} sampled cards, bound "
        f"{percent(result.bound)} {relation} {percent(result.tolerance)} at "
        f"{percent(result.confidence)} (look {result.look} of {len(result.looks)}); {then}"
    )


def in_sample(audit: Audited, by: str | None, ids: Iterable[str]) -> list[str]:
    """Those of ``ids`` the audit still awaits from ``by``, in the audit's order
    (``ids`` is what the queue lists: a deferred card waits until it is due)."""
    listed = set(ids)
    return [memory_id for memory_id in audit.pending(by=by) if memory_id in listed]


def refuse_approve_all(audit: Audited | None) -> None:
    """Approve-all has no place in an audit's review: the sample is decided card by card,
    and the rest only by ``audit.approve_rest()`` once the bound allows it."""
    if audit is not None:
        raise DecisionError(
            f"Approve-all is not part of audit {audit.name}: decide each sampled card; "
            "once the sample is complete, audit.result() gives the bound and "
            "audit.approve_rest(by=...) approves the rest if it meets the tolerance."
        )


def check_audit_review(audit: str, **options: object) -> None:
    """An audit's review takes exactly the audit's sampled cards: no filter narrows it,
    no other kind of review joins it (``review(audit=)``, ``--audit``)."""
    given = [name for name, value in options.items() if value not in (None, False)]
    if given:
        raise ArgumentError(
            f"audit={audit!r} reviews exactly that audit's sampled cards, blind; leave out "
            f"{', '.join(given)} (review them in an ordinary review, without audit=)."
        )
