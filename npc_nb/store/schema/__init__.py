"""The schema: what the tables are, on both backends, declared once.

``model`` (what a declaration is made of), ``tables`` and ``lab_tables`` (every table,
column, type, default, key, CHECK and index, as data; every closed set drawn from
``npc_nb.vocabulary``), ``dialect`` (the one layer that renders the declaration as
DuckDB's or PostgreSQL's DDL), ``view_sql`` (the views, DuckDB's SQL, the same on both
backends) and ``views`` (their columns, documented), ``pg_extras`` (PostgreSQL's own
triggers, row-level security and functions), ``chains`` (the hash chains' columns and
digest), ``migrations`` (the ladder: baseline ``0001`` and the steps after it, applied on
open), ``pg_migrations`` (the same ladder on PostgreSQL, under an advisory lock),
``legacy`` (stores made by the old ladder m001..m027: upgraded once, or refused),
``pg_project`` (which project a PostgreSQL schema holds) and ``doc`` (docs/schema.md,
generated from the declaration).

A new table arrives here first: its declaration, a step of the ladder on both
backends, then its line in the generated doc. It may import the foundations,
``errors`` and ``vocabulary``; no backend and no other room of the store (both
backends and the move import it).
"""
