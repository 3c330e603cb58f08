-- Webhook deliveries: one row per event an ask's `callbackUrl` is told
-- of, kept until delivered or given up, so a restart or a crash loses
-- none. An ask's `ask.ended` row is written with the ask and becomes due
-- when the ask ends; the other events' rows when they happen.
--
-- An attempt is a compare-and-set on `attempts` that also moves `due_at`
-- past the attempt's longest time: with several instances one makes each
-- attempt, and an instance that dies mid-attempt leaves the row to be
-- tried again once `due_at` has passed.
CREATE TABLE webhook_deliveries (
    -- `whd_` + 32 hex digits: the receiver's `Idempotency-Key`.
    id TEXT PRIMARY KEY NOT NULL,
    ask_id TEXT NOT NULL,
    -- `ask.ended`, `ask.posted`, `ask.reminded`, `ask.escalated`.
    event TEXT NOT NULL,
    url TEXT NOT NULL,
    -- The JSON sent, fixed by the first attempt; NULL before it.
    body TEXT,
    -- `pending`, `delivered`, `failed` (given up), `gone` (410).
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    -- No attempt before this (milliseconds since the epoch).
    due_at BIGINT NOT NULL,
    first_attempt_at BIGINT,
    last_status BIGINT,
    last_error TEXT,
    delivered_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (due_at)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_ask ON webhook_deliveries (ask_id);
