"""Module paths of earlier releases, kept working: ``import npc_nb.metrics`` still gives
the metrics module, now at ``npc_nb.analytics.metrics``.

The package was reorganised into subpackages by concern. A small import hook maps each
old dotted path to its new module (the same module object, not a copy), so user code and
saved notebooks keep running (and ``python -m`` an old path runs the new module);
nothing is imported until an old path is asked for.
Two old names now belong to packages and are not aliased: ``npc_nb.review`` (the review
engine, now ``npc_nb.memory.decisions``) and ``npc_nb.graph`` (the graph build, now
``npc_nb.graph.build``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType, ModuleType

__all__ = ["MOVED", "install_module_aliases"]

#: old module path -> new module path
MOVED = {
    "npc_nb.config": "npc_nb._foundations.settings",
    "npc_nb.paths": "npc_nb._foundations.locations",
    "npc_nb.records": "npc_nb._foundations.results",
    "npc_nb.text": "npc_nb._foundations.text",
    "npc_nb.stamps": "npc_nb._foundations.utc",
    "npc_nb.project": "npc_nb._project",
    "npc_nb.candidates": "npc_nb.memory.candidates",
    "npc_nb.transitions": "npc_nb.memory.transitions",
    "npc_nb.context": "npc_nb.memory.block",
    "npc_nb.selection": "npc_nb.memory.cache",
    "npc_nb.llm": "npc_nb.models.gateway",
    "npc_nb.offline": "npc_nb.models.offline",
    "npc_nb.personas": "npc_nb.chat.personas",
    "npc_nb.prompts": "npc_nb.chat.prompts",
    "npc_nb.conversation": "npc_nb.chat.turn",
    "npc_nb.extraction": "npc_nb.chat.extraction",
    "npc_nb.chatting": "npc_nb.chat.conversations",
    "npc_nb.interpolation": "npc_nb.notebook.interpolation",
    "npc_nb.magics": "npc_nb.notebook.magics",
    "npc_nb.concepts": "npc_nb.graph.concepts",
    "npc_nb.graph_view": "npc_nb.graph.view",
    "npc_nb.graphing": "npc_nb.graph.knowledge",
    "npc_nb.metrics": "npc_nb.analytics.metrics",
    "npc_nb.export": "npc_nb.analytics.export",
    "npc_nb.review_session": "npc_nb.review.session",
    "npc_nb.widgets": "npc_nb.review.panel",
    "npc_nb.widgets.panel": "npc_nb.review.panel.panel",
    "npc_nb.widgets.cards": "npc_nb.review.panel.cards",
    "npc_nb.widgets.keys": "npc_nb.review.panel.keys",
    "npc_nb.widgets.assets": "npc_nb.review.panel.assets",
    "npc_nb.store.store": "npc_nb.store.contract",
    "npc_nb.store.connection": "npc_nb.store.embedded.lease",
    "npc_nb.store.pair": "npc_nb.store.stores",
    # The foundations got a room of their own (npc_nb/_foundations/), the CLI's terminal
    # went to the CLI.
    "npc_nb._text": "npc_nb._foundations.text",
    "npc_nb._terms": "npc_nb._foundations.terms",
    "npc_nb._ids": "npc_nb._foundations.ids",
    "npc_nb._markup": "npc_nb._foundations.markup",
    "npc_nb._json_items": "npc_nb._foundations.json_items",
    "npc_nb._arguments": "npc_nb._foundations.arguments",
    "npc_nb._results": "npc_nb._foundations.results",
    "npc_nb._settings": "npc_nb._foundations.settings",
    "npc_nb._settings_view": "npc_nb._foundations.settings.view",
    "npc_nb._locations": "npc_nb._foundations.locations",
    "npc_nb._store_url": "npc_nb._foundations.store_url",
    "npc_nb._tables": "npc_nb._foundations.tables",
    "npc_nb._redact": "npc_nb._foundations.redact",
    "npc_nb._time": "npc_nb._foundations.utc",
    "npc_nb._console": "npc_nb.cli.console",
    # The store's modules went to rooms by concern (npc_nb/store/*/); the DuckDB file's
    # Store became the contract both backends keep (store.contract) and FileStore.
    "npc_nb.store._database": "npc_nb.store.contract",
    "npc_nb.store._lease": "npc_nb.store.embedded.lease",
    "npc_nb.store._faults": "npc_nb.store.embedded.faults",
    "npc_nb.store.postgres": "npc_nb.store.server.database",
    "npc_nb.store._pg_sql": "npc_nb.store.server.dialect",
    "npc_nb.store._pg_errors": "npc_nb.store.server.faults",
    "npc_nb.store._pg_presence": "npc_nb.store.server.presence",
    "npc_nb.store.pg_listener": "npc_nb.store.server.listener",
    "npc_nb.store.notice_checks": "npc_nb.store.server.notice_checks",
    "npc_nb.store.pg_read_only": "npc_nb.store.server.read_only",
    "npc_nb.store.pg_analysis": "npc_nb.store.server.attach",
    "npc_nb.store.pg_roles": "npc_nb.store.server.roles",
    "npc_nb.store.migrations": "npc_nb.store.schema.migrations",
    "npc_nb.store.pg_migrations": "npc_nb.store.schema.pg_migrations",
    "npc_nb.store.pg_project": "npc_nb.store.schema.pg_project",
    "npc_nb.store.views": "npc_nb.store.schema.views",
    "npc_nb.store.schema_doc": "npc_nb.store.schema.doc",
    "npc_nb.store.memory_rows": "npc_nb.store.memories.memory_rows",
    "npc_nb.store.known_rows": "npc_nb.store.memories.known_rows",
    "npc_nb.store.reproposal_rows": "npc_nb.store.memories.reproposal_rows",
    "npc_nb.store.events": "npc_nb.store.memories.events",
    "npc_nb.store.predicates": "npc_nb.store.memories.predicates",
    "npc_nb.store.chat_log": "npc_nb.store.conversations.chat_log",
    "npc_nb.store.jobs": "npc_nb.store.conversations.jobs",
    "npc_nb.store.graph_sql": "npc_nb.store.graph.graph_sql",
    "npc_nb.store.graph_nodes": "npc_nb.store.graph.graph_nodes",
    "npc_nb.store.analytics": "npc_nb.store.analysis.analytics",
    "npc_nb.store.frames": "npc_nb.store.analysis.frames",
    "npc_nb.store.exports": "npc_nb.store.analysis.exports",
    "npc_nb.store.user_sql": "npc_nb.store.analysis.user_sql",
    "npc_nb.store.transfer": "npc_nb.store.moving.move",
    "npc_nb.store._transfer_into": "npc_nb.store.moving.copy_into",
    "npc_nb.memory.neighbours": "npc_nb.memory.lookup.neighbours",
    "npc_nb.memory.embedding": "npc_nb.memory.lookup.embedding",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path and loads it as the module it moved to."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def __init__(self) -> None:
        self._own_specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._own_specs[module.__name__] = module.__spec__
        return module

    def get_code(self, fullname: str) -> CodeType:
        """``python -m <old path>`` (runpy asks for the code to run): run the module it
        moved to as ``__main__``, under its own name, so its relative imports resolve."""
        source = f"import runpy\nrunpy.run_module({MOVED[fullname]!r}, run_name='__main__')\n"
        return compile(source, f"<{fullname}, now {MOVED[fullname]}>", "exec")

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the new module ran when it was imported. The import system
        has just set its ``__spec__`` to the old name's; give it back its own, or its
        relative imports (and pickling, and reloads) would resolve against the old name."""
        module.__spec__ = self._own_specs.pop(module.__name__, module.__spec__)


def install_module_aliases() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedModules())  # before the path finder: see MOVED
