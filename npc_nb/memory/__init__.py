"""The memory core: candidates, matching, transitions, decisions and the memory block.

``MemoryCore`` (``core.py``) is the service the facade builds; the modules beside it do
one job each: ``candidates`` (validate and queue, with tombstones), ``transitions``
(what a decision would change), ``decisions`` (write changes with their audit events),
``block`` (the ``<npc-memory>`` text and the output scrubbers), ``cache`` (per-process
sets keyed by the decision generation), ``ranking`` (relevance when over the cap),
``snapshots`` (the memory state at a moment: taken, found, read, pinned) and ``queue``
(the review queue); ``lookup/`` finds the memories a candidate is compared with
(the neighbour index, its dense half and the sentence embeddings).
"""
