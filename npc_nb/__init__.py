"""npc_nb: long-term memory for LLM personas that a person approves before it counts.

    import npc_nb
    nb = npc_nb.open()                      # the project's store, created by its first write
    out = nb.add_candidate("We use DuckDB for the store", category="decision", npc="analyst")
    nb.approve(out.memory_id)
    print(nb.context("analyst"))            # the <npc-memory> block: approved memories only

Importing npc_nb is cheap: no model library is imported until a model is called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    AlreadyDecidedError,
    ArgumentError,
    AuditError,
    CandidateError,
    ConfigError,
    DecisionError,
    HistoryChangedError,
    InvalidValueError,
    ModelCallError,
    NpcError,
    QueryError,
    StoreError,
    StoreLockedError,
    SymlinkedStoreError,
    UnknownMemoryError,
    UnrecordedCallError,
)
from .vocabulary import CATEGORIES, DECISIONS, SCOPES, STATUSES

if TYPE_CHECKING:
    from ._foundations.results import (
        ApproveAllPreview,
        CandidateOutcome,
        DecisionResult,
        Reply,
        Snapshot,
    )
    from ._foundations.settings import Settings, load_settings
    from ._project import Project, import_bundle
    from ._project import open_project as open
    from .analytics.agreement import agreement_from
    from .analytics.audit_bounds import audit_sample_size, error_bound
    from .analytics.audit_plan import AuditPlan, plan_audit
    from .analytics.plots import plot_audit_plan
    from .audit import Audit, AuditResult
    from .chat.personas import Npc
    from .decisions import (
        Adjudicate,
        Approve,
        Defer,
        Edit,
        Reject,
        Requeue,
        ReviewContext,
        SetValidity,
        Skip,
        Supersede,
    )
    from .experiments import Experiment
    from .memory.block import MemoryBlock, StreamScrubber, scrub_memory_tags
    from .notebook.provenance import provenance
    from .reruns import RerunReport, rerun

__version__ = "0.1.0.dev0"

# pandas, DuckDB and pydantic cost about half a second to import; a notebook pays it on
# first use, not at ``import npc_nb`` or ``%load_ext npc_nb`` (PEP 562 lazy attributes).
_LAZY = {
    "Settings": "_foundations.settings",
    "load_settings": "_foundations.settings",
    "MemoryBlock": "memory.block",
    "StreamScrubber": "memory.block",
    "scrub_memory_tags": "memory.block",
    "Adjudicate": "decisions",
    "Approve": "decisions",
    "Defer": "decisions",
    "Edit": "decisions",
    "Reject": "decisions",
    "Requeue": "decisions",
    "ReviewContext": "decisions",
    "SetValidity": "decisions",
    "Skip": "decisions",
    "Supersede": "decisions",
    "Npc": "chat.personas",
    "Experiment": "experiments",
    "Audit": "audit",
    "AuditResult": "audit",
    "Project": "_project",
    "import_bundle": "_project",
    "open": "_project",
    "ApproveAllPreview": "_foundations.results",
    "CandidateOutcome": "_foundations.results",
    "DecisionResult": "_foundations.results",
    "Reply": "_foundations.results",
    "agreement_from": "analytics.agreement",
    "audit_sample_size": "analytics.audit_bounds",
    "error_bound": "analytics.audit_bounds",
    "plan_audit": "analytics.audit_plan",
    "AuditPlan": "analytics.audit_plan",
    "plot_audit_plan": "analytics.plots",
    "Snapshot": "_foundations.results",
    "provenance": "notebook.provenance",
    "rerun": "reruns",
    "RerunReport": "reruns",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'npc_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), _ALIASES.get(name, name))
    globals()[name] = value
    return value


_ALIASES = {"open": "open_project"}


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext npc_nb``: register the magics (importing neither litellm nor widgets),
    show an NpcError raised in a cell as its message and the cell's line, without
    npc_nb's own frames, and start loading the model client on a background thread, so
    that the first ``%%npc`` cell does not wait for it."""
    from .models import preload
    from .notebook import tracebacks
    from .notebook.magics import NpcMagics, reply_with_provenance

    ipython.register_magics(NpcMagics)
    tracebacks.register(ipython)
    # A reply's output (%%npc's, or nb.chat's) carries its provenance in its metadata.
    bundles = ipython.display_formatter.mimebundle_formatter
    bundles.for_type_by_name("npc_nb._foundations.results", "Reply", reply_with_provenance)
    preload.start()


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext npc_nb``: NpcErrors get IPython's full traceback again."""
    from .notebook import tracebacks

    tracebacks.unregister(ipython)


__all__ = [
    "CATEGORIES",
    "DECISIONS",
    "SCOPES",
    "STATUSES",
    "Adjudicate",
    "AlreadyDecidedError",
    "Approve",
    "ApproveAllPreview",
    "ArgumentError",
    "Audit",
    "AuditError",
    "AuditPlan",
    "AuditResult",
    "CandidateError",
    "CandidateOutcome",
    "ConfigError",
    "DecisionError",
    "DecisionResult",
    "Defer",
    "Edit",
    "Experiment",
    "HistoryChangedError",
    "InvalidValueError",
    "MemoryBlock",
    "ModelCallError",
    "Npc",
    "NpcError",
    "Project",
    "QueryError",
    "Reject",
    "Reply",
    "Requeue",
    "RerunReport",
    "ReviewContext",
    "SetValidity",
    "Settings",
    "Skip",
    "Snapshot",
    "StoreError",
    "StoreLockedError",
    "StreamScrubber",
    "Supersede",
    "SymlinkedStoreError",
    "UnknownMemoryError",
    "UnrecordedCallError",
    "agreement_from",
    "audit_sample_size",
    "error_bound",
    "import_bundle",
    "load_settings",
    "open",
    "plan_audit",
    "plot_audit_plan",
    "provenance",
    "rerun",
    "scrub_memory_tags",
]
