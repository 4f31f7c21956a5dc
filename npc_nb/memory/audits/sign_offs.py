"""Sign-offs: in independent review an audit's batch approval is its reviewers', as a
card's decision is its voters'.

There the sample is decided by votes (a sampled card counts once its votes agree or an
adjudicator decided it: its settled outcome), and ``approve_rest`` on an audit whose
verdict is "approve" is the caller's sign-off, a ``sign_off`` step. The batch is approved
when as many distinct reviewers as the policy asks of a card (``reviewers_per_card``)
have signed off: by the last sign-off, which writes the one batch, its own step and the
``approve_rest`` step in one transaction, the batch's reason naming the signers.

Key design choices. A sign-off is of a result: it counts only while the audit stands as
it was signed (the same look, sample and errors) and only since the latest batch
approval (a batch undone needs every sign-off again). Who signs is who records (the
connected role on PostgreSQL, the reviewer's name on a file), never a ``by=`` naming
somebody else (``MemoryCore.actor``); the same reviewer signing twice is refused,
nothing written. A database role that may not review is refused by the store itself
(a reader role may not insert a step), with the store's message saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._foundations.results import DecisionResult
from ...errors import AuditError

__all__ = ["already_signed", "counted", "recorded", "signed_reason", "signer"]


def signer(step: dict[str, Any]) -> str:
    """Who signed, as the same-reviewer rule compares: the step's role, else its actor."""
    return str(step.get("reviewer_role") or step["actor"])


def counted(
    steps: Sequence[dict[str, Any]], look: int, sample: int, errors: int
) -> list[dict[str, Any]]:
    """The ``sign_off`` steps that count now, oldest first: those since the latest
    ``approve_rest`` step, of the result as it stands (``look``, ``sample``, ``errors``)."""
    closed = [i + 1 for i, step in enumerate(steps) if step["step"] == "approve_rest"]
    since = closed[-1] if closed else 0
    return [
        step
        for step in steps[since:]
        if step["step"] == "sign_off"
        and (step["look"], step["sample"], step["errors"]) == (look, sample, errors)
    ]


def already_signed(audit: dict[str, Any], actor: str, names: list[str], needed: int) -> AuditError:
    """A second sign-off by the same reviewer: refused."""
    return AuditError(
        f"Audit {audit['name']!r}: {actor} signed off already ({len(names)} of the "
        f"{needed} sign-offs it needs: {', '.join(names)}). Nothing was written: the batch "
        "is approved when another reviewer who has not signed off calls "
        "audit.approve_rest() in their own session."
    )


def recorded(actor: str, names: list[str], needed: int) -> DecisionResult:
    """What a sign-off that does not complete the batch returns: nothing moved."""
    more = needed - len(names)
    return DecisionResult(
        "sign_off",
        actor,
        (),
        notes=(
            f"sign-off {len(names)} of {needed} recorded ({', '.join(names)}); the batch is "
            f"approved when {more} more reviewer(s) sign off (audit.approve_rest() in their "
            "own session)",
        ),
        final=False,
    )


def signed_reason(reason: str, names: list[str]) -> str:
    """The batch's reason with its signers."""
    return f"{reason}; signed off by {', '.join(names)}"
