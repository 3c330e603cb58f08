-- Asks and the platform messages they were posted as.
--
-- Written to run unchanged on SQLite and PostgreSQL: TEXT and BIGINT only,
-- times in milliseconds since the Unix epoch, JSON kept as TEXT (its shapes
-- are the serde types in src/wire/stored.rs and src/wire/ask.rs).

CREATE TABLE asks (
    -- `ask_` + UUID v7 (simple form): sorts by creation time.
    id TEXT PRIMARY KEY NOT NULL,
    -- The canonical ask (wire::ask::CanonicalAsk), the target filled in.
    ask_json TEXT NOT NULL,
    -- The target it was posted to (`telegram:-100123/7@42`, `web`).
    target TEXT NOT NULL,
    -- The target's channel (`telegram`, `discord`, `slack`, `web`).
    channel TEXT NOT NULL,
    -- `pending`, `answered`, `skipped`, `timed_out`, `cancelled`,
    -- `delivery_failed`.
    state TEXT NOT NULL,
    -- The state with its details (wire::stored::StoredState).
    state_json TEXT NOT NULL,
    -- One entry per question, null while open (wire::stored::StoredAnswers).
    answers_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    deadline BIGINT NOT NULL,
    -- Bumped by every change; changes are compare-and-set on it.
    version BIGINT NOT NULL,
    -- The caller's Idempotency-Key; NULLs never conflict.
    idempotency_key TEXT UNIQUE,
    -- When a channel took the ask; NULL until then (redelivered on start).
    delivered_at BIGINT,
    updated_at BIGINT NOT NULL
);

-- Pending asks by deadline: reload on start, time out what has expired.
CREATE INDEX asks_pending_by_deadline ON asks (deadline) WHERE state = 'pending';

-- Listing, newest first.
CREATE INDEX asks_by_created ON asks (created_at);

CREATE TABLE message_refs (
    ask_id TEXT NOT NULL REFERENCES asks (id),
    -- `telegram`, `discord`, `slack`, `web`.
    channel TEXT NOT NULL,
    -- The chat, channel or DM the message is in (with its thread, if any).
    conversation TEXT NOT NULL,
    -- The platform's message id (Telegram message_id, Discord snowflake,
    -- Slack ts).
    message_id TEXT NOT NULL,
    -- Whatever else the channel needs to edit the message later (JSON).
    extra TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (ask_id, channel, conversation, message_id)
);

-- A reply to a message: which ask was it?
CREATE INDEX message_refs_by_message ON message_refs (channel, conversation, message_id);
