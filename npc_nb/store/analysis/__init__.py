"""Reading the store for analysis: DataFrames, metrics, exports, a researcher's own SQL.

``frames`` (the facade's DataFrames: ``nb.memories()``, ``nb.decisions()``,
``nb.reproposals()``, through the approval predicate and ``as_of``), ``analytics`` (the
metrics' SQL, aggregated in DuckDB), ``rewind`` (that SQL as the store stood at a
moment: the metrics' ``as_of``), ``exports`` (Parquet, JSON Lines and the review
log, written by DuckDB) and ``user_sql`` (``nb.sql`` and ``%npc_sql``: read-only unless
asked). The same DuckDB SQL runs on both backends: a PostgreSQL store answers it through
DuckDB with its schema attached (``Store.analysis``, ``Store.read_only``).

It may import the store's contract and shared modules, ``memories`` and the
foundations; no backend (``tests/test_layers.py``).
"""
