-- Reminders of an ask nobody answers: when the next one is due
-- (milliseconds since the epoch; NULL: none), and how many were sent.
-- Sending one is a compare-and-set on `reminded`, so with several
-- instances each reminder is sent once.
ALTER TABLE asks ADD COLUMN remind_at BIGINT;
ALTER TABLE asks ADD COLUMN reminded BIGINT NOT NULL DEFAULT 0;

CREATE INDEX asks_pending_by_remind_at ON asks (remind_at)
    WHERE state = 'pending' AND remind_at IS NOT NULL;
