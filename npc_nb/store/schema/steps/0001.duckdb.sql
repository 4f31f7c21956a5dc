-- Schema step 0001 (the baseline) on DuckDB, frozen: the statements that build it on an
-- empty database, generated once from its declaration. Never edited: a bundle written at
-- 0001 is staged on exactly this schema, then brought up the ladder (migrations.py).
CREATE SEQUENCE memory_event_seq START 1;

CREATE SEQUENCE memory_insert_seq START 1;

CREATE TABLE conversations (
    id VARCHAR,
    npc VARCHAR NOT NULL,
    team VARCHAR,
    project VARCHAR,
    model VARCHAR,
    provider VARCHAR,
    notebook_path VARCHAR,
    started_at TIMESTAMP NOT NULL,
    PRIMARY KEY (id)
);

CREATE TABLE messages (
    id VARCHAR,
    conversation_id VARCHAR NOT NULL,
    role VARCHAR NOT NULL,
    content VARCHAR NOT NULL,
    npc VARCHAR,
    model VARCHAR,
    provider VARCHAR,
    notebook_path VARCHAR,
    execution_count INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency_ms DOUBLE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (id),
    CONSTRAINT messages_role_check CHECK (role IN ('system', 'user', 'assistant'))
);

CREATE TABLE memories (
    id VARCHAR,
    initial_text VARCHAR NOT NULL,
    final_text VARCHAR NOT NULL,
    initial_hash VARCHAR NOT NULL,
    final_hash VARCHAR NOT NULL,
    norm_text VARCHAR NOT NULL,
    category VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,
    npc VARCHAR,
    team VARCHAR,
    project VARCHAR,
    conversation_id VARCHAR,
    source_message_id VARCHAR,
    evidence VARCHAR,
    evidence_verified BOOLEAN,
    extractor_model VARCHAR,
    provider VARCHAR,
    prompt_version VARCHAR,
    flags VARCHAR[] NOT NULL,
    confidence DOUBLE,
    recorded_at TIMESTAMP NOT NULL,
    decided_at TIMESTAMP,
    decided_by VARCHAR,
    valid_from TIMESTAMP,
    valid_to TIMESTAMP,
    supersedes VARCHAR,
    superseded_by VARCHAR,
    superseded_at TIMESTAMP,
    defer_until TIMESTAMP,
    skipped_at TIMESTAMP,
    text_change DOUBLE,
    insert_seq BIGINT,
    match_terms VARCHAR[],
    updates VARCHAR,
    differs VARCHAR,
    match_error VARCHAR,
    match_text VARCHAR,
    match_vector BLOB,
    matcher VARCHAR,
    verdict VARCHAR,
    match_neighbours VARCHAR,
    match_calls INTEGER,
    match_tokens INTEGER,
    match_ms DOUBLE,
    experiment_arm VARCHAR,
    PRIMARY KEY (id),
    CONSTRAINT memories_category_check CHECK (category IN ('decision', 'preference', 'commitment', 'constraint', 'open_loop', 'fact')),
    CONSTRAINT memories_status_check CHECK (status IN ('pending_approval', 'deferred', 'human-approved', 'human-edited', 'human-rejected', 'superseded')),
    CONSTRAINT memories_scope_check CHECK (scope IN ('npc', 'team', 'project', 'global')),
    CONSTRAINT memories_confidence_check CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
    CONSTRAINT memories_check CHECK (scope <> 'npc' OR npc IS NOT NULL),
    CONSTRAINT memories_check1 CHECK (scope <> 'team' OR team IS NOT NULL),
    CONSTRAINT memories_check2 CHECK (valid_from IS NULL OR valid_to IS NULL OR valid_from < valid_to)
);

CREATE TABLE memory_events (
    seq BIGINT,
    memory_id VARCHAR NOT NULL,
    occurred_at TIMESTAMP NOT NULL,
    actor VARCHAR NOT NULL,
    action VARCHAR NOT NULL,
    from_status VARCHAR,
    to_status VARCHAR NOT NULL,
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
    vote_id VARCHAR,
    reviewer_role VARCHAR,
    chain_seq BIGINT,
    chain_hash VARCHAR,
    PRIMARY KEY (seq),
    CONSTRAINT memory_events_action_check CHECK (action IN ('approve', 'reject', 'edit', 'skip', 'defer', 'approve_all', 'undo', 'propose', 'supersede', 'set_validity', 'vote', 'replace_vote', 'withdraw_vote', 'agree', 'adjudicate')),
    CONSTRAINT memory_events_to_status_check CHECK (to_status IN ('pending_approval', 'deferred', 'human-approved', 'human-edited', 'human-rejected', 'superseded'))
);

