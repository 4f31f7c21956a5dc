"""npc_nb: long-term memory for LLM personas that a person approves before it counts.

    import npc_nb
    nb = npc_nb.open()                      # the project's store, created on first use
    out = nb.add_candidate("We use DuckDB for the store", category="decision", npc="analyst")
    nb.approve(out.memory_id)
    print(nb.context("analyst"))            # the <npc-memory> block: approved memories only

Importing npc_nb is cheap: no model library is imported until a model is called.
"""

from . import prompts  # noqa: F401 - npc_nb.prompts.EXTRACTION_VERSION for readers
from .config import Settings, load_settings
from .context import MemoryBlock, StreamScrubber, scrub_memory_tags
from .errors import (
    CandidateError,
    ConfigError,
    DecisionError,
    ModelCallError,
    NpcError,
    StoreError,
    StoreLockedError,
    SymlinkedStoreError,
    UnknownMemoryError,
)
from .personas import Persona
from .project import Project, open_project
from .records import ApproveAllPreview, CandidateOutcome, DecisionResult, Reply
from .vocabulary import CATEGORIES, DECISIONS, SCOPES, STATUSES

__version__ = "0.1.0.dev0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext npc_nb``: register the magics (imports neither litellm nor widgets)."""
    from .magics import NpcMagics

    ipython.register_magics(NpcMagics)  # type: ignore[attr-defined]


open = open_project

__all__ = [
    "CATEGORIES",
    "DECISIONS",
    "SCOPES",
    "STATUSES",
    "ApproveAllPreview",
    "CandidateError",
    "CandidateOutcome",
    "ConfigError",
    "DecisionError",
    "DecisionResult",
    "MemoryBlock",
    "ModelCallError",
    "NpcError",
    "Persona",
    "Project",
    "Reply",
    "Settings",
    "StoreError",
    "StoreLockedError",
    "StreamScrubber",
    "SymlinkedStoreError",
    "UnknownMemoryError",
    "load_settings",
    "open",
    "open_project",
    "scrub_memory_tags",
]
