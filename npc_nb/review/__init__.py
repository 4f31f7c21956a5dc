"""Reviewing: ``session`` (``ReviewSession``, the state of one review) and ``panel`` (its
ipywidgets view, the only importer of ipywidgets and anywidget)."""
