"""SQL for the experiment tables: experiments, arms, the work list, items, reviews,
promotions (``schema.lab_tables`` says what each holds).

The work list is claimed one job at a time, like the extraction queue; a job a killed
kernel left ``running`` is queued again when the experiment runs again, and its items
already recorded (``experiment_items``, written with their candidates) are not proposed
again.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pandas as pd

from ..contract import Connection, Store, frame, insert_row, rows, scalar
from ..memories.predicates import approved_now

__all__ = [
    "approved_in_arm",
    "arm_counts",
    "card_items",
    "claim_next",
    "count_open",
    "create",
    "exchanges",
    "find",
    "finish",
    "items_done",
    "listing",
    "promoted",
    "record_item",
    "record_promotion",
    "record_review",
    "requeue_unfinished",
    "set_state",
]


def exchanges(store: Store, selection: dict[str, Any]) -> list[dict]:
    """The stored exchanges (an assistant message and the user message before it) that
    ``selection`` picks: conversation ``ids``, a persona (``npc``), a time range
    (``since``, ``until``: the conversation's start); in conversation, then time order."""
    clauses, params = ["m.role = 'assistant'", "m.previous_role = 'user'"], {}
    for key, clause in (
        ("npc", "c.npc = $npc"),
        ("since", "c.started_at >= $since"),
        ("until", "c.started_at < $until"),
    ):
        if selection.get(key) is not None:
            clauses.append(clause)
            params[key] = selection[key]
    if selection.get("ids") is not None:
        clauses.append("c.id = ANY($ids)")
        params["ids"] = list(selection["ids"])
    sql = (
        "WITH m AS (SELECT id, conversation_id, role, created_at, "
        "lag(id) OVER w AS previous_id, lag(role) OVER w AS previous_role FROM messages "
        "WINDOW w AS (PARTITION BY conversation_id ORDER BY created_at, id)) "
        "SELECT m.id AS message_id, m.previous_id AS user_message_id, m.conversation_id, "
        "c.npc, c.team FROM m JOIN conversations c ON c.id = m.conversation_id "
        f"WHERE {' AND '.join(clauses)} ORDER BY c.started_at, c.id, m.created_at, m.id"
    )
    with store.read() as con:
        return rows(con, sql, params)


def create(store: Store, experiment: dict, arms: list[dict], jobs: list[dict]) -> None:
    """An experiment, its arms and its work list, in one transaction."""
    with store.write() as con:
        insert_row(con, "experiments", experiment)
        for arm in arms:
            insert_row(con, "experiment_arms", arm)
        for job in jobs:
            insert_row(con, "experiment_jobs", job)


def find(store: Store, name: str) -> tuple[dict, list[dict]] | None:
    """The experiment named ``name`` and its arms (in order), or None."""
    if not store.exists:
        return None
    with store.read() as con:
        found = rows(con, "SELECT * FROM experiments WHERE name = ?", [name])
        if not found:
            return None
        arms = rows(
            con,
            "SELECT * FROM experiment_arms WHERE experiment_id = ? ORDER BY position",
            [found[0]["id"]],
        )
    return found[0], arms


def listing(store: Store) -> pd.DataFrame:
    """Every experiment with its state, arms, exchanges, jobs and cards."""
    sql = """SELECT e.name, e.state, e.npc, e.seed, e.exchanges,
            (SELECT count(*) FROM experiment_arms a WHERE a.experiment_id = e.id) AS arms,
            (SELECT count(*) FROM experiment_jobs j WHERE j.experiment_id = e.id
                AND j.state = 'done') AS jobs_done,
            (SELECT count(*) FROM experiment_jobs j WHERE j.experiment_id = e.id
                AND j.state = 'failed') AS jobs_failed,
            (SELECT count(*) FROM experiment_jobs j WHERE j.experiment_id = e.id) AS jobs,
            (SELECT count(*) FROM memories m JOIN experiment_arms a ON a.id = m.experiment_arm
                WHERE a.experiment_id = e.id) AS cards,
            (SELECT count(*) FROM memories m JOIN experiment_arms a ON a.id = m.experiment_arm
                WHERE a.experiment_id = e.id AND m.status IN ('pending_approval', 'deferred'))
                AS open_cards,
            e.created_at, e.created_by
        FROM experiments e ORDER BY e.created_at, e.name"""
    if not store.exists:
        return pd.DataFrame(columns=["name", "state", "npc", "seed", "exchanges", "arms"])
    with store.read() as con:
        return frame(con.execute(sql))


def set_state(store: Store, experiment_id: str, state: str) -> None:
    with store.write() as con:
        con.execute("UPDATE experiments SET state = ? WHERE id = ?", [state, experiment_id])


def requeue_unfinished(store: Store, experiment_id: str, *, failed: bool = False) -> int:
    """Queue again the jobs left running (a killed kernel's), and with ``failed`` the
    failed ones; returns how many."""
    states = ["running", "failed"] if failed else ["running"]
    with store.write() as con:
        return len(
            con.execute(
                "UPDATE experiment_jobs SET state = 'queued', claimed_by = NULL "
                "WHERE experiment_id = ? AND state = ANY(?) RETURNING arm_id",
                [experiment_id, states],
            ).fetchall()
        )


def claim_next(store: Store, experiment_id: str, claimed_by: str) -> dict | None:
    """Claim the next queued job of the experiment (work list order); None when none."""
    while True:
        with store.write() as con:
            found = rows(
                con,
                "SELECT * FROM experiment_jobs WHERE experiment_id = ? AND state = 'queued' "
                "ORDER BY position LIMIT 1",
                [experiment_id],
            )
            if not found:
                return None
            job = found[0]
            won = con.execute(
                "UPDATE experiment_jobs SET state = 'running', attempts = attempts + 1, "
                "claimed_by = ? WHERE arm_id = ? AND message_id = ? AND state = 'queued' "
                "RETURNING arm_id",
                [claimed_by, job["arm_id"], job["message_id"]],
            ).fetchall()
        if won:
            return job | {"state": "running", "attempts": job["attempts"] + 1}


def finish(store: Store, job: dict, *, state: str, now: datetime, **recorded: Any) -> None:
    """Record how a job ended (``error``, ``raw_output``, ``candidates``)."""
    with store.write() as con:
        con.execute(
            "UPDATE experiment_jobs SET state = ?, error = ?, raw_output = ?, candidates = ?, "
            "finished_at = ?, claimed_by = NULL WHERE arm_id = ? AND message_id = ?",
            [
                state,
                recorded.get("error"),
                recorded.get("raw_output"),
                recorded.get("candidates"),
                now,
                job["arm_id"],
                job["message_id"],
            ],
        )


def record_item(con: Connection, item: tuple[str, str, int], outcome: str, memory_id: str) -> None:
    """One proposed item of an arm's answer, in the transaction that wrote its candidate."""
    from ..._foundations.utc import utc_now

    arm, message, index = item
    insert_row(
        con,
        "experiment_items",
        {
            "arm_id": arm,
            "message_id": message,
            "item": index,
            "outcome": outcome,
            "memory_id": memory_id,
            "recorded_at": utc_now(),
        },
    )


def items_done(store: Store, arm_id: str, message_id: str) -> set[int]:
    """The items of this job already proposed (by a run a killed kernel interrupted)."""
    with store.read() as con:
        found = con.execute(
            "SELECT item FROM experiment_items WHERE arm_id = ? AND message_id = ?",
            [arm_id, message_id],
        ).fetchall()
    return {item for (item,) in found}


def arm_counts(store: Store, experiment_id: str) -> list[dict]:
    """Per arm: jobs queued, running, done, failed, candidates proposed, the last error."""
    with store.read() as con:
        return rows(
            con,
            """SELECT a.name AS arm, a.position,
                count(*) FILTER (WHERE j.state = 'queued') AS queued,
                count(*) FILTER (WHERE j.state = 'running') AS running,
                count(*) FILTER (WHERE j.state = 'done') AS done,
                count(*) FILTER (WHERE j.state = 'failed') AS failed,
                (SELECT count(*) FROM experiment_items i WHERE i.arm_id = a.id) AS candidates,
                max(j.error) FILTER (WHERE j.state = 'failed') AS last_error
            FROM experiment_arms a LEFT JOIN experiment_jobs j ON j.arm_id = a.id
            WHERE a.experiment_id = ? GROUP BY a.id, a.name, a.position ORDER BY a.position""",
            [experiment_id],
        )


def record_review(store: Store, review: dict) -> None:
    """A blind review as it was opened: its order and what it hid (JSON lists)."""
    with store.write() as con:
        insert_row(
            con,
            "experiment_reviews",
            review | {k: json.dumps(review[k]) for k in ("hidden", "card_order")},
        )


def promoted(store: Store, arm_id: str) -> dict[str, dict]:
    """{arm memory id: its promotion row} of the arm's memories promoted so far."""
    with store.read() as con:
        found = rows(con, "SELECT * FROM experiment_promotions WHERE arm_id = ?", [arm_id])
    return {row["memory_id"]: row for row in found}


def record_promotion(store: Store, promotion: dict) -> None:
    with store.write() as con:
        insert_row(con, "experiment_promotions", promotion)


def count_open(store: Store, arm_ids: list[str]) -> int:
    """The open cards of these arms."""
    with store.read() as con:
        return int(
            scalar(
                con,
                "SELECT count(*) FROM memories WHERE experiment_arm = ANY(?) "
                "AND status IN ('pending_approval', 'deferred')",
                [arm_ids],
            )
        )


def card_items(store: Store, experiment_id: str) -> list[tuple[str, str, str, int]]:
    """(memory id, arm name, exchange message id, item) of each card the arms queued."""
    with store.read() as con:
        return con.execute(
            "SELECT i.memory_id, a.name, i.message_id, i.item FROM experiment_items i "
            "JOIN experiment_arms a ON a.id = i.arm_id WHERE a.experiment_id = ? "
            "AND i.outcome = 'queued'",
            [experiment_id],
        ).fetchall()


def approved_in_arm(store: Store, arm_id: str) -> list[dict]:
    """The arm's approved memories now (the approval predicate, for that arm's pool)."""
    where, params = approved_now(arm_id)
    with store.read() as con:
        return rows(con, f"SELECT * FROM memories WHERE {where} ORDER BY recorded_at, id", params)
