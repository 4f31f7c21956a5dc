"""Reading memory state as tables, now or as it stood (``MemoryTables``, ``tables.py``):
what the facade hands a user as ``nb.memories()``, ``nb.decisions()``, ``nb.votes()``,
``nb.reproposals()``, ``nb.review_queue()`` and ``nb.sql()``. It reads through the
memory core and the store's read-side queries and writes nothing."""

from .tables import MemoryTables

__all__ = ["MemoryTables"]
