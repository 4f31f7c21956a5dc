"""The notebook front end: the IPython magics, opt-in ``{name}`` interpolation, and how
an NpcError raised in a cell is shown."""
