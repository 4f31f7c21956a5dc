"""The knowledge-graph service, ``nb.graph``: the graph of approved memories, its
drawings, exports.

``KnowledgeGraph`` is given the project store, the settings (for the concept model), and
two checks from the facade: ``check_npc`` (a persona filter names a persona) and
``moment`` (what an ``as_of`` names: a snapshot, its label, a time). The facade exposes
this object itself as ``nb.graph``, so its methods are written once, here. Every read
takes its filters (``npc=``, ``category=``) and ``as_of=`` by keyword only. A drawing
(``show``, the light inline renderer, or ``pyvis``, the same drawing as a pyvis network)
is one cut of the graph, made in the store. networkx and pyvis are imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._foundations.arguments import AS_OF_FORMS, AsOf, Category, checked_methods
from .._foundations.locations import output_path
from .._foundations.settings import Settings
from .._foundations.utc import to_utc
from ..errors import InvalidValueError
from ..models import offline
from ..store import Store
from ..store.memories.predicates import Moment

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

    from .page import PyvisGraph
    from .view import GraphView

__all__ = ["KnowledgeGraph"]


@checked_methods()
class KnowledgeGraph:
    """The knowledge graph of one project's approved memories (``nb.graph``)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        check_npc: Callable[[str | None], None] = lambda npc: None,
        moment: Callable[[object], datetime | Moment | None] | None = None,
    ) -> None:
        self._store = store
        self._settings = settings
        self._check_npc = check_npc
        self._moment = moment or _moment

    def networkx(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        as_of: AsOf | None = None,
    ) -> nx.MultiDiGraph:
        """The graph of approved memories (optionally one persona's, one category's, or as
        it stood at ``as_of``). Concepts missing for a memory's current text are
        extracted first, by ``concept_model`` (default: the model setting, else the
        offline model), and stored."""
        from . import build

        self._check_npc(npc)
        graph, _ = build.drawn_graph(
            self._store,
            self._concept_model(),
            npc=npc,
            category=category,
            as_of=self._moment(as_of),
        )
        return graph

    def frames(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        as_of: AsOf | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The graph as a (nodes, edges) pair of DataFrames; edges list their memory ids."""
        from . import build

        return build.graph_frames(self.networkx(npc=npc, category=category, as_of=as_of))

    def show(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        focus: str | None = None,
        depth: int = 2,
        as_of: AsOf | None = None,
        max_nodes: int = 250,
    ) -> GraphView:
        """Draw the graph inline (offline). ``focus`` narrows it to the concept's
        neighbourhood within ``depth`` steps; at most ``max_nodes`` nodes are drawn, the
        best connected. Only those are read from the store."""
        from . import view

        drawn, total = self._drawn(npc, category, focus, depth, as_of, max_nodes)
        return view.GraphView(drawn, total)

    def pyvis(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        focus: str | None = None,
        depth: int = 2,
        as_of: AsOf | None = None,
        max_nodes: int = 250,
    ) -> PyvisGraph:
        """The drawing ``show`` makes (the same nodes, edges and cut) as a pyvis
        ``Network`` styled like it, to change and show inline, offline."""
        from . import page, view

        drawn, total = self._drawn(npc, category, focus, depth, as_of, max_nodes)
        shown = view.GraphView(drawn, total)
        return page.styled_network(drawn, shown.height, shown.note)

    def export_graphml(
        self,
        path: str | Path,
        *,
        npc: str | None = None,
        category: Category | None = None,
        as_of: AsOf | None = None,
    ) -> Path:
        """Write the graph (as it stood at ``as_of``) as GraphML (memory ids as
        comma-separated text)."""
        from . import build

        target = output_path(path)
        build.to_graphml(self.networkx(npc=npc, category=category, as_of=as_of), target)
        return target

    def _drawn(
        self,
        npc: str | None,
        category: str | None,
        focus: str | None,
        depth: int,
        as_of: object,
        max_nodes: int,
    ) -> tuple[nx.MultiDiGraph, int]:
        """The graph cut for drawing, and how many nodes the whole graph has."""
        from . import build

        self._check_npc(npc)
        if max_nodes < 1:
            raise InvalidValueError("max_nodes", max_nodes, "a whole number of nodes, at least 1")
        if depth < 0:
            raise InvalidValueError("depth", depth, "0 or more steps around focus")
        return build.drawn_graph(
            self._store,
            self._concept_model(),
            npc=npc,
            category=category,
            as_of=self._moment(as_of),
            focus=focus,
            depth=depth,
            limit=max_nodes,
        )

    def _concept_model(self) -> str:
        return self._settings.concept_model or self._settings.model or offline.MODEL


def _moment(as_of: object) -> datetime | Moment | None:
    if as_of is None or isinstance(as_of, Moment):
        return as_of
    try:
        return to_utc(as_of, name="as_of")
    except ValueError:
        raise InvalidValueError("as_of", as_of, AS_OF_FORMS) from None
