"""The notebook front end: the IPython magics, opt-in ``{name}`` interpolation, how an
NpcError raised in a cell is shown, and ``provenance`` (what each ``%%npc`` cell of a
saved notebook was built on)."""
