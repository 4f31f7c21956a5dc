"""Metrics of the memory process, each a pandas DataFrame grouped as you ask.

    nb.metrics.approval_rate(group_by="model")
    nb.metrics.repeats_per_candidate(group_by=["prompt_version", "week"], as_of="v1")
    nb.metrics.backlog(period="day")

Group by any of: model, provider, prompt_version, npc, team, category, scope, reviewer,
day, week, month (``reviewer`` is not available for re-proposals). Rates are ``<NA>``
where their denominator is 0: "no decisions yet" is not a rate of zero (rates are
``Float64`` columns; ``numpy.asarray`` gives them as floats, ``NaN`` for ``<NA>``). The
definitions:

- **approval rate**: (approved + edited) / decided, over proposed memories (versions a
  supersede creates are not proposals). A superseded memory counts as approved: it was,
  before it was revised. Undone decisions do not count: what counts is the status now.
- **rejection rate**: rejected / decided. **edit rate**: approved with the reviewer's
  own text / decided; ``mean_text_change`` is the mean normalised Levenshtein distance
  between proposed and approved text of those (0 = unchanged, 1 = all different).
  Approving another wording the model proposed for a card (a merged variant) is not an
  edit: ``other_wording`` counts those, among the approved (also those an older npc_nb
  recorded as edits, told by their text).
- **repeats per candidate**: repeats of already decided content (matching a rejected
  or an approved memory) per new candidate, a count that exceeds 1 when repeats
  outnumber new candidates;
  ``pending_per_candidate`` counts repeats merged into a candidate still waiting,
  ``reinforced_per_candidate`` the repeats kept as more evidence of an approved memory.
- **matching**: of the matcher's automatic outcomes (merged into a card, suppressed as
  a rejected repeat, reinforcing an approved memory), those a reviewer checked (listed
  at the end of a review or by ``%npc_review --auto``, put back, or merged into a card
  that was then decided) and those put back as wrong (``nb.requeue``); ``precision`` is
  right / checked. Beside them, over every candidate a matcher judged (queued ones
  too, outcome ``queued``): the model judge's calls, tokens, mean milliseconds and
  failures, and, given labels, the neighbour recall (``recall.py``). Group also by
  matcher, verdict and outcome.
- **time to decision**: from proposal to the first decision that was not undone.
- **reviewer throughput**: cards per minute of active review (gaps over 5 minutes are
  breaks), and the median time per card.
- **audits**: one row per audited batch, its result now (``memory.audits.report``):
  the look's sample, reviewed, errors and the bound on the batch's error rate (``<NA>``
  until the look's sample is all decided), the tolerance, status and cards approved.

Arguments are keywords (only ``plot_rate`` takes its rate first): grouping is
``group_by=`` (``by=`` names who decides, on the calls that record a decision, never a
grouping). Every metric and plot but ``audits`` takes ``as_of=``
(a snapshot, its id or label, or a time): the metric as it stood then, from the audit
log (``store.analysis.rewind``).

Each frame with a rate also carries ``n`` (the rate's denominator) and ``ci_low`` /
``ci_high``, a 95% interval for the rate the method is named after: Wilson's score
interval for a proportion, the Poisson score interval for repeats per candidate (repeats
may outnumber new candidates). The ``plot_*`` methods draw them (``plots.py``); shown by
itself, ``nb.metrics`` lists its methods with the first line of each docstring.
"""

from __future__ import annotations

import html
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._foundations.arguments import checked_methods, unknown_choice
from .._foundations.tables import Kind, kinds_of, with_missing_as_na
from ..errors import InvalidValueError
from ..store.analysis import analytics
from ..store.memories.predicates import Moment
from ..vocabulary import VOTE_DECISIONS
from . import plots
from .agreement import agreement_from
from .intervals import poisson_score_interval, wilson_interval
from .recall import neighbour_recall

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..store import Store

__all__ = ["AUDIT_KINDS", "REPEATS_NOTE", "Metrics"]

