"""The conversation family of tables: ``conversations``, ``messages``,
``context_injections`` and ``extraction_jobs``, read and written for both backends.

``chat_log`` (conversations, messages, and which memories went into which reply) and
``jobs`` (the durable extraction queue: enqueue, claim, finish, recover).

It may import the store's contract and shared modules, ``memories`` (for the visibility
predicate) and the foundations; no backend (``tests/test_layers.py``).
"""