CREATE TABLE reproposals (
    id VARCHAR,
    recorded_at TIMESTAMP NOT NULL,
    memory_id VARCHAR NOT NULL,
    match_kind VARCHAR NOT NULL,
    match_type VARCHAR NOT NULL,
    similarity DOUBLE NOT NULL,
    proposed_text VARCHAR NOT NULL,
    category VARCHAR,
    scope VARCHAR,
    npc VARCHAR,
    team VARCHAR,
    conversation_id VARCHAR,
    source_message_id VARCHAR,
    extractor_model VARCHAR,
    provider VARCHAR,
    prompt_version VARCHAR,
    verdict VARCHAR,
    matcher VARCHAR,
    outcome VARCHAR,
    evidence VARCHAR,
    flags VARCHAR[],
    confidence DOUBLE,
    listed_at TIMESTAMP,
    match_neighbours VARCHAR,
    match_calls INTEGER,
    match_tokens INTEGER,
    match_ms DOUBLE,
    match_error VARCHAR,
    PRIMARY KEY (id),
    CONSTRAINT reproposals_match_kind_check CHECK (match_kind IN ('rejected', 'approved', 'pending', 'superseded')),
    CONSTRAINT reproposals_match_type_check CHECK (match_type IN ('exact', 'near'))
);

CREATE TABLE context_injections (
    message_id VARCHAR NOT NULL,
    memory_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    memory_hash VARCHAR NOT NULL,
    injected_at TIMESTAMP NOT NULL
);

CREATE TABLE extraction_jobs (
    id VARCHAR,
    conversation_id VARCHAR,
    message_id VARCHAR,
    status VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,
    model VARCHAR,
    prompt_version VARCHAR,
    error VARCHAR,
    raw_output VARCHAR,
    created_at TIMESTAMP NOT NULL,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    user_message_id VARCHAR,
    npc VARCHAR,
    team VARCHAR,
    claimed_by VARCHAR,
    candidates INTEGER,
    endpoint VARCHAR,
    secret_options VARCHAR[],
    PRIMARY KEY (id),
    CONSTRAINT extraction_jobs_status_check CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled'))
);

CREATE TABLE store_state (
    key VARCHAR,
    value BIGINT NOT NULL,
    PRIMARY KEY (key)
);

CREATE TABLE concept_extractions (
    memory_id VARCHAR NOT NULL,
    memory_hash VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    extracted_at TIMESTAMP NOT NULL,
    error VARCHAR,
    PRIMARY KEY (memory_id, memory_hash)
);

CREATE TABLE memory_concepts (
    memory_id VARCHAR NOT NULL,
    memory_hash VARCHAR NOT NULL,
    concept_key VARCHAR NOT NULL,
    concept_label VARCHAR NOT NULL
);

CREATE TABLE concept_relations (
    memory_id VARCHAR NOT NULL,
    memory_hash VARCHAR NOT NULL,
    source_key VARCHAR NOT NULL,
    relation VARCHAR NOT NULL,
    target_key VARCHAR NOT NULL
);

CREATE TABLE match_labels (
    reproposal_id VARCHAR,
    label VARCHAR NOT NULL,
    new_memory_id VARCHAR NOT NULL,
    labelled_by VARCHAR NOT NULL,
    labelled_at TIMESTAMP NOT NULL,
    PRIMARY KEY (reproposal_id),
    CONSTRAINT match_labels_label_check CHECK (label IN ('split', 'requeued'))
);

CREATE TABLE proposal_locks (
    text_hash VARCHAR,
    PRIMARY KEY (text_hash)
);

CREATE TABLE imported_records (
    source VARCHAR NOT NULL,
    source_key VARCHAR NOT NULL,
    memory_id VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    source_file VARCHAR,
    source_time TIMESTAMP,
    details VARCHAR,
    imported_by VARCHAR NOT NULL,
    imported_at TIMESTAMP NOT NULL,
    PRIMARY KEY (source, source_key),
    CONSTRAINT imported_records_source_check CHECK (source IN ('npcpy', 'mem0', 'letta')),
    CONSTRAINT imported_records_outcome_check CHECK (outcome IN ('queued', 'merged', 'suppressed', 'reinforced', 'approved', 'edited', 'rejected'))
);

CREATE TABLE snapshots (
    id VARCHAR,
    label VARCHAR,
    taken_at TIMESTAMP NOT NULL,
    taken_by VARCHAR NOT NULL,
    event_seq BIGINT NOT NULL,
    user_event_seq BIGINT NOT NULL,
    content_hash VARCHAR NOT NULL,
    memories BIGINT NOT NULL,
    event_floor BIGINT DEFAULT 0,
    PRIMARY KEY (id),
    UNIQUE (label)
);

