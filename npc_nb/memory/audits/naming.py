"""What an audit says in words: its default name, the reason its batch approval records,
and every refusal, each naming the numbers and what to do instead.

Key design choice: the messages live apart from the flow, so the service reads as the
steps it takes; every refusal is an ``AuditError`` (or, for a value outside what is
allowed, an ``InvalidValueError``), and nothing is written before one is raised.
"""

from __future__ import annotations

from typing import Any

from ..._foundations.markup import terminal_text
from ...errors import ArgumentError, AuditError, InvalidValueError
from .outcomes import Tally
from .result import level, percent

#: The largest seed the audit's record holds (a BIGINT).
_LARGEST_SEED = 2**63 - 1

__all__ = [
    "already_approved",
    "audit_name",
    "batch_reason",
    "cannot_approve",
    "cannot_extend",
    "changed_batch",
    "check_seed",
    "given_up",
    "nothing_to_audit",
    "unknown_audit",
]


def check_seed(seed: object) -> int:
    """``seed``, refused unless a whole number from 0 to 2**63 - 1 (the audit's record
    holds it as a BIGINT)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentError(f"audit(): seed must be a whole number, not {seed!r}.")
    if not 0 <= seed <= _LARGEST_SEED:
        raise InvalidValueError("seed", seed, f"a whole number from 0 to {_LARGEST_SEED}")
    return seed


def audit_name(name: str | None, known: list[str]) -> str:
    """``name``, refused if an audit has it; by default the first free ``audit-<n>``."""
    if name is None:
        n = len(known) + 1
        while f"audit-{n}" in known:
            n += 1
        return f"audit-{n}"
    if not name.strip():
        raise InvalidValueError("name", name, "a non-empty name, or None for audit-<n>")
    if not name.isprintable():  # shown in terminals, errors and typed after --audit
        raise InvalidValueError(
            "name", name, "a printable name on one line (no newline, tab or escape)",
            hint="Choose a name you could type after --audit, like 'week-49'.",
        )  # fmt: skip
    if name in known:
        raise InvalidValueError(
            "name", name, "a name no audit of this project has yet",
            lead=f"An audit named {name!r} exists already",
            hint=f"Open it with nb.get_audit({name!r}), or choose another name.",
        )  # fmt: skip
    return name


def unknown_audit(name: str, known: list[str]) -> InvalidValueError:
    """No such audit: the known names listed (made visible: a bundle may bring a name
    from before names were checked)."""
    shown = [terminal_text(known_name) for known_name in known]
    return InvalidValueError(
        "audit", name, shown, lead=f"No audit named {name!r} in this project",
        hint="nb.audits() lists them; nb.audit(...) starts one.",
    )  # fmt: skip


def nothing_to_audit(excluded: dict[str, str]) -> AuditError:
    """No open card qualifies: say how many were set aside, and why."""
    if not excluded:
        return AuditError(
            "Nothing to audit: no open candidate matches these filters. Check "
            "nb.review_queue() with the same filters, or wait for extraction to propose some."
        )
    counts: dict[str, int] = {}
    for reason in excluded.values():
        counts[reason] = counts.get(reason, 0) + 1
    why = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(counts.items()))
    return AuditError(
        f"Nothing to audit: the {len(excluded)} open candidate(s) matching these filters are "
        f"never batch-approved ({why}). Review them one by one (nb.review())."
    )


def _look(tally: Tally, bound: float | None, tolerance: float, look: str) -> str:
    shown = "not computed" if bound is None else percent(bound)
    return (
        f"{tally.errors} error(s) in {tally.sample} sampled cards give a bound of {shown} "
        f"on the batch's error rate, not below the {percent(tolerance)} tolerance ({look})"
    )


def cannot_approve(
    audit: dict[str, Any], verdict: str, tally: Tally, bound: float | None, looks: int
) -> AuditError:
    """``approve_rest`` refused: the look is incomplete, or the bound misses."""
    name = audit["name"]
    if verdict == "reviewing":
        return AuditError(
            f"Audit {name!r}: {len(tally.undecided)} of its {tally.sample} sampled cards are "
            "not decided yet, so there is no bound to judge the batch by. Nothing was "
            "approved: decide them first (audit.review(), or audit.pending() for their ids)."
        )
    at = level(audit["confidence"], audit["nominal_confidence"])
    where = f"at {at}; the plan has {looks} look(s)"
    state = _look(tally, bound, audit["tolerance"], where)
    then = (
        "audit.extend() samples more cards (the next planned look), or audit.review_rest() "
        "leaves the rest to ordinary review"
        if verdict == "extend"
        else "no planned look can approve it now: audit.review_rest() leaves the rest to "
        "ordinary review"
    )
    return AuditError(f"Audit {name!r}: {state}. Nothing was approved; {then}.")


def cannot_extend(
    audit: dict[str, Any], verdict: str, tally: Tally, bound: float | None
) -> AuditError:
    """``extend`` refused: the look is incomplete, the batch meets the tolerance, or no
    later look can approve it."""
    name = audit["name"]
    if verdict == "reviewing":
        return AuditError(
            f"Audit {name!r}: {len(tally.undecided)} of its {tally.sample} sampled cards are "
            "not decided yet; a look is extended only once its sample is all decided. "
            "Decide them first (audit.review())."
        )
    if verdict == "approve":
        return AuditError(
            f"Audit {name!r} meets the tolerance at this look: nothing to extend. "
            "audit.approve_rest() approves the rest as one batch."
        )
    state = _look(tally, bound, audit["tolerance"], "and no later look can approve it")
    return AuditError(
        f"Audit {name!r}: {state}. Extending cannot change that: audit.review_rest() "
        "leaves the rest to ordinary review."
    )


def changed_batch(audit: dict[str, Any], members: int) -> AuditError:
    """``approve_rest`` refused: the batch's rows no longer match the audit's record."""
    return AuditError(
        f"Audit {audit['name']!r}: its batch was changed after it began ({members} cards "
        f"in its order, {audit['population']} recorded at the start): a card was added to "
        "it outside npc_nb. Nothing was approved: audit.review_rest() leaves the rest to "
        "ordinary review; ask the project's owner to check audit_members."
    )


def given_up(audit: dict[str, Any]) -> AuditError:
    return AuditError(
        f"Audit {audit['name']!r} was given up (review_rest): its cards are in ordinary "
        "review. Start a new audit (nb.audit(...)) to audit what is still open."
    )


def already_approved(audit: dict[str, Any], approved: int) -> AuditError:
    return AuditError(
        f"Audit {audit['name']!r} approved its rest already ({approved} card(s) in one "
        "batch). nb.undo() reverts that batch, if that is what you want."
    )


def batch_reason(
    audit: dict[str, Any], look: int, tally: Tally, bound: float | None, looks: int
) -> str:
    """What each batch-approved memory's audit event says (``nb.decisions()``)."""
    shown = "-" if bound is None else percent(bound)
    return (
        f"audit {audit['name']} ({audit['id']}): {tally.sample} sampled, {tally.errors} "
        f"errors, bound {shown} < {percent(audit['tolerance'])} at "
        f"{level(audit['confidence'], audit['nominal_confidence'])} (look {look} of {looks}), "
        f"seed {audit['seed']}"
    )
