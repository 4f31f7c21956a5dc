"""The notebook front end: the IPython magics and opt-in ``{name}`` interpolation."""
