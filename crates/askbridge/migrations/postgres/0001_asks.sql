-- Asks, the platform messages they were posted as, and leases, on
-- PostgreSQL: the same tables and columns as the SQLite schema
-- (migrations/sqlite), in one file. Times are milliseconds since the Unix
-- epoch; JSON is kept as TEXT (its shapes are the serde types in
-- src/wire/stored.rs and src/wire/ask.rs).
--
-- Text that is compared by range or sorted (ids, targets) uses the "C"
-- collation, so it orders by bytes exactly as SQLite does.

CREATE TABLE asks (
    id TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    ask_json TEXT NOT NULL,
    target TEXT COLLATE "C" NOT NULL,
    channel TEXT NOT NULL,
    state TEXT NOT NULL,
    state_json TEXT NOT NULL,
    answers_json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    deadline BIGINT NOT NULL,
    version BIGINT NOT NULL,
    idempotency_key TEXT UNIQUE,
    delivered_at BIGINT,
    updated_at BIGINT NOT NULL,
    delivery_owner TEXT
);

CREATE INDEX asks_pending_by_deadline ON asks (deadline) WHERE state = 'pending';
CREATE INDEX asks_by_created ON asks (created_at);
CREATE INDEX asks_pending_by_target ON asks (target, created_at) WHERE state = 'pending';

CREATE TABLE message_refs (
    ask_id TEXT COLLATE "C" NOT NULL REFERENCES asks (id),
    channel TEXT NOT NULL,
    conversation TEXT NOT NULL,
    message_id TEXT NOT NULL,
    extra TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (ask_id, channel, conversation, message_id)
);

CREATE INDEX message_refs_by_message ON message_refs (channel, conversation, message_id);

CREATE TABLE leases (
    name TEXT PRIMARY KEY NOT NULL,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Every new ask and every state change (a new version) is announced on
-- the `askbridge_asks` channel as `<id> <version> <delivery owner>`, sent
-- when the change commits. Instances listen, so a waiter on one instance
-- hears an answer recorded on another. It is only a wake-up: the row is
-- the truth.
CREATE FUNCTION askbridge_announce_ask() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'askbridge_asks',
        NEW.id || ' ' || NEW.version || ' ' || coalesce(NEW.delivery_owner, '')
    );
    RETURN NULL;
END
$$;

CREATE TRIGGER asks_announce
    AFTER INSERT OR UPDATE OF version ON asks
    FOR EACH ROW EXECUTE FUNCTION askbridge_announce_ask();
