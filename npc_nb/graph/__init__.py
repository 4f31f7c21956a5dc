"""The knowledge graph of approved memories: concepts, the graph build, its drawings (the
inline view, its static picture, and with pyvis, the one pyvis importer, the network
``nb.graph.pyvis()`` returns and the standalone page), and the ``KnowledgeGraph``
service."""
