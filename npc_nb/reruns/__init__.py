"""Re-running a saved notebook: ``npc_nb.rerun`` and ``npc-nb rerun``.

A service beside chat, graph and analytics, needing no project: ``execution`` runs a
copy of the notebook in a kernel of its own with the replay forced from outside
(``NPC_NB_RERUN``, which the model gateway's recorder reads), ``comparison`` sets each
code cell's new outputs beside its saved ones (identical, changed with a short diff, or
failed), and ``report`` is what the caller gets back (it renders itself).

It may import the models layer (for the variable's name) and the foundations; nbclient
and nbformat are imported on first use, never at ``import npc_nb``.
"""

from .execution import rerun
from .report import CellRerun, RerunReport

__all__ = ["CellRerun", "RerunReport", "rerun"]
