"""Analytics: ``metrics`` (``nb.metrics``), ``export`` (Parquet, JSONL, Prodigy) and
``diff`` (``nb.diff``: what changed in the approved memory between two states)."""
