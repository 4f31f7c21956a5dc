"""SQL for the metrics: every query aggregates in DuckDB and returns a small DataFrame,
now or as the store stood at a ``Moment`` (``rewind``).

Grouping dimensions are chosen from fixed maps of column expressions, never from
caller text. Counts are cast to BIGINT so pandas sees integers, not floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..contract import Store
from ..memories.predicates import Moment, approved_source
from ..memories.vote_rows import ACTIVE, VOTES_NOW
from .rewind import rewound

__all__ = [
    "DIMENSIONS",
    "PERIODS",
    "agreement_votes",
    "backlog",
    "injections_per_memory",
    "judged_candidates",
    "judging",
    "judging_totals",
    "matching",
    "outcomes",
    "reproposals",
    "reviewer_activity",
    "time_to_decision",
]

#: The periods a backlog can be counted by.
PERIODS = ("hour", "day", "week", "month")
_COMMON = ("model", "provider", "prompt_version", "npc", "team", "category", "scope")
#: For each source, the dimensions it can be grouped by and their SQL expressions.
DIMENSIONS: dict[str, dict[str, str]] = {
    "memories": {
        **{d: d for d in _COMMON},
        "reviewer": "reviewer",
        "day": "date_trunc('day', recorded_at)",
        "week": "date_trunc('week', recorded_at)",
        "month": "date_trunc('month', recorded_at)",
    },
    "reproposals": {
        **{d: d for d in _COMMON},
        "day": "date_trunc('day', recorded_at)",
        "week": "date_trunc('week', recorded_at)",
        "month": "date_trunc('month', recorded_at)",
    },
    "matching": {
        **{d: d for d in _COMMON},
        "matcher": "matcher",
        "verdict": "verdict",
        "outcome": "outcome",
        "day": "date_trunc('day', recorded_at)",
        "week": "date_trunc('week', recorded_at)",
        "month": "date_trunc('month', recorded_at)",
    },
    "decisions": {
        **{d: d for d in _COMMON},
        "reviewer": "reviewer",
        "day": "date_trunc('day', occurred_at)",
        "week": "date_trunc('week', occurred_at)",
        "month": "date_trunc('month', occurred_at)",
    },
    # A vote's card: the period is the card's (when it was proposed), as for memories.
    "votes": {
        **{d: f"m.{d}" for d in _COMMON},
        "day": "date_trunc('day', m.recorded_at)",
        "week": "date_trunc('week', m.recorded_at)",
        "month": "date_trunc('month', m.recorded_at)",
    },
}
#: Final decisions: a reviewer's, an agreement of votes, an adjudication.
_DECISION_ACTIONS = "('approve', 'reject', 'edit', 'approve_all', 'agree', 'adjudicate')"
#: What a reviewer does to one card: a decision, or in independent review a vote.
_CARD_ACTIONS = (
    "('approve', 'reject', 'edit', 'skip', 'defer', 'vote', 'replace_vote', 'adjudicate')"
)
_NOT_UNDONE = "NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq)"


def _select(source: str, by: Sequence[str]) -> tuple[str, str]:
    """('expr AS name, ...', 'GROUP BY ...') for already validated dimension names."""
    if not by:
        return "", ""
    exprs = [f"{DIMENSIONS[source][name]} AS {name}" for name in by]
    return ", ".join(exprs) + ", ", "GROUP BY " + ", ".join(str(i + 1) for i in range(len(by)))


def _order(by: Sequence[str]) -> str:
    return "ORDER BY " + ", ".join(str(i + 1) for i in range(len(by))) if by else ""


def matching(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    """Per group of automatic outcomes (merged, suppressed, reinforced): how many there
    were, how many a reviewer checked, and how many a reviewer put back (split off a
    card, or requeued). Checked: listed to a reviewer, put back, or (merged) shown on a
    card that has since been decided."""
    dims, group = _select("matching", by)
    return _frame(
        store,
        moment,
        f"""SELECT {dims}
            count(*)::BIGINT AS automatic,
            count(*) FILTER (WHERE checked)::BIGINT AS checked,
            count(*) FILTER (WHERE label IS NOT NULL)::BIGINT AS put_back,
            count(*) FILTER (WHERE label = 'split')::BIGINT AS split,
            count(*) FILTER (WHERE label = 'requeued')::BIGINT AS requeued
        FROM (
            SELECT r.*, r.label IS NOT NULL OR r.listed_at IS NOT NULL
                OR (r.outcome = 'merged' AND m.status NOT IN ('pending_approval', 'deferred'))
                AS checked
            FROM v_reproposals r LEFT JOIN memories m ON m.id = r.memory_id
            WHERE r.outcome IN ('merged', 'suppressed', 'reinforced')
        ) {group} {_order(by)}""",
    )


#: Every candidate a matcher judged or looked up neighbours for: re-proposals matched
#: by a matcher, and queued candidates (``outcome`` 'queued'), with what it cost.
_JUDGED = """(
    SELECT id, recorded_at, matcher, verdict, outcome, extractor_model AS model, provider,
        prompt_version, npc, team, category, scope, proposed_text AS text, match_neighbours,
        match_calls, match_tokens, match_ms, match_error
    FROM reproposals WHERE match_type = 'near'
    UNION ALL
    SELECT id, recorded_at, matcher, verdict, 'queued' AS outcome, extractor_model AS model,
        provider, prompt_version, npc, team, category, scope, initial_text AS text,
        match_neighbours, match_calls, match_tokens, match_ms, match_error
    FROM memories WHERE matcher IS NOT NULL
)"""


def judging(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    """Per group of judged candidates (queued ones included): how many a matcher judged,
    the model judge's calls and tokens, the mean milliseconds of judging one, and the
    matchers' failures (a model judge's fell back to the offline matcher)."""
    dims, group = _select("matching", by)
    return _frame(
        store,
        moment,
        f"""SELECT {dims}
            count(*) FILTER (WHERE match_ms IS NOT NULL OR match_error IS NOT NULL)::BIGINT
                AS judged,
            coalesce(sum(match_calls), 0)::BIGINT AS calls,
            coalesce(sum(match_tokens), 0)::BIGINT AS tokens,
            avg(match_ms) AS latency_ms,
            count(*) FILTER (WHERE match_error IS NOT NULL)::BIGINT AS failures
        FROM {_JUDGED} {group} {_order(by)}""",
    )


def judging_totals(store: Store) -> dict[str, float]:
    """The model judge's work over the whole store: calls, tokens, failures."""
    found = store.dataframe(
        f"""SELECT coalesce(sum(match_calls), 0)::BIGINT AS calls,
            coalesce(sum(match_tokens), 0)::BIGINT AS tokens,
            count(*) FILTER (WHERE match_error IS NOT NULL)::BIGINT AS failures
        FROM {_JUDGED}"""
    )
    return {column: int(found[column].iloc[0]) for column in found.columns}


