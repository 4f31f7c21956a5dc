"""What PostgreSQL adds to the declared tables: append-only triggers, the role a row
is recorded under, the review policy's owner-only inserts, the votes' row-level security,
and the chains' head read as the owner; and what step ``0002`` adds for the audits'
tables (``audit_extras``: append-only, the recorded role).

These are PostgreSQL's alone (a DuckDB file is one user's, and its writers are npc_nb),
so they stay SQL, each statement as the old migrations left it (the baseline checks
that it builds the very schema they built: ``tests/data/schema-m027-postgres.json``).
``{schema}`` is the project's schema, a safe identifier (``project_schema``). The
history tables are append-only for every role, the owner included; a row with no chain
link yet may get one (its other columns as they were), which a bundle merge's linking
needs.
"""

from __future__ import annotations

__all__ = ["AUDIT_TABLE_NAMES", "audit_extras", "pg_extras"]

#: The audit log's own refusal (the first append-only table).
_EVENTS_APPEND_ONLY = """CREATE FUNCTION memory_events_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'memory_events is append-only: % is refused', TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END $$"""

#: Every other history table's refusal.
_APPEND_ONLY = """CREATE FUNCTION npc_nb_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% is append-only: % is refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END $$"""

#: The history tables' refusal but for a row's first chain link.
_LINK_ONLY = """CREATE FUNCTION npc_nb_append_only_but_link() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.chain_hash IS NULL
            AND to_jsonb(OLD) - 'chain_seq' - 'chain_hash'
                = to_jsonb(NEW) - 'chain_seq' - 'chain_hash' THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION '% is append-only: % is refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'insufficient_privilege';
    END $$"""

#: A chain's head, read as the owner: a reviewer appending a vote cannot read every vote
#: (row-level security), yet must link after the chain's last row. It returns a position
#: and a hash, nothing of any row's content.
_CHAIN_HEAD = """CREATE FUNCTION npc_nb_chain_head(p_table VARCHAR)
    RETURNS TABLE (chain_seq BIGINT, chain_hash VARCHAR)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema} AS $$
    BEGIN
        IF p_table NOT IN ('memory_events', 'votes', 'model_recordings') THEN
            RAISE EXCEPTION 'not a chained table: %', p_table;
        END IF;
        RETURN QUERY EXECUTE format(
            'SELECT chain_seq, chain_hash FROM %I WHERE chain_seq IS NOT NULL '
            'ORDER BY chain_seq DESC LIMIT 1', p_table);
    END $$"""

_OWNS = (
    "pg_has_role(session_user, (SELECT nspowner FROM pg_namespace "
    "WHERE nspname = TG_TABLE_SCHEMA), 'USAGE')"
)


#: The role a row is recorded under: always the connected role, but the owner's copies.
_PG_REVIEWER_ROLE = f"""CREATE FUNCTION npc_nb_reviewer_role() RETURNS trigger
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

#: Only the project's owner sets the policy.
_PG_OWNER_ONLY = f"""CREATE FUNCTION npc_nb_policy_owner_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT {_OWNS} THEN
            RAISE EXCEPTION 'only the project''s owner may set its review policy'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END $$"""

#: The votes are blind: the owner reads every vote; any other role reads its own votes,
#: every vote of a settled round, and, if it may vote (INSERT on votes), every vote of a
#: complete round (to adjudicate it). Who voted in open rounds, never how, comes through
#: ``npc_nb_open_ballots()``, which runs as the owner.
_BLIND_VOTES = (
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


#: The audited batches' tables (step ``0002``): append-only, the recorded role on the
#: audits and their steps.
AUDIT_TABLE_NAMES = ("audits", "audit_members", "audit_steps")


def _reviewer_role_trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_000_reviewer_role BEFORE INSERT ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION npc_nb_reviewer_role()"
    )


def _append_only_triggers(table: str, on_change: str, on_truncate: str) -> list[str]:
    return [
        f"CREATE TRIGGER {table}_no_change BEFORE UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {on_change}()",
        f"CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {on_truncate}()",
    ]


def audit_extras() -> list[str]:
    """What PostgreSQL adds to the audits' tables (step ``0002``): every one refuses
    UPDATE, DELETE and TRUNCATE for every role, and a row of ``audits`` or
    ``audit_steps`` is recorded under the connected role (the owner's copies aside)."""
    out = [_reviewer_role_trigger(table) for table in ("audits", "audit_steps")]
    for table in AUDIT_TABLE_NAMES:
        out += _append_only_triggers(table, "npc_nb_append_only", "npc_nb_append_only")
    return out


def _triggers() -> list[str]:
    """Append-only history (the three chained tables but for a row's first link), the
    recorded role on votes and events (named to fire before any other insert trigger:
    they fire by name), and the policy's owner-only inserts."""
    out = [_reviewer_role_trigger(table) for table in ("votes", "memory_events")]
    out.append(
        "CREATE TRIGGER review_policy_owner_only BEFORE INSERT ON review_policy "
        "FOR EACH ROW EXECUTE FUNCTION npc_nb_policy_owner_only()"
    )
    for table, on_change, on_truncate in (
        ("memory_events", "npc_nb_append_only_but_link", "memory_events_append_only"),
        ("votes", "npc_nb_append_only_but_link", "npc_nb_append_only"),
        ("model_recordings", "npc_nb_append_only_but_link", "npc_nb_append_only"),
        ("snapshots", "npc_nb_append_only", "npc_nb_append_only"),
        ("review_policy", "npc_nb_append_only", "npc_nb_append_only"),
    ):
        out += _append_only_triggers(table, on_change, on_truncate)
    return out


def pg_extras(schema: str) -> list[str]:
    """PostgreSQL's statements after the declared tables, for the schema ``schema``."""
    functions = [_EVENTS_APPEND_ONLY, _APPEND_ONLY, _LINK_ONLY, _CHAIN_HEAD,
                 _PG_REVIEWER_ROLE, _PG_OWNER_ONLY]  # fmt: skip
    statements = [*functions, *_triggers(), *_BLIND_VOTES, *audit_extras()]
    return [statement.replace("{schema}", schema) for statement in statements]
