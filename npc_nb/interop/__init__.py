"""Memories in and out: the lossless bundle, and other tools' files through the trust gate.

A service beside chat, graph and analytics: the facade builds ``service.Interop`` and
hands it the memory core and the stores. ``bundle_file`` (the zip and its manifest,
read as hostile), ``source_file`` (another tool's file, bounded and decoded record by
record), ``records`` (a record as the gate takes it), ``gate`` (each record proposed
like any candidate, the source's decisions applied and audited as imported),
``npcpy_files``, ``mem0_files``, ``letta_files`` (each tool's format read into
records), ``exports`` (approved memories in each tool's import shape) and ``summary``
(what an import did, and its progress line).

It may import the memory core, the store and the foundations; no other service, and no
SQL of its own (other tools' SQLite files are read by ``store.bundle.foreign``).
"""
