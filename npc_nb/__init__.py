"""npc_nb: long-term memory for LLM personas that a person approves before it counts.

    import npc_nb
    nb = npc_nb.open()                      # the project's store, created on first use
    out = nb.add_candidate("We use DuckDB for the store", category="decision", npc="analyst")
    nb.approve(out.memory_id)
    print(nb.context("analyst"))            # the <npc-memory> block: approved memories only

Importing npc_nb is cheap: no model library is imported until a model is called.
"""

from .config import Settings, load_settings
from .context import MemoryBlock, StreamScrubber, scrub_memory_tags
from .errors import (
    CandidateError,
    ConfigError,
    DecisionError,
    NpcError,
    StoreError,
    StoreLockedError,
    SymlinkedStoreError,
    UnknownMemoryError,
)
from .project import Project, open_project
from .records import ApproveAllPreview, CandidateOutcome, DecisionResult
from .vocabulary import CATEGORIES, DECISIONS, SCOPES, STATUSES

__version__ = "0.1.0.dev0"

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
    "NpcError",
    "Project",
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