SITTING_GAP_MS = 5 * 60 * 1000
#: ``audits()``: its columns and their kinds (``_foundations.tables``).
AUDIT_KINDS: dict[str, Kind] = {
    "audit": "text", "name": "text", "population": "int", "excluded": "int", "look": "int",
    "looks": "other", "sample": "int", "reviewed": "int", "errors": "int", "bound": "float",
    "tolerance": "float", "confidence": "float", "nominal_confidence": "float",
    "meets": "bool", "status": "text", "approved": "int", "seed": "int", "method": "text",
    "started_at": "time", "started_by": "text",
}  # fmt: skip
#: What repeats_per_candidate is, kept in its frame's ``attrs``.
REPEATS_NOTE = (
    "repeats of already decided content per new candidate: a count per candidate, not "
    "a share, so it exceeds 1 when repeats outnumber new candidates (one rejected idea "
    "can come back many times)"
)
_REPEAT_KINDS = ("rejected", "approved", "pending", "reinforced")


@checked_methods()
class Metrics:
    """The metrics of one project store (``Project.metrics``); ``moment_of`` turns an
    ``as_of`` (a snapshot, its id or label, a time) into the moment of that store. A
    wrong argument type is an ArgumentError naming what to pass."""

    def __init__(
        self,
        store: Store,
        moment_of: Callable[[Any], Moment | None] = lambda _: None,
        audits: Callable[[], list[dict[str, Any]]] = list,
    ) -> None:
        self._store = store
        self._moment_of = moment_of
        self._audits = audits  # the audits' report rows (``memory.audits.report``)

    def approval_rate(
        self, *, group_by: str | Sequence[str] = (), as_of: Any = None
    ) -> pd.DataFrame:
        """Share of decided candidates approved (as proposed or edited), with its 95% CI.

        Proposed, decided, approved, edited, other_wording, rejected, open,
        mean_text_change, the approval, rejection and edit rates, and the approval
        rate's n (decided) and 95% Wilson interval (ci_low, ci_high)."""
        frame = self._outcomes(group_by, as_of)
        return _shown(_with_interval(frame, "approval_rate", "approved", "decided"))

    def rejection_rate(
        self, *, group_by: str | Sequence[str] = (), as_of: Any = None
    ) -> pd.DataFrame:
        """Share of decided candidates rejected, with its 95% CI.

        Decided, rejected, rejection_rate, n (decided) and its 95% Wilson interval."""
        frame = self._outcomes(group_by, as_of)
        dims = _dimensions("memories", group_by)
        frame = frame[[*dims, "decided", "rejected", "rejection_rate"]]
        return _shown(_with_interval(frame, "rejection_rate", "rejected", "decided"))

    def edit_rate(self, *, group_by: str | Sequence[str] = (), as_of: Any = None) -> pd.DataFrame:
        """Share of decided candidates approved with the reviewer's own text, with its 95% CI.

        Decided, approved, edited, other_wording (approved as another wording the model
        proposed: not an edit), edit_rate, mean_text_change (of the edited ones), n
        (decided) and the edit rate's 95% Wilson interval."""
        frame = self._outcomes(group_by, as_of)
        counts = ["decided", "approved", "edited", "other_wording"]
        dims = _dimensions("memories", group_by)
        frame = frame[[*dims, *counts, "edit_rate", "mean_text_change"]]
        return _shown(_with_interval(frame, "edit_rate", "edited", "decided"))

    def _outcomes(self, group_by: str | Sequence[str], as_of: Any) -> pd.DataFrame:
        dims = _dimensions("memories", group_by)
        frame = analytics.outcomes(self._store, dims, self._moment_of(as_of))
        frame["approval_rate"] = _rate(frame["approved"], frame["decided"])
        frame["rejection_rate"] = _rate(frame["rejected"], frame["decided"])
        frame["edit_rate"] = _rate(frame["edited"], frame["decided"])
        return frame

    def repeats_per_candidate(
        self, *, group_by: str | Sequence[str] = (), as_of: Any = None
    ) -> pd.DataFrame:
        """Repeats of already decided content per new candidate (may exceed 1), with its 95% CI.

        A count per candidate, not a share: one rejected idea can come back many times,
        so repeats may outnumber new candidates. New candidates, re-proposals by kind
        (rejected, approved, pending, reinforced), repeats_per_candidate (rejected and
        approved repeats / new candidates), each kind per candidate, n (new candidates)
        and a 95% Poisson score interval."""
        dims, moment = _dimensions("reproposals", group_by), self._moment_of(as_of)
        new = analytics.outcomes(self._store, dims, moment)[[*dims, "proposed"]]
        repeats = analytics.reproposals(self._store, dims, moment)
        frame = _merge(new.rename(columns={"proposed": "new_candidates"}), repeats, dims)
        decided_repeats = frame["rejected"] + frame["approved"]
        frame["repeats_per_candidate"] = _rate(decided_repeats, frame["new_candidates"])
        for kind in _REPEAT_KINDS:
            frame[f"{kind}_per_candidate"] = _rate(frame[kind], frame["new_candidates"])
        frame["n"] = frame["new_candidates"]
        frame["ci_low"], frame["ci_high"] = poisson_score_interval(decided_repeats, frame["n"])
        frame = _shown(frame)
        frame.attrs["repeats_per_candidate"] = REPEATS_NOTE
        return frame

    def matching(
        self,
        *,
        group_by: str | Sequence[str] = ("matcher", "verdict"),
        labels: pd.DataFrame | Mapping[str, str] | None = None,
        as_of: Any = None,
    ) -> pd.DataFrame:
        """How often the matcher's automatic outcomes were right, and what judging cost.

        Automatic, checked, put_back (split + requeued), right, precision (right /
        checked), n (checked) and the precision's 95% Wilson interval; then over every
        judged candidate: judged, calls and tokens (the model judge's), latency_ms (mean
        per judged candidate), failures, and with ``labels`` (text -> fact) the
        neighbour recall (recall_n, recall_found, neighbour_recall; NaN without)."""
        dims, moment = _dimensions("matching", group_by), self._moment_of(as_of)
        frame = analytics.matching(self._store, dims, moment)
        frame["right"] = frame["checked"] - frame["put_back"]
        frame["precision"] = _rate(frame["right"], frame["checked"])
        frame = _with_interval(frame, "precision", "right", "checked")
        frame = _join(frame, analytics.judging(self._store, dims, moment), dims)
        if labels is None:
            frame["neighbour_recall"] = np.nan
            return _shown(frame)
        candidates, memories = analytics.judged_candidates(self._store, moment)
        return _shown(_join(frame, neighbour_recall(candidates, memories, labels, dims), dims))

    def backlog(self, *, period: str = "day", as_of: Any = None) -> pd.DataFrame:
        """Candidates proposed, closed, and still waiting at the end of each period.

        Per hour, day, week or month, with empty periods filled in."""
        if period not in analytics.PERIODS:
            raise unknown_choice("period", str(period), analytics.PERIODS)
        frame = analytics.backlog(self._store, period, self._moment_of(as_of))
        if frame.empty:
            return frame
        full = pd.date_range(
            frame["period"].min(),
            frame["period"].max(),
            freq={"hour": "h", "day": "D", "week": "W-MON", "month": "MS"}[period],
        )
        frame = frame.set_index("period").reindex(full)
        frame[["proposed", "closed"]] = frame[["proposed", "closed"]].fillna(0)
        frame["backlog"] = frame["backlog"].ffill()
        frame = frame.astype("int64").rename_axis("period").reset_index()
        return frame

    def time_to_decision(
        self, *, group_by: str | Sequence[str] = (), as_of: Any = None
    ) -> pd.DataFrame:
        """Hours from proposal to decision: median, mean and 90th percentile."""
        dims = _dimensions("memories", group_by)
        return _shown(analytics.time_to_decision(self._store, dims, self._moment_of(as_of)))

    def reviewer_throughput(
        self, *, group_by: str | Sequence[str] = "reviewer", as_of: Any = None
    ) -> pd.DataFrame:
        """Cards per minute of active review, and median seconds per card, per reviewer.

        Cards decided, active minutes, cards per minute, median seconds per card, and
        batch approvals, per group (default: per reviewer)."""
        dims, moment = _dimensions("decisions", group_by), self._moment_of(as_of)
        frame = analytics.reviewer_activity(self._store, dims, SITTING_GAP_MS, moment)
        frame["active_minutes"] = frame.pop("active_ms") / 60_000
        frame["cards_per_minute"] = _rate(frame["cards"], frame["active_minutes"])
        batches = analytics.batch_approvals(self._store, dims, moment)
        merged = _merge(frame, batches, dims)
        merged["active_minutes"] = merged["active_minutes"].fillna(0.0)
        return _shown(merged)

    def agreement(
        self,
        *,
        group_by: str | Sequence[str] | None = None,
        pairwise: bool = False,
        collapse_edits: bool = False,
        as_of: Any = None,
    ) -> pd.DataFrame:
        """Agreement between reviewers' votes (independent review), with 95% bootstrap CIs.

        Per group (``group_by``: model, provider, prompt_version, npc, team, category,
        scope, day, week, month of the card; or per pair of reviewers with ``pairwise``):
        cards with two votes or more, reviewers, votes; percent_agreement, kappa
        (Cohen's for two reviewers, Fleiss' for more: ``kappa_kind``),
        krippendorff_alpha and gwet_ac1 on the decisions approve / edit / reject / defer
        (``collapse_edits``: approve and edit as one), each with ``_ci_low`` and
        ``_ci_high``; resamples, seed, and a note where a statistic is undefined. A card
        deferred by its votes and voted on again counts once per round
        (``npc_nb.agreement_from``). With ``as_of``, the votes cast by then, as they
        stood (a vote replaced or withdrawn later still counts)."""
        dims = _dimensions("votes", () if group_by is None else group_by)
        votes = analytics.agreement_votes(self._store, dims, self._moment_of(as_of))
        categories: tuple[str, ...] = VOTE_DECISIONS
        if collapse_edits:
            votes["decision"] = votes["decision"].replace({"edit": "approve"})
            categories = tuple(c for c in VOTE_DECISIONS if c != "edit")
        frame = agreement_from(
            votes, item="item", reviewer="reviewer", value="decision", group_by=dims,
            categories=categories, pairwise=pairwise,
        )  # fmt: skip
        return _shown(frame.rename(columns=_AGREEMENT_NAMES))

    def plot_agreement(
        self,
        *,
        group_by: str | None = None,
        pairwise: bool = False,
        collapse_edits: bool = False,
        as_of: Any = None,
        ax: Axes | None = None,
    ) -> Axes:
        """Agreement per group (``agreement``): each statistic with its 95% CI bar."""
        frame = self.agreement(
            group_by=group_by, pairwise=pairwise, collapse_edits=collapse_edits, as_of=as_of
        )
        groups = ["reviewer_a", "reviewer_b"] if pairwise else ([group_by] if group_by else [])
        kind = ", ".join(sorted(set(frame["kappa_kind"].dropna()))) or "kappa"
        estimates = {
            "percent_agreement": "percent agreement",
            "kappa": f"{kind} kappa" if kind != "kappa" else "kappa",
            "krippendorff_alpha": "Krippendorff's alpha",
            "gwet_ac1": "Gwet's AC1",
        }
        what = (
            "approve+edit / reject / defer" if collapse_edits else "approve / edit / reject / defer"
        )
        return plots.estimate_points(
            frame, groups, estimates, title=f"Agreement between reviewers ({what})",
            ylabel="agreement (95% bootstrap CI)", ax=ax,
        )  # fmt: skip

    def audits(self) -> pd.DataFrame:
        """One row per audited batch: its sample, errors and bound on the error rate.

        audit (its id), name, population (the batch), excluded (set aside for ordinary
        review), look of looks (the planned cumulative samples), sample (planned at this
        look), reviewed, errors and bound (``<NA>`` until the look's sample is all
        decided: the one-sided upper bound on the batch's error rate at the look's
        nominal_confidence, ``npc_nb.error_bound``), tolerance, confidence, meets
        (bound < tolerance at a planned look), status, approved (unsampled cards
        batch-approved, still approved), seed, method, started_at, started_by. Oldest
        first. The state now: it takes no ``as_of``."""
        frame = pd.DataFrame(self._audits(), columns=list(AUDIT_KINDS))
        return with_missing_as_na(frame, AUDIT_KINDS)

    def injections_per_memory(self, *, as_of: Any = None) -> pd.DataFrame:
        """Each approved memory: how many prompts it went into, first and last time."""
        return _shown(analytics.injections_per_memory(self._store, self._moment_of(as_of)))

    # -- plots (matplotlib, imported on first use; each returns its Axes) ----------------

    def plot_approval_rate(
        self,
        *,
        group_by: str | None = "model",
        period: str = "week",
        as_of: Any = None,
        ax: Axes | None = None,
    ) -> Axes:
        """Approval rate per period with its 95% CI, one series per value of ``group_by``."""
        return self.plot_rate("approval_rate", group_by=group_by, period=period, as_of=as_of, ax=ax)

    def plot_rate(
        self,
        rate: str = "approval_rate",
        *,
        group_by: str | None = None,
        period: str = "week",
        as_of: Any = None,
        ax: Axes | None = None,
    ) -> Axes:
        """Any rate per period with its 95% CI, one series per value of ``group_by``.

        ``rate`` is approval_rate, rejection_rate, edit_rate, repeats_per_candidate or
        precision (of the matcher)."""
        if rate not in _RATE_PLOTS:
            raise InvalidValueError("rate", rate, tuple(_RATE_PLOTS), lead=f"Cannot plot {rate!r}")
        method, fraction = _RATE_PLOTS[rate]
        dims = [period, *([group_by] if group_by else [])]
        frame = getattr(self, method)(group_by=dims, as_of=as_of)
        name = rate.replace("_", " ").capitalize()
        return plots.rate_points(
            frame,
            rate,
            period,
            group_by,
            title=f"{name} by {group_by}" if group_by else name,
            ylabel=f"{fraction} (95% CI)",
            proportion=rate != "repeats_per_candidate",
            ax=ax,
        )

    def plot_backlog(
        self, *, period: str = "day", as_of: Any = None, ax: Axes | None = None
    ) -> Axes:
        """Candidates waiting for review at the end of each period."""
        return plots.level_line(
            self.backlog(period=period, as_of=as_of).rename(columns={"period": period}),
            "backlog",
            period,
            title="Review backlog",
            ylabel="candidates waiting",
            ax=ax,
        )

    def plot_reproposals(
        self, *, period: str = "week", as_of: Any = None, ax: Axes | None = None
    ) -> Axes:
        """Re-proposals per period, stacked by what they repeated."""
        return plots.count_bars(
            self.repeats_per_candidate(group_by=period, as_of=as_of),
            ["rejected", "approved", "pending"],
            period,
            title="Re-proposals by kind",
            ylabel="re-proposals",
            legend_title="repeated a memory",
            ax=ax,
        )

    # -- display ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        lines = [f"  {name}({args}): {summary}" for name, args, summary in _catalogue()]
        return f"nb.metrics: {_CAPTION}\n" + "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        rows = "".join(
            f"<tr><td {_LEFT}><code>{html.escape(name)}({html.escape(args)})</code></td>"
            f"<td {_LEFT}>{html.escape(summary)}</td></tr>"
            for name, args, summary in _catalogue()
        )
        caption = f"<code>nb.metrics</code>: {html.escape(_CAPTION)}"
        return {
            "text/plain": repr(self),
            "text/html": f"<div><p>{caption}</p><table>{rows}</table></div>",
        }


