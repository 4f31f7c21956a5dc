"""The votes table of independent review and the audit log it widened (``m021_votes``),
and the votes made append-only and blind in the store (``m026_blind_votes``).

DuckDB cannot change a CHECK, so ``m021`` copies the audit log into a table with the
wider set of actions (``EVENTS_TABLE_M021``), every event and its ``seq`` as they were
(``EVENT_COLUMNS_M016``), and renames it. ``VOTES_TABLE`` is the same on both backends.

Who recorded a row, and the lab's review policy (``m024_reviewer_identity``,
``m025_review_policy``), live here too:
``reviewer_role`` sits beside the display name on ``votes`` (``reviewer``) and on
``memory_events`` (``actor``). On PostgreSQL it is the authenticated role
(``session_user``): a trigger writes it on every insert by a role that does not own the
project, and refuses a row that names another role, so no reviewer can record a row
under another role, whatever SQL it sends;
the owner may copy rows as they were (a bundle, a moved store, NULL included), and a
row that leaves the column out gets the connected role (the column's default). On a
DuckDB file it is the reviewer setting, written by npc_nb (one user's file: trusted).
Rows written before ``m024`` keep NULL: nobody knows.

``review_policy`` is an append-only list of policy changes (one key a row: what was
set, when, by whom, as which role); the policy in force is each key's latest row, so
the table is its own audit trail. On PostgreSQL only the project's owner may insert,
and nobody may update or delete.
"""

from __future__ import annotations

from ...vocabulary import EVENT_ACTIONS, STATUSES, VOTE_DECISIONS
from .initial_tables import one_of

__all__ = [
    "BLIND_VOTES_M026",
    "EVENTS_TABLE_M021",
    "EVENT_COLUMNS_M016",
    "PG_BLIND_VOTES_M026",
    "PG_OWNER_ONLY",
    "PG_REVIEWER_ROLE",
    "PG_REVIEWER_ROLE_TRIGGERS",
    "POLICY_TABLE",
    "REVIEWER_ROLE_COLUMNS",
    "VOTES_TABLE",
    "pg_policy_guards",
]

#: The votes of independent review (``m021_votes``), the same on both backends: one row
#: per vote, never deleted. A vote's own columns are written once; the markers say
#: what became of it (replaced by the voter's next vote, withdrawn by undo, or settled by
#: the event that made its round final).
VOTES_TABLE = f"""CREATE TABLE votes (
    id VARCHAR PRIMARY KEY,
    memory_id VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    decision VARCHAR NOT NULL {one_of("decision", VOTE_DECISIONS)},
    final_text VARCHAR,
    final_hash VARCHAR,
    wording VARCHAR,
    reason VARCHAR,
    defer_until TIMESTAMP,
    time_spent_ms BIGINT,
    review_session VARCHAR,
    voted_at TIMESTAMP NOT NULL,
    event_seq BIGINT NOT NULL,
    replaced_by VARCHAR,
    withdrawn_at TIMESTAMP,
    settled_seq BIGINT
)"""

#: ``memory_events`` as ``m016`` left it (``m017`` to ``m020`` kept it): the columns
#: ``m021`` copies into its new table.
EVENT_COLUMNS_M016 = (
    "seq, memory_id, occurred_at, actor, action, from_status, to_status, text_before, "
    "text_after, reason, batch_id, undoes, lead_time_ms, time_spent_ms, review_session, "
    "state_before, wording"
)

#: ``memory_events`` with the vote actions in its CHECK and the vote an event records
#: (``vote_id``), created beside the old one and renamed to it.
EVENTS_TABLE_M021 = f"""CREATE TABLE memory_events_m021 (
            seq BIGINT PRIMARY KEY,
            memory_id VARCHAR NOT NULL,
            occurred_at TIMESTAMP NOT NULL,
            actor VARCHAR NOT NULL,
            action VARCHAR NOT NULL {one_of("action", EVENT_ACTIONS)},
            from_status VARCHAR,
            to_status VARCHAR NOT NULL {one_of("to_status", STATUSES)},
            text_before VARCHAR,
            text_after VARCHAR,
            reason VARCHAR,
            batch_id VARCHAR,
            undoes BIGINT,
            lead_time_ms BIGINT,
            time_spent_ms BIGINT,
            review_session VARCHAR,
            state_before VARCHAR,
            wording VARCHAR,
            vote_id VARCHAR
        )"""


