"""The domain errors: one small tree, every message says how to fix the problem.

    NpcError
    ├── ArgumentError          a public method got an argument of the wrong type
    ├── InvalidValueError      a value outside its allowed set (also a ValueError): a status,
    │                          category, scope, decision, metric dimension, format, kind, a
    │                          bad as_of, a setting's value; says what would do
    ├── ConfigError            a settings source, file or folder that cannot be used
    ├── CandidateError         a proposed memory is unusable (empty, too long, no npc=)
    ├── DecisionError          a transition that makes no sense for the memory as it is
    │   ├── AlreadyDecidedError  another reviewer decided the memory first (says who, when)
    │   └── AuditError         an audit's step refused: the look is not complete, the bound
    │                          misses the tolerance, nothing qualifies (says what to do)
    ├── UnknownMemoryError     no memory has that id (also a KeyError)
    ├── ModelCallError         a model call failed (missing key, rate limit, timeout, ...)
    │   └── UnrecordedCallError  model_replay="replay", and this request was never recorded
    ├── QueryError             a caller's SQL failed, or would write on the read-only path
    └── StoreError             the store file cannot be used
        ├── StoreLockedError   another process kept the file locked past the timeout
        ├── HistoryChangedError  the history was changed after it was written (by SQL)
        └── SymlinkedStoreError  the store path is a symlink, so writes are refused

Errors are grouped by what went wrong, not by the method that raised them. An argument
of the wrong type (``nb.context(None)``) is an ``ArgumentError``, a ``TypeError``,
whichever public method took it; any value that is not a memory id where one is
expected raises ``UnknownMemoryError``. A value of the right type that is not one of
those allowed (``status="bogus"``, ``category="x"``, ``group by 'colour'``,
``format="xls"``, ``as_of="not a date"``, ``review_mode="majority"``, a persona nobody
defined) is an ``InvalidValueError``, whichever method took it: ``what`` names the
parameter, ``value`` holds what was given and ``allowed`` what would do (a tuple, or a
short description when the set is open, such as an ISO date). What remains is the
concern's own failure: a candidate that cannot be stored (``CandidateError``), a
decision that does not apply to the memory as it is (``DecisionError``), SQL
(``QueryError``), a settings source, file or folder (``ConfigError``), a model call
(``ModelCallError``), the store file (``StoreError``). Every one of them is an
``NpcError``, so ``except npc_nb.NpcError`` catches every mistake npc_nb reports.

Front ends (magics, widgets) translate these at the edge; the core never prints and
returns None instead of raising.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "AlreadyDecidedError",
    "ArgumentError",
    "AuditError",
    "CandidateError",
    "ConfigError",
    "DecisionError",
    "HistoryChangedError",
    "InvalidValueError",
    "ModelCallError",
    "NpcError",
    "QueryError",
    "StoreError",
    "StoreLockedError",
    "SymlinkedStoreError",
    "UnknownMemoryError",
    "UnrecordedCallError",
]


class NpcError(Exception):
    """Base class of every error npc_nb raises on purpose."""


class ArgumentError(NpcError, TypeError):
    """A public method got an argument of the wrong type (or text that is not valid
    Unicode, or a number that is not finite); the message says what it accepts."""


class ConfigError(NpcError, ValueError):
    """A configuration source holds an unknown key or a value of the wrong kind."""


class CandidateError(NpcError, ValueError):
    """A candidate memory cannot be stored as given; nothing was written."""


class DecisionError(NpcError, ValueError):
    """A review decision is unknown or does not apply to the memory's current status."""