_LEFT = 'style="text-align: left"'  # JupyterLab right-aligns table cells
#: ``npc_nb.agreement_from``'s generic names, as the votes of a review call them.
_AGREEMENT_NAMES = {"items": "cards", "ratings": "votes"}

#: Each plottable rate: the metric that computes it, and the fraction it is.
_RATE_PLOTS = {
    "approval_rate": ("approval_rate", "approved / decided"),
    "rejection_rate": ("rejection_rate", "rejected / decided"),
    "edit_rate": ("edit_rate", "edited / decided"),
    "repeats_per_candidate": ("repeats_per_candidate", "repeats / new candidate"),
    "precision": ("matching", "right / checked"),
}


_CAPTION = (
    "each returns a DataFrame (plot_* a matplotlib Axes); every metric and plot but "
    "audits() takes as_of= (a snapshot, its id or label, or a time)"
)


def _catalogue() -> list[tuple[str, str, str]]:
    """(name, parameters, first docstring line) of every public metric and plot: read
    from the methods themselves, so the list cannot fall behind them."""
    entries = []
    for name, member in vars(Metrics).items():
        if name.startswith("_") or not callable(member):
            continue
        parameters = [  # as_of: every metric takes it, as the caption says
            p for p in list(inspect.signature(member).parameters.values())[1:] if p.name != "as_of"
        ]
        args = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}"
                         for p in parameters)  # fmt: skip
        doc = inspect.getdoc(member) or ""
        entries.append((name, args, doc.split("\n", 1)[0].replace("``", "`")))
    return entries


