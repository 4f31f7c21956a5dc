"""Agreement between reviewers (raters), as DataFrames: percent agreement, Cohen's
kappa (two raters) or Fleiss' kappa (more), Krippendorff's alpha and Gwet's AC1, each
with a 95% bootstrap interval.

    npc_nb.agreement_from(frame, item="memory_id", reviewer="reviewer", value="decision",
                          group_by=None)

A pure function of a long table, one row per rating (``nb.votes()``, or any coding
data). Nominal categories; a missing rating is simply a row that is not there. Notation:
for item *i*, ``n_ic`` raters chose category *c* and ``m_i = Σ_c n_ic`` rated it; *q* is
the number of categories (``categories``, else those observed).

- **percent agreement** ``p_a``: the mean over items with ``m_i ≥ 2`` of the share of
  agreeing rater pairs, ``Σ_c n_ic(n_ic − 1) / (m_i(m_i − 1))`` (Fleiss 1971; Gwet 2014,
  Handbook of Inter-Rater Reliability, 4th ed., ch. 2).
- **Cohen's kappa** (exactly two raters, the items both rated):
  ``κ = (p_o − p_e)/(1 − p_e)``, ``p_e = Σ_c p_Ac p_Bc`` with each rater's own
  marginals (Cohen 1960, Educ. Psychol. Meas. 20:37-46).
- **Fleiss' kappa** (three raters or more): ``κ = (p_a − p_e)/(1 − p_e)``,
  ``p_e = Σ_c π_c²``, ``π_c`` the mean over items of ``n_ic / m_i`` (Fleiss 1971,
  Psychol. Bull. 76:378-382; with missing ratings as Gwet 2014 generalises it).
- **Krippendorff's alpha** (nominal): ``α = 1 − (n − 1) Σ_i D_i / (n² − Σ_c n_c²)``
  over pairable items (``m_i ≥ 2``), ``D_i = (m_i² − Σ_c n_ic²)/(m_i − 1)`` the item's
  disagreeing pairable values, ``n_c`` the pairable values of category *c* and
  ``n = Σ_c n_c`` (Krippendorff 2011, Computing Krippendorff's alpha-reliability).
- **Gwet's AC1**: ``(p_a − p_e)/(1 − p_e)``, ``p_e = Σ_c π_c(1 − π_c)/(q − 1)``
  (Gwet 2008, Br. J. Math. Stat. Psychol. 61:29-48).

Every estimate comes with the counts it rests on (``items`` rated twice or more,
``reviewers``, ``ratings``) and a 95% percentile bootstrap interval over items: items are
drawn with replacement ``resamples`` times from a generator seeded with ``seed`` (both
in the frame), so a rerun gives the same interval. The statistics are sums over items,
so every resample is one matrix product of bootstrap weights and per-item terms, over
the kinds of item there are rather than the items (100k
ratings take well under a second). Degenerate input is ``NaN`` with the reason in ``note``:
no item rated twice (no overlap), a single item (no chance agreement to estimate, no
interval), one category only (chance agreement is 1: kappa and alpha undefined), fewer
than two raters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ArgumentError, InvalidValueError

__all__ = ["RESAMPLES", "STATISTICS", "agreement_from"]

#: Bootstrap resamples behind each interval, unless a caller asks for others.
RESAMPLES = 1000
#: The statistics of a frame, by column name.
STATISTICS = ("percent_agreement", "kappa", "krippendorff_alpha", "gwet_ac1")
#: Bootstrap weights held at once: resamples x items (bounds memory, not speed).
_CHUNK_CELLS = 4_000_000


def agreement_from(
    frame: pd.DataFrame,
    *,
    item: str = "memory_id",
    reviewer: str = "reviewer",
    value: str = "decision",
    group_by: str | Sequence[str] | None = None,
    categories: Sequence[Any] | None = None,
    pairwise: bool = False,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Agreement per group of a long table of ratings (see the module docstring).

    ``item``, ``reviewer`` and ``value`` name the frame's columns: what was rated, who
    rated it, and the rating. One row per group of ``group_by`` (every column of it; or
    one row): ``items`` (rated by two or more), ``reviewers``, ``ratings``; each
    statistic with ``<name>_ci_low`` and ``<name>_ci_high``; ``kappa_kind`` (``cohen``
    or ``fleiss``); ``resamples``, ``seed`` and ``note``. With ``pairwise`` one row per
    pair of reviewers (``reviewer_a``, ``reviewer_b``, Cohen's kappa on the items both
    rated)."""
    dims = [group_by] if isinstance(group_by, str) else list(group_by or ())
    ratings = _ratings(frame, item, reviewer, value, dims)
    levels = _levels(ratings["value"], categories)
    rows = []
    for key, group in _groups(ratings, dims):
        for pair, part in _pairs(group, pairwise):
            found = _statistics(part, levels, resamples, seed)
            rows.append(dict(zip(dims, key, strict=True)) | pair | found)
    columns = [*dims, *(("reviewer_a", "reviewer_b") if pairwise else ()), *_COLUMNS]
    result = pd.DataFrame(rows, columns=columns)
    for name in ("items", "reviewers", "ratings", "resamples", "seed"):
        result[name] = result[name].astype("int64")
    return result


