"""The knowledge graph of approved memories: concepts, the graph build, its drawings (the
inline view, its static picture, the standalone pyvis page: the one pyvis importer), and
the ``KnowledgeGraph`` service."""
