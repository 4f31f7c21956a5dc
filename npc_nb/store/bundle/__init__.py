"""A project's tables in and out of a bundle (``nb.export_bundle``, ``npc_nb.import_bundle``),
and other tools' SQLite files read for an import.

Start at ``tables`` (which tables travel: every base table of the store's catalog but
the documented ``EXCLUDED`` bookkeeping, each with its columns and types from the
migrations, and the canonical checksum of a table's rows), then ``dump`` (every table
to a Parquet file, in one snapshot), ``stage`` (a bundle's files loaded into a private
DuckDB file at the schema the bundle was written at, checked against its manifest, then
migrated like any store) and ``load`` (the staged rows written into a project's store in
one transaction, either backend: into an empty project, or merged). ``foreign`` reads
npcpy's ``memory_lifecycle`` and mem0's ``history`` tables from their SQLite files,
read-only.

The zip file and its manifest are the interop service's (``npc_nb.interop``); this
room sees folders of Parquet files. It may import the store's contract and shared
modules, the schema, the move's table enumeration (``moving.copy_into``) and the
foundations; no backend (``tests/test_layers.py``).
"""