CREATE TABLE model_recordings (
    id VARCHAR,
    fingerprint VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    caller VARCHAR,
    request VARCHAR NOT NULL,
    reply VARCHAR NOT NULL,
    prompt_tokens BIGINT,
    completion_tokens BIGINT,
    recorded_at TIMESTAMP NOT NULL,
    chain_seq BIGINT,
    chain_hash VARCHAR,
    PRIMARY KEY (id)
);

CREATE TABLE votes (
    id VARCHAR,
    memory_id VARCHAR NOT NULL,
    round INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    decision VARCHAR NOT NULL,
    final_text VARCHAR,
    final_hash VARCHAR,
    wording VARCHAR,
    reason VARCHAR,
    defer_until TIMESTAMP,
    time_spent_ms BIGINT,
    review_session VARCHAR,
    voted_at TIMESTAMP NOT NULL,
    event_seq BIGINT NOT NULL,
    reviewer_role VARCHAR,
    closes_round BOOLEAN DEFAULT FALSE,
    chain_seq BIGINT,
    chain_hash VARCHAR,
    PRIMARY KEY (id),
    CONSTRAINT votes_decision_check CHECK (decision IN ('approve', 'edit', 'reject', 'defer'))
);

CREATE TABLE review_policy (
    id VARCHAR,
    key VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    set_at TIMESTAMP NOT NULL,
    set_by VARCHAR NOT NULL,
    reviewer_role VARCHAR,
    PRIMARY KEY (id),
    CONSTRAINT review_policy_key_check CHECK (key IN ('review_mode', 'reviewers_per_card', 'allow_self_adjudication'))
);

CREATE TABLE experiments (
    id VARCHAR,
    name VARCHAR NOT NULL,
    npc VARCHAR,
    seed BIGINT NOT NULL,
    selection VARCHAR NOT NULL,
    exchanges BIGINT NOT NULL,
    state VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    created_by VARCHAR NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (name),
    CONSTRAINT experiments_state_check CHECK (state IN ('created', 'running', 'done'))
);

CREATE TABLE experiment_arms (
    id VARCHAR,
    experiment_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    config VARCHAR NOT NULL,
    config_hash VARCHAR NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (experiment_id, name)
);

CREATE TABLE experiment_jobs (
    arm_id VARCHAR NOT NULL,
    message_id VARCHAR NOT NULL,
    experiment_id VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    user_message_id VARCHAR NOT NULL,
    npc VARCHAR NOT NULL,
    team VARCHAR,
    position INTEGER NOT NULL,
    state VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,
    error VARCHAR,
    raw_output VARCHAR,
    candidates INTEGER,
    claimed_by VARCHAR,
    finished_at TIMESTAMP,
    PRIMARY KEY (arm_id, message_id),
    CONSTRAINT experiment_jobs_state_check CHECK (state IN ('queued', 'running', 'done', 'failed'))
);

CREATE TABLE experiment_items (
    arm_id VARCHAR NOT NULL,
    message_id VARCHAR NOT NULL,
    item INTEGER NOT NULL,
    outcome VARCHAR NOT NULL,
    memory_id VARCHAR NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    PRIMARY KEY (arm_id, message_id, item),
    CONSTRAINT experiment_items_outcome_check CHECK (outcome IN ('queued', 'merged', 'suppressed', 'reinforced'))
);

CREATE TABLE experiment_reviews (
    id VARCHAR,
    experiment_id VARCHAR NOT NULL,
    opened_at TIMESTAMP NOT NULL,
    opened_by VARCHAR NOT NULL,
    seed BIGINT NOT NULL,
    hidden VARCHAR NOT NULL,
    card_order VARCHAR NOT NULL,
    PRIMARY KEY (id)
);

CREATE TABLE experiment_promotions (
    arm_id VARCHAR NOT NULL,
    memory_id VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    live_memory_id VARCHAR,
    promoted_by VARCHAR NOT NULL,
    promoted_at TIMESTAMP NOT NULL,
    PRIMARY KEY (arm_id, memory_id),
    CONSTRAINT experiment_promotions_outcome_check CHECK (outcome IN ('approved', 'approved_card', 'reinforced', 'tombstoned'))
);

CREATE INDEX messages_conversation ON messages (conversation_id);

CREATE INDEX memories_final_hash ON memories (final_hash);

CREATE INDEX memories_initial_hash ON memories (initial_hash);