#: ``m026_blind_votes`` on DuckDB: the markers a vote's later fate was written into go
#: (``store.memories.vote_rows`` reads it from later votes and the audit log); a vote
#: records who is connected (``reviewer_role``, unless a migration before added it) and
#: whether it completed its round (``closes_round``). DuckDB refuses to alter a table
#: an index depends on: the index is made again.
BLIND_VOTES_M026 = (
    "DROP INDEX votes_memory",
    "ALTER TABLE votes DROP COLUMN replaced_by",
    "ALTER TABLE votes DROP COLUMN withdrawn_at",
    "ALTER TABLE votes DROP COLUMN settled_seq",
    "ALTER TABLE votes ADD COLUMN IF NOT EXISTS reviewer_role VARCHAR",
    "ALTER TABLE votes ADD COLUMN closes_round BOOLEAN DEFAULT FALSE",
    "CREATE INDEX votes_memory ON votes (memory_id)",
)

#: ``m026_blind_votes`` on PostgreSQL (``{schema}``: the project's schema, a safe
#: identifier): the same columns, a vote attributed to the role that cast it, votes
#: append-only for every role, and row-level security. The table's owner (the project's
#: owner) reads every vote; any other role reads its own votes, every vote of a settled
#: round, and, if it may vote (INSERT on votes), every vote of a complete round (to
#: adjudicate it). Who voted in open rounds, never how, comes through
#: ``npc_nb_open_ballots()``, which runs as the owner.
PG_BLIND_VOTES_M026 = (
    "ALTER TABLE votes DROP COLUMN replaced_by, DROP COLUMN withdrawn_at, DROP COLUMN settled_seq",
    "ALTER TABLE votes ADD COLUMN IF NOT EXISTS reviewer_role VARCHAR",
    "ALTER TABLE votes ALTER COLUMN reviewer_role SET DEFAULT session_user",
    "ALTER TABLE votes ADD COLUMN closes_round BOOLEAN DEFAULT FALSE",
    "CREATE TRIGGER votes_no_change BEFORE UPDATE OR DELETE ON votes "
    "FOR EACH ROW EXECUTE FUNCTION npc_nb_append_only()",
    "CREATE TRIGGER votes_no_truncate BEFORE TRUNCATE ON votes "
    "FOR EACH STATEMENT EXECUTE FUNCTION npc_nb_append_only()",
    """CREATE FUNCTION npc_nb_vote_settled(p_memory VARCHAR, p_seq BIGINT) RETURNS BOOLEAN
        LANGUAGE sql STABLE SET search_path = {schema} AS $$
        SELECT EXISTS (SELECT 1 FROM memory_events e WHERE e.memory_id = p_memory
            AND e.action IN ('agree', 'adjudicate') AND e.seq > p_seq
            AND NOT EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq)) $$""",
    """CREATE FUNCTION npc_nb_may_vote() RETURNS BOOLEAN
        LANGUAGE sql STABLE SET search_path = {schema} AS $$
        SELECT has_table_privilege(session_user, '{schema}.votes', 'INSERT') $$""",
    """CREATE FUNCTION npc_nb_round_complete(p_memory VARCHAR, p_round INTEGER)
        RETURNS BOOLEAN LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}
        AS $$ SELECT EXISTS (SELECT 1 FROM votes WHERE memory_id = p_memory
            AND round = p_round AND closes_round) $$""",
    """CREATE FUNCTION npc_nb_open_ballots() RETURNS TABLE (
            id VARCHAR, memory_id VARCHAR, round INTEGER, reviewer VARCHAR, reviewer_role VARCHAR,
            voted_at TIMESTAMP, active BOOLEAN, closes_round BOOLEAN, complete BOOLEAN,
            decision VARCHAR, final_hash VARCHAR)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema} AS $$
        WITH now_open AS (
            SELECT b.*, NOT EXISTS (
                    SELECT 1 FROM memory_events w
                    WHERE w.action = 'withdraw_vote' AND w.vote_id = b.id)
                AND NOT EXISTS (
                    SELECT 1 FROM votes n WHERE n.memory_id = b.memory_id
                    AND n.round = b.round
                    AND coalesce(n.reviewer_role, n.reviewer)
                        = coalesce(b.reviewer_role, b.reviewer)
                    AND n.event_seq > b.event_seq) AS active
            FROM votes b WHERE NOT npc_nb_vote_settled(b.memory_id, b.event_seq)),
        rounds AS (
            SELECT o.*, bool_or(coalesce(o.closes_round, FALSE)) OVER (
                PARTITION BY o.memory_id, o.round) AS complete FROM now_open o)
        SELECT r.id, r.memory_id, r.round, r.reviewer, r.reviewer_role, r.voted_at, r.active,
            coalesce(r.closes_round, FALSE), r.complete,
            CASE WHEN r.complete AND npc_nb_may_vote() THEN r.decision END,
            CASE WHEN r.complete AND npc_nb_may_vote() THEN r.final_hash END
        FROM rounds r $$""",
    "ALTER TABLE votes ENABLE ROW LEVEL SECURITY",
    """CREATE POLICY votes_cast_as_yourself ON votes FOR INSERT
        WITH CHECK (reviewer_role = session_user::text)""",
    """CREATE POLICY votes_blind ON votes FOR SELECT USING (
        reviewer_role = session_user::text
        OR npc_nb_vote_settled(memory_id, event_seq)
        OR (npc_nb_may_vote() AND npc_nb_round_complete(memory_id, round)))""",
)

