"""The memory family of tables: ``memories``, ``memory_events``, ``reproposals``,
``match_labels``, ``votes``, ``review_policy`` and the audits' tables, read and written
for both backends.

``memory_rows`` (the memories table: read, insert, update rows; the operational path,
in the caller's transaction), ``events`` (the append-only audit log), ``reproposal_rows``
(re-proposals as the review shows them, and the reviewers' labels), ``history`` (the
memories as they stood at a moment, and the events between two), ``known_rows``
(rows a DuckDB file's store keeps by id while they are the file's), ``vote_rows`` (the
votes of independent review and their markers), ``policy_rows`` (the lab's review
policy, as the list of its changes), ``audit_rows`` (audited batches: the audit and
its frozen batch, written once, and the log of its steps) and ``predicates``
(who may see a memory, and the one approval predicate every reader goes through).

It may import the store's contract and shared modules and the foundations; no backend
(``tests/test_layers.py``).
"""
