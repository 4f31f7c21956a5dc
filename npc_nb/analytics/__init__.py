"""Analytics: ``metrics`` (``nb.metrics``) and ``export`` (Parquet, JSONL, Prodigy)."""
