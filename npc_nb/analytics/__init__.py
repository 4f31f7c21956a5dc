"""Analytics: ``metrics`` (``nb.metrics``), ``export`` (Parquet, JSONL, Prodigy),
``diff`` (``nb.diff``: what changed in the approved memory between two states) and
``comparison`` (with ``significance``: the statistics of comparing two extractors)."""
