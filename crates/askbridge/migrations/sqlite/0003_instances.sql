-- Several instances on one database: who delivers an ask, and leases.

-- The instance that delivers the ask (its id); another instance takes the
-- delivery over when this one's `instance/<id>` lease has run out.
ALTER TABLE asks ADD COLUMN delivery_owner TEXT;

-- A lease is held by one instance until `expires_at` (milliseconds since
-- the epoch) and renewed by it: `instance/<id>` says an instance is alive,
-- `telegram/<bot>` and `discord/gateway` say who runs a bot's one
-- connection.
CREATE TABLE leases (
    name TEXT PRIMARY KEY NOT NULL,
    holder TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
