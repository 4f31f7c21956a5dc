"""The schema: what the tables are, on both backends.

``migrations`` (the numbered DuckDB migrations ``mNNN_*``, each in one transaction with
its record: the reference schema), ``pg_migrations`` (the same tables on PostgreSQL,
under the same migration names, applied under an advisory lock), ``pg_project`` (which
project a PostgreSQL schema holds, recorded in it), ``views`` (the analytical views,
column by column) and ``doc`` (docs/schema.md, generated from the migrations). The
migrations' longer SQL sits beside them, each statement as it ran: ``initial_tables``
(``m001``), ``later_tables``, ``matching_columns``, ``view_sql`` (every version of the
views), ``runs_tables``, ``votes_table``, ``experiment_tables``; ``rewrites`` holds the
row rewrites both backends' migrations share.

A new table arrives here first: its migration on both backends, then its line in the
generated doc. It may import the foundations, ``errors`` and ``vocabulary``; no backend
and no other room of the store (both backends and the move import it).
"""
