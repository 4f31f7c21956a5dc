"""Moving a store: every row of one npc_nb store copied into another, a DuckDB file or a
PostgreSQL schema at either end (``npc-nb migrate-store``).

Start at ``move`` (``migrate_store``: checks both ends, prepares the target's schema,
then copies, and says what moved); ``copy_into`` writes the target in one transaction
(``INSERT ... SELECT`` into a file, ``COPY`` into PostgreSQL).

The one room besides ``stores`` that imports a backend's modules: a move reads and
writes either backend, so it opens a file with the embedded backend's fault messages
and attaches PostgreSQL with the server backend's extension loader. It may also import
``schema``, the contract and the foundations.
"""
