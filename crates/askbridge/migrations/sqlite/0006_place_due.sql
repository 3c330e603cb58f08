-- When a further place of an ask is posted, for an escalation step
-- (milliseconds since the epoch); NULL: at once.
ALTER TABLE ask_places ADD COLUMN due_at BIGINT;

-- The asks posted on a channel in any place (`GET /v1/asks?channel=`).
CREATE INDEX ask_places_by_channel ON ask_places (channel);