#: The column beside each display name; NULL on rows written before it.
REVIEWER_ROLE_COLUMNS = (
    "ALTER TABLE votes ADD COLUMN reviewer_role VARCHAR",
    "ALTER TABLE memory_events ADD COLUMN reviewer_role VARCHAR",
)

#: The policy changes, the same on both backends.
POLICY_TABLE = """CREATE TABLE review_policy (
    id VARCHAR PRIMARY KEY,
    key VARCHAR NOT NULL CHECK (key IN
        ('review_mode', 'reviewers_per_card', 'allow_self_adjudication')),
    value VARCHAR NOT NULL,
    set_at TIMESTAMP NOT NULL,
    set_by VARCHAR NOT NULL,
    reviewer_role VARCHAR
)"""

_OWNS = (
    "pg_has_role(session_user, (SELECT nspowner FROM pg_namespace "
    "WHERE nspname = TG_TABLE_SCHEMA), 'USAGE')"
)

#: The role a row is recorded under: always the connected role, but the owner's copies.
PG_REVIEWER_ROLE = f"""CREATE FUNCTION npc_nb_reviewer_role() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT {_OWNS} THEN
            IF NEW.reviewer_role IS NOT NULL AND NEW.reviewer_role <> session_user THEN
                RAISE EXCEPTION 'a row is recorded under the connected role (%), not %',
                    session_user, NEW.reviewer_role USING ERRCODE = 'insufficient_privilege';
            END IF;
            NEW.reviewer_role := session_user;
        END IF;
        RETURN NEW;
    END $$"""

#: Named to fire before any other insert trigger of the table (they fire by name).
PG_REVIEWER_ROLE_TRIGGERS = tuple(
    f"CREATE TRIGGER {table}_000_reviewer_role BEFORE INSERT ON {table} "
    "FOR EACH ROW EXECUTE FUNCTION npc_nb_reviewer_role()"
    for table in ("votes", "memory_events")
)

#: Only the project's owner sets the policy.
PG_OWNER_ONLY = f"""CREATE FUNCTION npc_nb_policy_owner_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT {_OWNS} THEN
            RAISE EXCEPTION 'only the project''s owner may set its review policy'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$"""


def pg_policy_guards() -> tuple[str, ...]:
    """The policy table's triggers: inserts by the owner only, no update or delete."""
    return (
        PG_OWNER_ONLY,
        "CREATE TRIGGER review_policy_owner_only BEFORE INSERT ON review_policy "
        "FOR EACH ROW EXECUTE FUNCTION npc_nb_policy_owner_only()",
        "CREATE TRIGGER review_policy_no_change BEFORE UPDATE OR DELETE ON review_policy "
        "FOR EACH ROW EXECUTE FUNCTION npc_nb_append_only()",
        "CREATE TRIGGER review_policy_no_truncate BEFORE TRUNCATE ON review_policy "
        "FOR EACH STATEMENT EXECUTE FUNCTION npc_nb_append_only()",
    )
