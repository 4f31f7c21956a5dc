"""The store package: the only code that holds SQL.

``Store`` is one DuckDB file (connections, transactions, the one INSERT builder);
``Stores`` the pair a project reads (its own file and the user's). The queries live in
modules named after what they read or write: ``memory_rows``, ``events`` (the audit
log), ``predicates`` (visibility and the one approval predicate), ``chat_log``, ``jobs``,
``frames``, ``graph_sql``, ``analytics``, ``exports`` and ``user_sql``; the schema in
``migrations`` and the documented views in ``views``.
"""

from ._database import Connection, Store
from ._lease import in_background
from .stores import Stores

__all__ = ["Connection", "Store", "Stores", "in_background"]
