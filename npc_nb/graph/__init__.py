"""The knowledge graph of approved memories: concepts, the graph build, the pyvis view
(the one pyvis importer), and the ``KnowledgeGraph`` service."""
