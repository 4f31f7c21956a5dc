"""The knowledge graph's tables: the concepts and relations read from approved memories.

``graph_sql`` (which approved memory versions still need concepts, and storing what the
concept model extracted) and ``graph_nodes`` (the graph's nodes and edges worked out in
SQL, so a drawing reads only what it draws).

It may import the store's contract, ``memories`` (for the approval predicate) and the
foundations; no backend (``tests/test_layers.py``).
"""
