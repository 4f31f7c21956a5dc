"""``npc-nb``: the command line, for people outside Jupyter.

A front end, like the notebook magics: it parses what was typed, calls the facade (or,
for ``migrate-store``, the store's move) and shows the result; it holds no logic of its
own. ``main`` is the console script's entry point (``npc-nb = "npc_nb.cli:main"``, and
``python -m npc_nb.cli``). What lives here: ``command`` (the parser, ``main``), ``review`` (``npc-nb
review``: single keys over a ``ReviewSession``), ``opening`` (which project a command
opens; a command that only reads or reviews creates nothing), ``migrate`` (``npc-nb
migrate-store``), ``grants`` (``npc-nb grant`` and ``npc-nb revoke``), ``transfer``
(``npc-nb import`` and ``npc-nb export``), ``rerun`` (``npc-nb rerun``: a saved notebook
executed again, replayed, each cell compared), ``options`` (the options that say which
project a command opens: ``--project``, ``--project-name``, ``--store``) and ``console``
(the terminal: one key at a time, prompts asked again after a refusal). It may import
anything below it; nothing in the package imports it.
"""

from .command import main

__all__ = ["main"]
