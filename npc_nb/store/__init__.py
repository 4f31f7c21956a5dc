"""The store package: the only code that holds SQL.

The seam the rest of npc_nb uses: ``Store`` (the contract every store keeps: its
transactions, the decision generation, analytical reads, notices; ``contract``),
``Stores`` (the project's store and the user's, the backend chosen from the settings;
``stores``), ``Connection`` and ``in_background`` (``background``). Beside the seam
live what both backends share: ``generation`` (the token that tells caches to reload)
and ``notices`` (decisions made elsewhere).

The rooms, each with its own ``__init__`` saying what lives there and what it may
import:

- ``embedded/`` one DuckDB file (the default backend): the store, its lease, its faults;
- ``server/`` a project's schema on PostgreSQL (the lab's backend): the store, its
  dialect, listener, notice checks, presence, read-only vetting, roles;
- ``schema/`` the tables: both backends' migrations, the views, the generated doc;
- ``memories/``, ``conversations/``, ``graph/``, ``runs/`` the readers and writers of
  each family of tables, written once for both backends;
- ``analysis/`` DataFrames, metrics, exports and a researcher's own SQL;
- ``moving/`` copying a store into another (``npc-nb migrate-store``);
- ``bundle/`` a project's tables in and out of a bundle file, and other tools' SQLite
  files read for an import.

The backends never import each other, and nothing imports a backend but ``stores``
(which chooses one), the backends themselves and ``moving`` (which reads and writes
either): ``tests/test_layers.py`` holds it.
"""

from .background import in_background
from .contract import Connection, Store
from .stores import Stores

__all__ = ["Connection", "Store", "Stores", "in_background"]