def _dimensions(source: str, group_by: str | Sequence[str]) -> list[str]:
    names = [group_by] if isinstance(group_by, str) else list(group_by)
    allowed = analytics.DIMENSIONS[source]
    unknown = [name for name in names if name not in allowed]
    if unknown:
        name = unknown[0]
        raise unknown_choice(
            "dimension", name, tuple(allowed), lead=f"Cannot group by {name!r} here"
        )
    if len(set(names)) != len(names):
        raise InvalidValueError("dimension", names, "each dimension at most once")
    return names


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """A metric as returned: a missing group value or undefined rate is ``<NA>``, the one
    marker of every table npc_nb returns (``_tables``); numbers stay numbers."""
    return with_missing_as_na(frame, kinds_of(frame))


def _rate(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    return (numerator / denominator.where(denominator > 0, np.nan)).astype("float64")


def _with_interval(frame: pd.DataFrame, rate: str, count: str, n: str) -> pd.DataFrame:
    """``frame`` with ``n`` (the denominator of ``rate``) and its 95% Wilson interval."""
    frame = frame.assign(n=frame[n])
    frame["ci_low"], frame["ci_high"] = wilson_interval(frame[count], frame["n"])
    return frame


def _join(left: pd.DataFrame, right: pd.DataFrame, dims: list[str]) -> pd.DataFrame:
    """Join two grouped frames whose columns may be rates: a group missing on one side
    has zero counts (its integer columns) and NaN rates there."""
    counts = [
        column
        for frame in (left, right)
        for column in frame.columns
        if column not in dims and pd.api.types.is_integer_dtype(frame[column])
    ]
    if not dims:
        merged = pd.concat([left.reset_index(drop=True), right.reset_index(drop=True)], axis=1)
    else:
        merged = left.merge(right, on=dims, how="outer").sort_values(dims).reset_index(drop=True)
    merged[counts] = merged[counts].fillna(0).astype("int64")
    return merged


def _merge(left: pd.DataFrame, right: pd.DataFrame, dims: list[str]) -> pd.DataFrame:
    """Join two grouped frames; a group missing on one side has zero counts there."""
    if not dims:
        merged = pd.concat([left.reset_index(drop=True), right.reset_index(drop=True)], axis=1)
    else:
        merged = left.merge(right, on=dims, how="outer")
    counts = [c for c in right.columns if c not in dims] + [
        c for c in left.columns if c not in dims and pd.api.types.is_integer_dtype(left[c])
    ]
    merged[counts] = merged[counts].fillna(0).astype("int64")
    return merged.sort_values(dims).reset_index(drop=True) if dims else merged