_COLUMNS = [
    "items",
    "reviewers",
    "ratings",
    *(f"{s}{end}" for s in STATISTICS for end in ("", "_ci_low", "_ci_high")),
    "kappa_kind",
    "resamples",
    "seed",
    "note",
]


def _ratings(
    frame: pd.DataFrame, item: str, reviewer: str, value: str, dims: list[str]
) -> pd.DataFrame:
    """The ratings as columns item, rater, value and the group columns; missing
    ratings dropped; a reviewer rating an item twice refused."""
    if not isinstance(frame, pd.DataFrame):
        raise ArgumentError("agreement_from() takes a DataFrame, one row per rating.")
    missing = [c for c in (item, reviewer, value, *dims) if c not in frame.columns]
    if missing:
        raise InvalidValueError(
            "column",
            missing[0],
            tuple(frame.columns),
            lead=f"agreement_from(): no column {', '.join(map(repr, missing))} in the frame",
            hint="Name the item, reviewer and value columns (item=, reviewer=, value=) among them.",
        )
    found = frame[[item, reviewer, value, *dims]].copy()
    found.columns = ["item", "rater", "value", *dims]
    found = found[found["value"].notna() & found["item"].notna() & found["rater"].notna()]
    twice = found.duplicated(["item", "rater"])
    if twice.any():
        first = found[twice].iloc[0]
        raise ArgumentError(
            f"agreement_from(): reviewer {first['rater']} rated item {first['item']} more "
            "than once; keep one rating per reviewer and item (or make the item column tell "
            "them apart, e.g. a card and its round)."
        )
    return found.reset_index(drop=True)


def _levels(values: pd.Series, categories: Sequence[Any] | None) -> list[Any]:
    """The categories, in a fixed order: those given, else those observed."""
    if categories is None:
        return sorted(pd.unique(values), key=str)
    levels = list(dict.fromkeys(categories))
    unknown = sorted(set(values) - set(levels), key=str)
    if unknown:
        raise InvalidValueError(
            "value",
            unknown[0],
            tuple(levels),
            lead=f"agreement_from(): values {unknown} are not among the categories {levels}",
        )
    return levels


def _groups(ratings: pd.DataFrame, dims: list[str]) -> list[tuple[tuple, pd.DataFrame]]:
    if not dims:
        return [((), ratings)]
    grouped = ratings.groupby(dims, sort=True, dropna=False)
    return [(key if isinstance(key, tuple) else (key,), part) for key, part in grouped]


def _pairs(group: pd.DataFrame, pairwise: bool) -> list[tuple[dict, pd.DataFrame]]:
    """The group whole, or with ``pairwise`` one part per pair of its raters: the
    ratings of the two on the items both rated."""
    if not pairwise:
        return [({}, group)]
    raters = sorted(pd.unique(group["rater"]), key=str)
    parts = []
    for i, first in enumerate(raters):
        for second in raters[i + 1 :]:
            two = group[group["rater"].isin([first, second])]
            both = two.groupby("item")["rater"].transform("size") == 2
            parts.append(({"reviewer_a": first, "reviewer_b": second}, two[both]))
    return parts


