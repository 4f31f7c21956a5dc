"""Reproducible runs: the ``snapshots`` and ``model_recordings`` tables, read and
written for both backends.

``snapshot_rows`` (a snapshot taken in one transaction with the store's time and its
last audit event; snapshots listed and found by id or label) and ``recordings`` (model
replies recorded under the fingerprint of their request, and the newest one found).

It may import the store's contract and shared modules, ``memories`` (the memories as
they stood) and the foundations; no backend (``tests/test_layers.py``).
"""
