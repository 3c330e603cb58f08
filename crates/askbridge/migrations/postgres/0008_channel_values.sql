-- What a channel keeps between restarts and shares between instances: a
-- Teams conversation's service URL, the bot's personal chat with a
-- person; one value per channel and key, the latest written.
CREATE TABLE channel_values (
    channel TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (channel, key)
);
