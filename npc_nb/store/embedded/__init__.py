"""The embedded backend: one DuckDB file per store, the default.

``database`` (``FileStore``: the store contract on one file; connections, transactions,
the decision generation), ``lease`` (the connection held while busy, released when
idle, retried when locked), ``empty`` (a file not created yet, read as an empty store:
the first write creates it) and ``faults`` (a damaged, unreadable or full file as a
StoreError that names it).

It may import the store's shared modules (``contract``, ``generation``, ``notices``,
``background``), the ``schema`` and the table families, and the foundations; never the
``server`` backend. Outside this folder only ``stores`` (which chooses the backend) and
``moving`` (which opens files at either end of a move) import it.
"""
