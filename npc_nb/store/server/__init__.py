"""The server backend: a project's schema on a PostgreSQL server, for a lab whose
reviewers share one memory across machines (``store=URL``).

``database`` (``PostgresStore``: the store contract on a psycopg pool; conditional
decisions, row locks on proposals), ``dialect`` (the store's DuckDB placeholders run
unchanged on psycopg), ``faults`` (psycopg's errors as StoreErrors that say what to
do), ``listener`` (LISTEN for decisions on a connection of its own), ``notice_checks``
(a notice is a hint, checked against the store), ``presence`` (a job claimer's session
lock), ``attach`` (analysis through DuckDB with the schema attached read-only),
``read_only`` (a researcher's SQL sends none of its own to the server) and ``roles``
(the grants of the owner, reviewer and reader roles).

It may import the store's shared modules, the ``schema`` and the table families, and the
foundations; never the ``embedded`` backend. psycopg is imported only here. Outside this
folder only ``stores`` (which chooses the backend) and ``moving`` import it.
"""
