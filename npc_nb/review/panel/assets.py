"""Where the panel's front-end files are: inside the wheel, or the checkout's ``widgets/``.

The JS/CSS sources live in the top-level ``widgets/`` folder (no Python there). A wheel
ships them as ``npc_nb/_frontend``; an editable install runs from the checkout, where
they sit beside the package.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["FRONTEND_FILES", "frontend_file"]

FRONTEND_FILES = ("review_keys.js", "review_panel.css")


def frontend_file(name: str) -> Path:
    """The path of one front-end file; a clear error if the install lacks it."""
    package = Path(__file__).resolve().parents[2]  # npc_nb/ (this is npc_nb/review/panel/)
    for folder in (package / "_frontend", package.parent / "widgets"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(
        f"npc_nb's front-end file {name!r} is missing from {package / '_frontend'}; "
        "reinstall npc_nb (pip install --force-reinstall npc_nb)."
    )
