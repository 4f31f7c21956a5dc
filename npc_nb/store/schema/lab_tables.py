"""The research layer's tables, declared once for both backends: snapshots and
recorded replies, votes and the review policy, extraction experiments.

As in ``tables``: columns in the order a store has them, every closed set a
``OneOf`` over ``npc_nb.vocabulary`` (the experiments' included). What PostgreSQL adds
to them (append-only triggers, the votes' row-level security, the role a row is
recorded under) is in ``pg_extras``.
"""

from __future__ import annotations

from ...vocabulary import (
    EXPERIMENT_ITEM_OUTCOMES,
    EXPERIMENT_JOB_STATES,
    EXPERIMENT_STATES,
    POLICY_KEYS,
    PROMOTION_OUTCOMES,
    VOTE_DECISIONS,
)
from .model import Column, OneOf, Table

__all__ = ["LAB_TABLES"]

LAB_TABLES = (
    Table(
        "snapshots",
        (
            Column("id", "VARCHAR"),
            Column("label", "VARCHAR"),
            Column("taken_at", "TIMESTAMP", not_null=True),
            Column("taken_by", "VARCHAR", not_null=True),
            Column("event_seq", "BIGINT", not_null=True),
            Column("user_event_seq", "BIGINT", not_null=True),
            Column("content_hash", "VARCHAR", not_null=True),
            Column("memories", "BIGINT", not_null=True),
            Column("event_floor", "BIGINT", default="0"),
        ),
        primary_key=("id",),
        unique=(("label",),),
        doc="A named store time and the hash of what was approved then.",
    ),
    Table(
        "model_recordings",
        (
            Column("id", "VARCHAR"),
            Column("fingerprint", "VARCHAR", not_null=True),
            Column("model", "VARCHAR", not_null=True),
            Column("caller", "VARCHAR"),
            Column("request", "VARCHAR", not_null=True),
            Column("reply", "VARCHAR", not_null=True),
            Column("prompt_tokens", "BIGINT"),
            Column("completion_tokens", "BIGINT"),
            Column("recorded_at", "TIMESTAMP", not_null=True),
            Column("chain_seq", "BIGINT"),
            Column("chain_hash", "VARCHAR"),
        ),
        primary_key=("id",),
        doc="Recorded model replies, keyed by a fingerprint of the request, hash-chained.",
    ),
    Table(
        "votes",
        (
            Column("id", "VARCHAR"),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("round", "INTEGER", not_null=True),
            Column("reviewer", "VARCHAR", not_null=True),
            Column("decision", "VARCHAR", not_null=True),
            Column("final_text", "VARCHAR"),
            Column("final_hash", "VARCHAR"),
            Column("wording", "VARCHAR"),
            Column("reason", "VARCHAR"),
            Column("defer_until", "TIMESTAMP"),
            Column("time_spent_ms", "BIGINT"),
            Column("review_session", "VARCHAR"),
            Column("voted_at", "TIMESTAMP", not_null=True),
            Column("event_seq", "BIGINT", not_null=True),
            Column("reviewer_role", "VARCHAR", pg_default="SESSION_USER"),
            Column("closes_round", "BOOLEAN", default="FALSE"),
            Column("chain_seq", "BIGINT"),
            Column("chain_hash", "VARCHAR"),
        ),
        primary_key=("id",),
        checks=(OneOf("decision", VOTE_DECISIONS),),
        doc="The votes of independent review, append-only and hash-chained.",
    ),
    Table(
        "review_policy",
        (
            Column("id", "VARCHAR"),
            Column("key", "VARCHAR", not_null=True),
            Column("value", "VARCHAR", not_null=True),
            Column("set_at", "TIMESTAMP", not_null=True),
            Column("set_by", "VARCHAR", not_null=True),
            Column("reviewer_role", "VARCHAR"),
        ),
        primary_key=("id",),
        checks=(OneOf("key", POLICY_KEYS),),
        doc="The lab's review policy: an append-only list of changes, one key a row.",
    ),
    Table(
        "experiments",
        (
            Column("id", "VARCHAR"),
            Column("name", "VARCHAR", not_null=True),
            Column("npc", "VARCHAR"),
            Column("seed", "BIGINT", not_null=True),
            Column("selection", "VARCHAR", not_null=True),
            Column("exchanges", "BIGINT", not_null=True),
            Column("state", "VARCHAR", not_null=True),
            Column("created_at", "TIMESTAMP", not_null=True),
            Column("created_by", "VARCHAR", not_null=True),
        ),
        primary_key=("id",),
        unique=(("name",),),
        checks=(OneOf("state", EXPERIMENT_STATES),),
        doc="Extraction experiments: the conversations selected and the seed.",
    ),
    Table(
        "experiment_arms",
        (
            Column("id", "VARCHAR"),
            Column("experiment_id", "VARCHAR", not_null=True),
            Column("name", "VARCHAR", not_null=True),
            Column("position", "INTEGER", not_null=True),
            Column("config", "VARCHAR", not_null=True),
            Column("config_hash", "VARCHAR", not_null=True),
        ),
        primary_key=("id",),
        unique=(("experiment_id", "name"),),
        doc="An experiment's arms: a named configuration and its hash.",
    ),
    Table(
        "experiment_jobs",
        (
            Column("arm_id", "VARCHAR", not_null=True),
            Column("message_id", "VARCHAR", not_null=True),
            Column("experiment_id", "VARCHAR", not_null=True),
            Column("conversation_id", "VARCHAR", not_null=True),
            Column("user_message_id", "VARCHAR", not_null=True),
            Column("npc", "VARCHAR", not_null=True),
            Column("team", "VARCHAR"),
            Column("position", "INTEGER", not_null=True),
            Column("state", "VARCHAR", not_null=True),
            Column("attempts", "INTEGER", not_null=True),
            Column("error", "VARCHAR"),
            Column("raw_output", "VARCHAR"),
            Column("candidates", "INTEGER"),
            Column("claimed_by", "VARCHAR"),
            Column("finished_at", "TIMESTAMP"),
        ),
        primary_key=("arm_id", "message_id"),
        checks=(OneOf("state", EXPERIMENT_JOB_STATES),),
        doc="An experiment's work list: one row per arm and exchange.",
    ),
    Table(
        "experiment_items",
        (
            Column("arm_id", "VARCHAR", not_null=True),
            Column("message_id", "VARCHAR", not_null=True),
            Column("item", "INTEGER", not_null=True),
            Column("outcome", "VARCHAR", not_null=True),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("recorded_at", "TIMESTAMP", not_null=True),
        ),
        primary_key=("arm_id", "message_id", "item"),
        checks=(OneOf("outcome", EXPERIMENT_ITEM_OUTCOMES),),
        doc="What each item of an arm's extraction became (one row per arm, exchange and item).",
    ),
    Table(
        "experiment_reviews",
        (
            Column("id", "VARCHAR"),
            Column("experiment_id", "VARCHAR", not_null=True),
            Column("opened_at", "TIMESTAMP", not_null=True),
            Column("opened_by", "VARCHAR", not_null=True),
            Column("seed", "BIGINT", not_null=True),
            Column("hidden", "VARCHAR", not_null=True),
            Column("card_order", "VARCHAR", not_null=True),
        ),
        primary_key=("id",),
        doc="Each blind review of an experiment: its seed, what it hid and its card order.",
    ),
    Table(
        "experiment_promotions",
        (
            Column("arm_id", "VARCHAR", not_null=True),
            Column("memory_id", "VARCHAR", not_null=True),
            Column("outcome", "VARCHAR", not_null=True),
            Column("live_memory_id", "VARCHAR"),
            Column("promoted_by", "VARCHAR", not_null=True),
            Column("promoted_at", "TIMESTAMP", not_null=True),
        ),
        primary_key=("arm_id", "memory_id"),
        checks=(OneOf("outcome", PROMOTION_OUTCOMES),),
        doc="What promotion did with each approved memory of an arm.",
    ),
)
