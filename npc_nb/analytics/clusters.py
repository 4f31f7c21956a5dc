"""Cards summed per conversation: the input of the statistics that respect clustering
(the cluster bootstrap in ``analytics.comparison``, the permutation test in
``analytics.permutation``).

An experiment's cards cluster within conversations, so these statistics resample or
permute whole conversations, and need only each conversation's successes and trials per
arm. The key design choice: the long frame (one row per card) is reduced once to two
2 x K arrays, so a resample or an arrangement is a sum over K numbers, never a pass over
the cards. NumPy and pandas are imported inside the functions: ``import npc_nb`` stays
fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ArgumentError, InvalidValueError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["cluster_sums", "require_columns"]


def cluster_sums(
    frame: pd.DataFrame, cluster: str, group: str, outcome: str, groups: tuple[Any, Any]
) -> tuple[Any, Any] | None:
    """Per cluster, the successes and trials of each of the two groups: two 2 x K float
    arrays (K clusters with a decided row in either group; the first group's row, then
    the second's), or None if a group has none. Rows with a missing outcome are left
    out; an outcome other than 0/1 or True/False is an ``ArgumentError``."""
    import numpy as np
    import pandas as pd

    rows = frame[frame[group].isin(list(groups)) & frame[outcome].notna()]
    values = pd.to_numeric(rows[outcome], errors="coerce").to_numpy(dtype="float64")
    if not np.isin(values, (0.0, 1.0)).all():
        raise ArgumentError(
            f"The outcome column {outcome!r} must hold True/False or 0/1 (missing values "
            "are left out), not other values."
        )
    codes, clusters = pd.factorize(rows[cluster])
    arms = [(rows[group] == name).to_numpy() for name in groups]
    trials = np.array([np.bincount(codes[arm], minlength=len(clusters)) for arm in arms])
    if (trials.sum(axis=1) == 0).any():
        return None
    successes = np.array(
        [np.bincount(codes[arm], weights=values[arm], minlength=len(clusters)) for arm in arms]
    )
    return successes, trials.astype("float64")


def require_columns(frame: pd.DataFrame, *names: str) -> None:
    """Refuse a frame that lacks one of the named columns, listing those it has."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise InvalidValueError(
            "column",
            missing[0],
            tuple(frame.columns),
            lead=f"The frame has no column {', '.join(map(repr, missing))}",
            hint="Pass the names of its columns.",
        )