def judged_candidates(
    store: Store, moment: Moment | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What neighbour recall is measured from: every candidate whose neighbours were
    looked up (with the ids shown, and each grouping column), and every memory (id,
    texts, who may see it, when it was recorded and superseded), now or at ``moment``."""
    dims = ", ".join(f"{expr} AS {name}" for name, expr in DIMENSIONS["matching"].items())
    candidates = _frame(
        store,
        moment,
        f"SELECT id, recorded_at, text, match_neighbours, {dims} FROM {_JUDGED} "
        "WHERE match_neighbours IS NOT NULL ORDER BY recorded_at, id",
    )
    memories = _frame(
        store,
        moment,
        "SELECT id, initial_text, final_text, scope, npc, team, recorded_at, superseded_at "
        "FROM memories ORDER BY recorded_at, id",
    )
    return candidates, memories


#: An approval with the reviewer's own text. Another wording the model proposed for the
#: card is not one (``other_wording``), also where an older npc_nb recorded it as an edit.
_EDITED = "((outcome = 'edited' AND NOT other_wording) OR (outcome = 'superseded' AND edited))"


def outcomes(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    """Per group: proposed, decided, approved, edited, other_wording (approved as
    another wording the model proposed for the card), rejected, open, mean text change.

    Only proposed memories count (not the versions a supersede creates); a superseded
    one was approved before it was revised.
    """
    dims, group = _select("memories", by)
    return _frame(
        store,
        moment,
        f"""SELECT {dims}
            count(*)::BIGINT AS proposed,
            count(*) FILTER (WHERE outcome <> 'open')::BIGINT AS decided,
            count(*) FILTER (WHERE outcome IN ('approved', 'edited', 'superseded'))::BIGINT
                AS approved,
            count(*) FILTER (WHERE {_EDITED})::BIGINT AS edited,
            count(*) FILTER (WHERE other_wording)::BIGINT AS other_wording,
            count(*) FILTER (WHERE outcome = 'rejected')::BIGINT AS rejected,
            count(*) FILTER (WHERE outcome = 'open')::BIGINT AS open,
            avg(text_change) FILTER (WHERE {_EDITED}) AS mean_text_change
        FROM v_memories WHERE origin = 'extracted' {group} {_order(by)}""",
    )


def reproposals(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    """Per group: how many re-proposals matched rejected, approved and pending memories,
    and how many reinforced an approved one."""
    dims, group = _select("reproposals", by)
    return _frame(
        store,
        moment,
        f"""SELECT {dims}
            count(*)::BIGINT AS reproposals,
            count(*) FILTER (WHERE kind = 'rejected')::BIGINT AS rejected,
            count(*) FILTER (WHERE kind = 'approved')::BIGINT AS approved,
            count(*) FILTER (WHERE kind = 'pending')::BIGINT AS pending,
            count(*) FILTER (WHERE outcome = 'reinforced')::BIGINT AS reinforced
        FROM v_reproposals {group} {_order(by)}""",
    )


def backlog(store: Store, period: str, moment: Moment | None = None) -> pd.DataFrame:
    """Per period: candidates proposed, candidates decided, and the backlog at its end."""
    if period not in PERIODS:  # it goes into the SQL: checked here too
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, not {period!r}")
    open_statuses = "('pending_approval', 'deferred')"
    return _frame(
        store,
        moment,
        f"""WITH changes AS (
            SELECT date_trunc('{period}', occurred_at) AS period,
                count(*) FILTER (WHERE from_status IS NULL
                                 AND to_status IN {open_statuses})::BIGINT AS proposed,
                count(*) FILTER (WHERE from_status IN {open_statuses}
                                 AND to_status NOT IN {open_statuses})::BIGINT AS closed,
                sum((to_status IN {open_statuses})::INTEGER
                    - coalesce(from_status IN {open_statuses}, false)::INTEGER) AS change
            FROM memory_events GROUP BY 1)
        SELECT period, proposed, closed,
            (sum(change) OVER (ORDER BY period))::BIGINT AS backlog
        FROM changes ORDER BY period""",
    )


def time_to_decision(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    """Per group: hours from proposal to the first decision that was not undone."""
    dims, group = _select("memories", by)
    return _frame(
        store,
        moment,
        f"""WITH first_decision AS (
            SELECT memory_id, min(occurred_at) AS at FROM memory_events e
            WHERE action IN {_DECISION_ACTIONS} AND {_NOT_UNDONE} GROUP BY memory_id)
        SELECT {dims}
            count(*)::BIGINT AS decided,
            median(date_diff('millisecond', recorded_at, f.at)) / 3.6e6 AS median_hours,
            avg(date_diff('millisecond', recorded_at, f.at)) / 3.6e6 AS mean_hours,
            quantile_cont(date_diff('millisecond', recorded_at, f.at), 0.9) / 3.6e6
                AS p90_hours
        FROM v_memories JOIN first_decision f ON f.memory_id = id
        WHERE origin = 'extracted' {group} {_order(by)}""",
    )


def reviewer_activity(
    store: Store, by: Sequence[str], sitting_gap_ms: int, moment: Moment | None = None
) -> pd.DataFrame:
    """Per group: cards decided, active review time, and the median time per card.

    Active time sums the gaps between a reviewer's consecutive cards, leaving out gaps
    longer than ``sitting_gap_ms`` (a break). Time per card is what the review panel
    measured, else that gap. Batch approvals (approve_all) are counted apart. Reads the
    audit log directly (no join) unless a dimension needs the memory's attributes.
    """
    dims, group = _select("decisions", by)
    source = _decision_source(by)
    return _frame(
        store,
        moment,
        f"""WITH cards AS (
            SELECT *, date_diff('millisecond', lag(occurred_at) OVER (
                    PARTITION BY reviewer ORDER BY seq), occurred_at) AS gap_ms
            FROM {source} WHERE action IN {_CARD_ACTIONS}),
        in_sitting AS (
            SELECT *, CASE WHEN gap_ms <= {int(sitting_gap_ms)} THEN gap_ms END AS active_ms
            FROM cards)
        SELECT {dims}
            count(*)::BIGINT AS cards,
            coalesce(sum(active_ms), 0)::BIGINT AS active_ms,
            median(coalesce(time_spent_ms, active_ms)) / 1000.0 AS median_seconds_per_card
        FROM in_sitting {group} {_order(by)}""",
    )


def _decision_source(by: Sequence[str]) -> str:
    """The audit events, with the memory's attributes joined only when grouping needs them."""
    if set(by) <= {"reviewer", "day", "week", "month"}:
        return (
            "(SELECT seq, occurred_at, actor AS reviewer, action, time_spent_ms, batch_id "
            "FROM memory_events)"
        )
    return "v_decisions"


def batch_approvals(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    dims, group = _select("decisions", by)
    return _frame(
        store,
        moment,
        f"""SELECT {dims} count(DISTINCT batch_id)::BIGINT AS batch_approvals,
            count(*)::BIGINT AS batch_approved_memories
        FROM {_decision_source(by)} WHERE action = 'approve_all' {group} {_order(by)}""",
    )


def injections_per_memory(store: Store, moment: Moment | None = None) -> pd.DataFrame:
    """Every currently approved memory: how many prompts it went into, first and last.

    A memory appears at most once in a prompt, so the count is also the number of
    replies it shaped.
    """
    approved, params = approved_source(moment)
    return _frame(
        store,
        moment,
        f"""WITH used AS (
            SELECT memory_id, count(*)::BIGINT AS injections, min(injected_at) AS first_injected,
                max(injected_at) AS last_injected
            FROM context_injections GROUP BY memory_id)
        SELECT approved.id AS memory_id, approved.final_text, approved.npc, approved.scope,
            approved.category, coalesce(u.injections, 0)::BIGINT AS injections,
            u.first_injected, u.last_injected
        FROM {approved} LEFT JOIN used u ON u.memory_id = approved.id
        ORDER BY injections DESC, memory_id""",
        params,
    )


def _frame(
    store: Store, moment: Moment | None, sql: str, params: dict[str, Any] | None = None
) -> pd.DataFrame:
    """The query's result, now or as the store stood at ``moment`` (``rewind``)."""
    query, rewound_params = rewound(sql, moment)
    return store.dataframe(query, (params or {}) | rewound_params)


def agreement_votes(store: Store, by: Sequence[str], moment: Moment | None = None) -> pd.DataFrame:
    """Every vote that counts (neither replaced nor withdrawn), one row each: its card
    and round as one ``item``, the ``reviewer``, the ``decision``, and the card's
    attributes named by ``by`` (``DIMENSIONS["votes"]``), now or at ``moment`` (the
    votes cast by then, as they stood). The input of the agreement statistics
    (``analytics.agreement.agreement_from``)."""
    dims = "".join(f", {DIMENSIONS['votes'][name]} AS {name}" for name in by)
    return _frame(
        store,
        moment,
        f"""SELECT v.memory_id || ':' || CAST(v.round AS VARCHAR) AS item, v.reviewer,
            v.decision{dims}
        FROM {VOTES_NOW} v JOIN v_memories m ON m.id = v.memory_id
        WHERE {ACTIVE}
        ORDER BY v.memory_id, v.round, v.voted_at, v.id""",
    )
