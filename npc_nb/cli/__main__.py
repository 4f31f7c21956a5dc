"""``python -m npc_nb.cli``: the ``npc-nb`` command."""

from .command import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
