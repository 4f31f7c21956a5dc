"""The shared ground every layer stands on: small pure helpers, the settings, the result
objects, where stores live. Private: import from here inside npc_nb, never from outside.

What lives here: ``text`` and ``terms`` (normalising, hashing, flags, content terms),
``values/`` (the typed values a statement asserts, which the matchers' guards compare),
``utc`` (the one conversion of a moment to naive UTC), ``ids`` (UUIDv7), ``markup``
(text shown as data, never markup), ``json_items`` (a model's JSON answer, item by item),
``arguments`` (checked arguments of the public methods), ``results`` (what the API
returns), ``settings`` (the one settings model, its table and the default reviewer),
``suggestions`` (the closest known name to a mistyped one),
``locations`` and ``store_url`` (where a store is: a folder, or a PostgreSQL URL),
``tables`` (missing values in returned tables) and ``redact`` (credentials out of all
that is shown or stored).

What it may import: the standard library and third-party libraries, ``npc_nb.errors``,
``npc_nb.vocabulary`` and each other (no loops); nothing else of npc_nb (held by
``tests/test_layers.py``). Nothing here imports a heavy library at import time.
"""