def _statistics(
    ratings: pd.DataFrame, levels: list[Any], resamples: int, seed: int
) -> dict[str, Any]:
    """Every statistic of one group, with its interval, counts and note."""
    terms = _Terms(ratings, levels)
    point = terms.estimate(np.ones((1, terms.n_items)))
    notes = terms.notes()
    replicates = terms.estimate_bootstrap(resamples, seed) if terms.pairable >= 2 else None
    found: dict[str, Any] = {
        "items": terms.pairable,
        "reviewers": terms.n_raters,
        "ratings": terms.pairable_ratings,
        "kappa_kind": terms.kappa_kind,
        "resamples": resamples,
        "seed": seed,
        "note": "; ".join(notes),
    }
    for name in STATISTICS:
        estimate = float(point[name][0])
        low = high = np.nan
        if replicates is not None and np.isfinite(estimate):
            low, high = _percentiles(replicates[name])
        found |= {name: estimate, f"{name}_ci_low": low, f"{name}_ci_high": high}
    return found


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if len(finite) < 2:
        return np.nan, np.nan
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


class _Terms:
    """A group's per-item terms, the statistics' ingredients, as the columns of one
    matrix: every statistic is a ratio of weighted sums of them over items (weights 1,
    or a bootstrap resample), so a batch of resamples is one matrix product."""

    def __init__(self, ratings: pd.DataFrame, levels: list[Any]) -> None:
        items = pd.Categorical(ratings["item"])
        raters = pd.Categorical(ratings["rater"])
        codes = pd.Categorical(ratings["value"], categories=levels).codes
        self.n_items, self.q = len(items.categories), len(levels)
        self.n_raters = len(raters.categories)
        counts = np.zeros((self.n_items, self.q))
        np.add.at(counts, (items.codes, codes), 1.0)
        m = counts.sum(axis=1)
        pairable = m >= 2
        self.pairable = int(pairable.sum())
        self.pairable_ratings = int(m[pairable].sum())
        self.observed = int((counts[pairable].sum(axis=0) > 0).sum())
        pairs = np.where(pairable, m * (m - 1), 1.0)
        self.kappa_kind = "cohen" if self.n_raters == 2 else "fleiss"
        parts = {
            "one": np.ones(self.n_items),
            "pairable": pairable.astype(float),
            # the share of the item's rater pairs that agree
            "agreeing": np.where(pairable, (counts * (counts - 1)).sum(axis=1) / pairs, 0.0),
            # Krippendorff's disagreeing pairable values of the item
            "disagreeing": np.where(
                pairable, (m**2 - (counts**2).sum(axis=1)) / np.where(pairable, m - 1, 1.0), 0.0
            ),
            "shares": counts / m[:, None],  # n_ic / m_i: every item has a rating
            "values": counts * pairable[:, None],  # pairable values per category
        }
        if self.n_raters == 2:
            parts |= _cohen_terms(items.codes, raters.codes, codes, self.n_items, self.q)
        self.slices: dict[str, slice] = {}
        columns, start = [], 0
        for name, part in parts.items():
            block = part[:, None] if part.ndim == 1 else part
            self.slices[name] = slice(start, start + block.shape[1])
            columns.append(block)
            start += block.shape[1]
        self.matrix = np.hstack(columns)

    def notes(self) -> list[str]:
        notes = []
        if self.n_raters < 2:
            notes.append("fewer than two raters: nothing to compare")
        elif self.pairable == 0:
            notes.append("no overlap: no item was rated by two raters")
        elif self.pairable == 1:
            notes.append("a single item rated twice: chance agreement cannot be estimated")
        if self.pairable and self.observed == 1:
            notes.append("one category only: chance agreement is 1, kappa and alpha undefined")
        if self.q < 2 and self.pairable:
            notes.append("fewer than two categories: AC1 undefined")
        return notes

    def estimate_bootstrap(self, resamples: int, seed: int) -> dict[str, np.ndarray]:
        """Every statistic on ``resamples`` resamples of the items (seeded).

        Items whose terms are alike are interchangeable (two raters and four decisions
        make at most sixteen kinds of item), so a resample is drawn as how many items of
        each kind it holds: a multinomial draw over the kinds, exactly what drawing the
        items one by one with replacement gives, at a cost that grows with the kinds,
        not the items."""
        rng = np.random.default_rng(seed)
        kinds, counts = np.unique(self.matrix, axis=0, return_counts=True)
        if len(kinds) * 4 > self.n_items:  # hardly any alike: draw the items themselves
            return self._draw_items(rng, resamples)
        weights = rng.multinomial(self.n_items, counts / self.n_items, size=resamples)
        return self.estimate(weights.astype(float), kinds)

    def _draw_items(self, rng: np.random.Generator, resamples: int) -> dict[str, np.ndarray]:
        items = self.n_items
        chunk = max(1, min(resamples, _CHUNK_CELLS // max(items, 1)))
        parts: list[dict[str, np.ndarray]] = []
        done = 0
        while done < resamples:
            size = min(chunk, resamples - done)
            drawn = rng.integers(0, items, size=(size, items), dtype=np.int64)
            drawn += (np.arange(size, dtype=np.int64) * items)[:, None]
            weights = np.bincount(drawn.ravel(), minlength=size * items).reshape(size, items)
            parts.append(self.estimate(weights.astype(float)))
            done += size
        return {name: np.concatenate([p[name] for p in parts]) for name in STATISTICS}

    def estimate(
        self, weights: np.ndarray, matrix: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """Every statistic for each row of ``weights`` (resamples x the rows of
        ``matrix``: the items' terms, or each kind of item's)."""
        sums = weights @ (self.matrix if matrix is None else matrix)
        total = {name: sums[:, where] for name, where in self.slices.items()}
        with np.errstate(divide="ignore", invalid="ignore"):
            pa = total["agreeing"][:, 0] / total["pairable"][:, 0]
            pi = total["shares"] / total["one"]
            fleiss_pe = (pi**2).sum(axis=1)
            ac1_pe = (pi * (1 - pi)).sum(axis=1) / (self.q - 1) if self.q > 1 else np.nan * pa
            nc = total["values"]
            n = nc.sum(axis=1)
            alpha = 1 - (n - 1) * total["disagreeing"][:, 0] / (n**2 - (nc**2).sum(axis=1))
            found = {
                "percent_agreement": pa,
                "kappa": self._kappa(total, pa, fleiss_pe),
                "krippendorff_alpha": alpha,
                "gwet_ac1": (pa - ac1_pe) / (1 - ac1_pe),
            }
        if self.pairable < 2 or self.n_raters < 2:  # nothing to estimate chance from
            for name in ("kappa", "krippendorff_alpha", "gwet_ac1"):
                found[name] = np.full(len(weights), np.nan)
        if self.pairable == 0 or self.n_raters < 2:
            found["percent_agreement"] = np.full(len(weights), np.nan)
        return {name: np.where(np.isfinite(v), v, np.nan) for name, v in found.items()}

    def _kappa(
        self, total: dict[str, np.ndarray], pa: np.ndarray, fleiss_pe: np.ndarray
    ) -> np.ndarray:
        if "both" not in total:
            return (pa - fleiss_pe) / (1 - fleiss_pe)
        both = total["both"][:, 0]
        observed = total["agree"][:, 0] / both
        expected = (total["first"] * total["second"]).sum(axis=1) / both**2
        return (observed - expected) / (1 - expected)


def _cohen_terms(
    item_codes: np.ndarray, rater_codes: np.ndarray, value_codes: np.ndarray, items: int, q: int
) -> dict[str, np.ndarray]:
    """Per item, for two raters: rated by both, both agree, and each one's category
    (one-hot) on the items both rated."""
    chosen = np.full((items, 2), -1)
    chosen[item_codes, rater_codes] = value_codes
    both = (chosen >= 0).all(axis=1)
    first, second = np.zeros((items, q)), np.zeros((items, q))
    rows = np.flatnonzero(both)
    first[rows, chosen[rows, 0]] = 1.0
    second[rows, chosen[rows, 1]] = 1.0
    return {
        "both": both.astype(float),
        "agree": (both & (chosen[:, 0] == chosen[:, 1])).astype(float),
        "first": first,
        "second": second,
    }
