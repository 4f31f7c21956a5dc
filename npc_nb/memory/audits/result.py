"""``AuditResult``: where an audit stands, as numbers and in one line of plain words.

Key design choice: a result is computed, never stored. The look, the sample's outcomes,
the bound and the status are read from the audit's record, its steps and the memories
as they are now (``service.AuditService.result``), so an undo of a sampled card or of
the batch approval shows at once. While a look's sample is still being reviewed the
result holds no error count and no bound: the review is blind to the running tally.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..._foundations.markup import terminal_text

__all__ = ["AuditResult", "level", "percent"]


def percent(rate: float) -> str:
    """A rate as a percentage, to two decimals at most ("4.95%", "5%")."""
    return f"{round(rate * 100, 2):g}%"


def level(confidence: float, nominal: float) -> str:
    """The confidence a bound is read at: the audit's, and the calibrated one of each
    look when the sequential design needs a stricter one ("98.39% at each look, 95%
    overall")."""
    if nominal == confidence:
        return percent(confidence)
    return f"{percent(nominal)} at each look, {percent(confidence)} overall"


@dataclass(frozen=True)
class AuditResult:
    """One audit's state: the batch (``population`` cards, ``excluded`` put aside), the
    current ``look`` of ``looks`` (cumulative sample sizes), the planned ``sample`` at
    this look and how many of it are ``reviewed``; once the look is complete, its
    ``errors`` and the one-sided upper ``bound`` on the batch's error rate (at the
    look's ``nominal_confidence``, which the sequential design calibrates so that the
    whole audit holds at ``confidence``). ``meets``: the bound is below the
    ``tolerance`` at a planned look. ``verdict``: reviewing, approve, extend or fail;
    ``status``: reviewing, approvable, extendable, failed, approved or given up.
    ``rest``: the unsampled cards still open; ``approved``: those batch-approved."""

    audit: str
    name: str
    population: int
    excluded: int
    look: int
    looks: tuple[int, ...]
    sample: int
    reviewed: int
    errors: int | None
    bound: float | None
    tolerance: float
    confidence: float
    nominal_confidence: float
    meets: bool
    verdict: str
    status: str
    rest: int
    approved: int
    seed: int
    method: str
    #: Independent review: the reviewers whose sign-offs count toward the batch approval
    #: now, and how many it needs (0 in single review: one reviewer's approve_rest).
    signed_off: tuple[str, ...] = ()
    sign_offs_needed: int = 0

    @property
    def summary(self) -> str:
        """Where the audit stands and what to do next, in one line."""
        head = f"{self.name}: "
        if self.status == "reviewing":
            return head + (
                f"{self.reviewed} of {self.sample} sampled cards decided (look {self.look} "
                f"of {len(self.looks)}); decide the rest of the sample (audit.review())."
            )
        found = f"{self.errors} error(s) in {self.sample} sampled cards, bound {self._bound()}"
        status = "nothing left" if self.status == "approved" and not self.approved else self.status
        then = _NEXT[status]
        if status == "approvable" and self.sign_offs_needed:
            then = _SIGNING
        return head + found + "; " + then.format(r=self, signed=self._signed())

    def _signed(self) -> str:
        names = f" ({', '.join(self.signed_off)})" if self.signed_off else ""
        return f"{len(self.signed_off)} of the {self.sign_offs_needed} sign-offs{names}"

    def _bound(self) -> str:
        if self.bound is None:
            return "not computed"
        relation = "<" if self.meets else ">="
        return (
            f"{percent(self.bound)} {relation} {percent(self.tolerance)} at "
            f"{level(self.confidence, self.nominal_confidence)} (look {self.look} of "
            f"{len(self.looks)})"
        )

    def __str__(self) -> str:
        return terminal_text(self.summary)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        rows = "".join(
            f"<tr><th>{html.escape(label)}</th><td>{html.escape(str(value))}</td></tr>"
            for label, value in self._facts()
        )
        return {
            "text/plain": str(self),
            "text/html": f"<div><p>{html.escape(self.summary)}</p><table>{rows}</table></div>",
        }

    def _facts(self) -> list[tuple[str, object]]:
        bound = "—" if self.bound is None else percent(self.bound)
        return [
            ("status", self.status),
            ("batch", f"{self.population} cards ({self.excluded} set aside)"),
            ("look", f"{self.look} of {len(self.looks)} (samples {list(self.looks)})"),
            ("decided", f"{self.reviewed} of {self.sample}"),
            ("errors", "—" if self.errors is None else self.errors),
            ("bound", f"{bound} (tolerance {percent(self.tolerance)})"),
            ("rest", f"{self.rest} open, {self.approved} batch-approved"),
            ("seed", self.seed),
            *([("sign-offs", self._signed())] if self.sign_offs_needed else []),
        ]


#: What an approvable result says in independent review (``{signed}``: who signed off).
_SIGNING = (
    "the batch meets the tolerance, with {signed} it needs: each reviewer's "
    "audit.approve_rest() is a sign-off, and the last approves the {r.rest} unsampled "
    "card(s) as one batch."
)
#: What a result says to do next, by status (``{r}`` is the result).
_NEXT = {
    "approvable": "the batch meets the tolerance: audit.approve_rest() approves the "
    "{r.rest} unsampled card(s) as one batch.",
    "extendable": "the bound misses the tolerance: audit.extend() samples more (the next "
    "planned look), or audit.review_rest() reviews the rest one by one.",
    "failed": "no planned look can approve this batch: audit.review_rest() leaves the "
    "{r.rest} unsampled card(s) to ordinary review.",
    "approved": "{r.approved} unsampled card(s) were approved as one batch (nb.undo() reverts it).",
    "nothing left": "the batch meets the tolerance and nothing was left to approve: every "
    "card of it was sampled or decided on its own.",
    "given up": "the audit was given up: its {r.rest} unsampled card(s) are in ordinary review.",
}
