"""Finding what a candidate should be compared with.

- ``neighbours``: the neighbour index (BM25 over each memory's content terms, fused
  with the dense ranking), per store and per visibility;
- ``dense``: stored sentence vectors, nearest by cosine, reciprocal rank fusion;
- ``embedding``: sentence embeddings (the one wordllama importer).
"""