CREATE INDEX memory_events_memory ON memory_events (memory_id);

CREATE INDEX reproposals_memory ON reproposals (memory_id);

CREATE INDEX context_injections_message ON context_injections (message_id);

CREATE INDEX memory_concepts_memory ON memory_concepts (memory_id);

CREATE INDEX model_recordings_fingerprint ON model_recordings (fingerprint);

CREATE INDEX votes_memory ON votes (memory_id);

INSERT INTO store_state VALUES ('decision_generation', 0);

CREATE VIEW approved_memories AS
        SELECT * FROM memories
        WHERE status IN ('human-approved', 'human-edited')
          AND superseded_by IS NULL AND experiment_arm IS NULL
          AND (valid_from IS NULL OR valid_from <= timezone('UTC', now()))
          AND (valid_to IS NULL OR valid_to > timezone('UTC', now()));

CREATE VIEW v_memories AS
        SELECT id, npc, team, scope, category, status,
            CASE status
                WHEN 'human-approved' THEN 'approved' WHEN 'human-edited' THEN 'edited'
                WHEN 'human-rejected' THEN 'rejected' WHEN 'superseded' THEN 'superseded'
                ELSE 'open' END AS outcome,
            CASE WHEN supersedes IS NULL THEN 'extracted' ELSE 'revision' END AS origin,
            initial_text, final_text,
            initial_text <> final_text AND NOT (status <> 'pending_approval' AND status <> 'deferred' AND initial_text <> final_text AND EXISTS (SELECT 1 FROM reproposals r WHERE r.memory_id = memories.id AND r.outcome = 'merged' AND r.proposed_text = memories.final_text)) AS edited,
            (status <> 'pending_approval' AND status <> 'deferred' AND initial_text <> final_text AND EXISTS (SELECT 1 FROM reproposals r WHERE r.memory_id = memories.id AND r.outcome = 'merged' AND r.proposed_text = memories.final_text)) AS other_wording,
            coalesce(text_change, 0.0) AS text_change,
            flags, len(flags) > 0 AS flagged, confidence,
            extractor_model AS model, provider, prompt_version,
            conversation_id, source_message_id, evidence, evidence_verified,
            recorded_at, decided_at, decided_by AS reviewer,
            date_diff('millisecond', recorded_at, decided_at) AS decision_lead_ms,
            valid_from, valid_to, supersedes, superseded_by, superseded_at, defer_until
        FROM memories WHERE experiment_arm IS NULL;

CREATE VIEW v_decisions AS
        SELECT e.seq, e.memory_id, e.occurred_at, e.actor AS reviewer, e.action,
            e.from_status, e.to_status, e.text_before, e.text_after, e.reason, e.batch_id,
            e.undoes,
            EXISTS (SELECT 1 FROM memory_events u WHERE u.undoes = e.seq) AS undone,
            e.lead_time_ms, e.time_spent_ms, e.review_session, e.wording,
            m.npc, m.team, m.scope, m.category, m.extractor_model AS model, m.provider,
            m.prompt_version
        FROM memory_events e LEFT JOIN memories m ON m.id = e.memory_id
        WHERE m.experiment_arm IS NULL;

CREATE VIEW v_reproposals AS
        SELECT r.id, r.recorded_at, r.memory_id, r.match_kind AS kind, r.match_type,
            r.similarity, r.verdict, r.matcher, r.outcome, r.proposed_text, r.category,
            r.scope, r.npc, r.team, r.conversation_id, r.source_message_id,
            r.extractor_model AS model, r.provider, r.prompt_version, r.listed_at,
            l.label, l.new_memory_id, l.labelled_by, l.labelled_at
        FROM reproposals r LEFT JOIN match_labels l ON l.reproposal_id = r.id
        WHERE NOT EXISTS (SELECT 1 FROM memories x WHERE x.id = r.memory_id AND x.experiment_arm IS NOT NULL);

CREATE VIEW v_injections AS
        SELECT i.message_id, i.memory_id, i.position, i.memory_hash, i.injected_at,
            msg.conversation_id, msg.npc, msg.model AS reply_model,
            m.category, m.scope, m.final_text
        FROM context_injections i
        LEFT JOIN messages msg ON msg.id = i.message_id
        LEFT JOIN memories m ON m.id = i.memory_id;

CREATE VIEW v_jobs AS
        SELECT id, status, attempts, npc, team, model, prompt_version, candidates, error,
            length(raw_output) AS raw_output_chars, created_at, started_at, finished_at,
            date_diff('millisecond', created_at, finished_at) AS duration_ms,
            conversation_id, message_id, user_message_id
        FROM extraction_jobs;
