"""The graph part of the Project facade: the knowledge graph, its drawing and exports.

``Project`` mixes this in; networkx and pyvis are imported on first use.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from . import offline
from .errors import DecisionError
from .paths import output_path
from .stamps import to_utc

if TYPE_CHECKING:
    import networkx as nx
    import pandas as pd

    from .config import Settings
    from .graph_view import GraphView
    from .store import StorePair

__all__ = ["Graphing"]


class Graphing:
    """The knowledge graph of approved memories (mixed into ``Project``)."""

    settings: Settings
    _stores: StorePair

    def graph(
        self, npc: str | None = None, category: str | None = None, as_of: datetime | None = None
    ) -> nx.MultiDiGraph:
        """The graph of approved memories (optionally one persona's, one category's, or as
        it stood at ``as_of``). Concepts missing for a memory's current text are
        extracted first, by ``concept_model`` (default: the model setting, else the
        offline model), and stored."""
        from . import graph

        moment = _moment(as_of)
        store = self._stores.project
        versions = graph.approved_versions(store, npc, category, moment)
        graph.ensure_concepts(store, versions, self._concept_model())
        from .store import graph_sql

        found, links = graph_sql.concept_rows(store, versions)
        return graph.build_graph(versions, found, links)

    def show_graph(
        self,
        npc: str | None = None,
        category: str | None = None,
        *,
        focus: str | None = None,
        depth: int = 2,
        as_of: datetime | None = None,
        max_nodes: int = 250,
    ) -> GraphView:
        """Draw the graph inline (offline). ``focus`` narrows it to the concept's
        neighbourhood within ``depth`` steps; at most ``max_nodes`` nodes are drawn."""
        from . import graph, graph_view

        drawn = self.graph(npc=npc, category=category, as_of=as_of)
        if focus is not None:
            drawn = graph.neighbourhood(drawn, focus, depth)
        return graph_view.render(drawn, max_nodes=max_nodes)

    def graph_frames(
        self, npc: str | None = None, category: str | None = None, as_of: datetime | None = None
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The graph as a (nodes, edges) pair of DataFrames; edges list their memory ids."""
        from . import graph

        return graph.graph_frames(self.graph(npc=npc, category=category, as_of=as_of))

    def export_graphml(
        self, path: str | Path, npc: str | None = None, category: str | None = None
    ) -> Path:
        """Write the graph as GraphML (memory ids as comma-separated text)."""
        from . import graph

        target = output_path(path)
        graph.to_graphml(self.graph(npc=npc, category=category), target)
        return target

    def _concept_model(self) -> str:
        return self.settings.concept_model or self.settings.model or offline.MODEL


def _moment(as_of: object) -> datetime | None:
    if as_of is None:
        return None
    try:
        return to_utc(as_of, name="as_of")
    except ValueError as exc:
        raise DecisionError(str(exc)) from exc
