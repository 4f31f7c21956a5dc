"""Who recorded a row, and the lab's review policy (``m024_reviewer_identity``,
``m025_review_policy``): the statements both backends run, and PostgreSQL's guards.

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

__all__ = [
    "PG_OWNER_ONLY",
    "PG_REVIEWER_ROLE",
    "PG_REVIEWER_ROLE_TRIGGERS",
    "POLICY_TABLE",
    "REVIEWER_ROLE_COLUMNS",
    "pg_policy_guards",
]

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