class InvalidValueError(NpcError, ValueError):
    """A value that is not one of those allowed: ``what`` names the parameter (or the
    setting), ``value`` is what was given, ``allowed`` what would do (a tuple of the
    allowed values, or a short description when the set is open: "an ISO 8601 time").
    Nothing was written. The message names the value, what is allowed, and how to fix
    it; ``lead`` replaces its opening and ``hint`` (a "did you mean", a way round) is
    put before the list."""

    def __init__(
        self,
        what: str,
        value: object,
        allowed: str | Iterable[object],
        *,
        lead: str | None = None,
        hint: str = "",
    ) -> None:
        self.what = what
        self.value = value
        self.allowed: str | tuple[object, ...] = (
            allowed if isinstance(allowed, str) else tuple(allowed)
        )
        super().__init__(_invalid_value_message(what, value, self.allowed, lead, hint))


def _invalid_value_message(
    what: str, value: object, allowed: str | tuple[object, ...], lead: str | None, hint: str
) -> str:
    lead = lead or f"{what}={value!r} is not allowed"
    hint = f" {hint.strip()}" if hint.strip() else ""
    if isinstance(allowed, str):
        return f"{lead}.{hint} {what} takes {allowed}."
    if not allowed:
        return f"{lead}: there is no {what} yet.{hint}"
    shown = ", ".join(str(choice) for choice in allowed)
    return f"{lead}.{hint} Use one of: {shown}."


class AlreadyDecidedError(DecisionError):
    """Another reviewer (another kernel, another machine) decided the memory after this
    one was shown it: one decision wins, this one wrote nothing. The message says who
    decided, when, and what the memory is now; ``decided_by``, ``decided_at`` and
    ``status`` hold the same (None when the audit log does not say)."""

    def __init__(
        self,
        message: str,
        *,
        decided_by: str | None = None,
        decided_at: object = None,
        status: str | None = None,
    ) -> None:
        super().__init__(message)
        self.decided_by = decided_by
        self.decided_at = decided_at
        self.status = status


class AuditError(DecisionError):
    """An audited batch's step does not apply to the audit as it stands: nothing
    qualifies for a batch, the look's sample is not all decided, the bound misses the
    tolerance (``approve_rest``), or the audit was approved or given up already. The
    message names the numbers and what to do instead (extend, review_rest, ...);
    nothing was written."""


class UnknownMemoryError(NpcError, KeyError):
    """No memory in this project's or the user's store has the given id."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class QueryError(NpcError, ValueError):
    """A caller's SQL was refused or failed; the engine's own error is its ``__cause__``."""


class StoreError(NpcError):
    """The store file cannot be opened, migrated or written."""


class HistoryChangedError(StoreError):
    """The store's history no longer matches what was written: a snapshot's hash, a
    hash chain or a memory's audit events (changed by SQL). Nothing is answered from a
    changed past; ``nb.verify()`` lists every problem found."""


class StoreLockedError(StoreError):
    """Another process held the store's lock for longer than the lock timeout."""


class SymlinkedStoreError(StoreError):
    """The store path is a symbolic link; writing through it is refused."""


class ModelCallError(NpcError):
    """A model call failed; the message says what to do (set a key, retry, shorten).

    ``alternative`` is the way round the failure that depends on where the model was
    chosen (``model='npc_nb/offline'`` in Python, ``--model npc_nb/offline`` in a cell,
    the ``extraction_model`` setting for extraction): it is kept apart from the cause so
    that a front end can name its own option (``instead``).
    """

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        kind: str | None = None,
        alternative: str | None = None,
    ) -> None:
        super().__init__(f"{message}, or {alternative}." if alternative else message)
        self.cause = message
        self.model = model
        self.kind = kind
        self.alternative = alternative

    def instead(self, alternative: str) -> ModelCallError:
        """The same error with its way round phrased for where the user is (no change
        if the error has none, e.g. a rate limit)."""
        if self.alternative is None:
            return self
        return ModelCallError(self.cause, model=self.model, kind=self.kind, alternative=alternative)


class UnrecordedCallError(ModelCallError):
    """``model_replay="replay"``, and no reply was recorded for this exact request (its
    fingerprint): the model was not called. The message names the caller (the cell, the
    persona, the extraction) and the fingerprint."""
