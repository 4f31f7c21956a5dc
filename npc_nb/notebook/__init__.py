"""The notebook front end: the IPython magics, opt-in ``{name}`` interpolation, and
``provenance`` (what each ``%%npc`` cell of a saved notebook was built on)."""
