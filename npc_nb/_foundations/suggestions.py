"""Did you mean: the known name closest to a mistyped one, for every refusal of a name.

A setting (``%npc_config modle=``, ``npc_nb.open(modle=...)``, ``NPC_NB_MODLE``), a
magic's option (``%%npc --modle``), a filter's value and a persona's name are all
refused with the same kind of hint, so one rule decides what counts as close:
difflib's similarity ratio over case-folded names, at least ``cutoff`` (0.6, difflib's
own default; persona names ask for more). A name close to none gets no guess at all:
a wrong guess is worse than none.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

__all__ = ["closest", "did_you_mean"]


def closest(value: str, known: Iterable[str], *, n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The (at most ``n``) names of ``known`` closest to ``value``, best first, as they
    are spelt in ``known``; case does not count."""
    spelt: dict[str, str] = {}
    for name in known:
        spelt.setdefault(name.lower(), name)
    found = difflib.get_close_matches(value.lower(), list(spelt), n=n, cutoff=cutoff)
    return [spelt[name] for name in found]


def did_you_mean(value: str, known: Iterable[str], *, show: Callable[[str], str] = repr) -> str:
    """``" Did you mean 'model'?"`` (the closest known name, shown by ``show``), to
    follow a sentence that refuses ``value``; ``""`` when none is close."""
    found = closest(value, known)
    return f" Did you mean {show(found[0])}?" if found else ""
