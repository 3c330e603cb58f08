-- Threads asks share (an ask's `thread`: a coding agent's session).
--
-- The first message of each thread in each conversation: the asks of the
-- key posted there later go under it, and a reply to it answers the
-- newest pending ask of the key.
CREATE TABLE threads (
    channel TEXT NOT NULL,
    conversation TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    -- The thread's first message (the platform's id).
    message_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (channel, conversation, thread_key)
);

-- A reply to a message: is it a thread's first?
CREATE INDEX threads_by_message ON threads (channel, conversation, message_id);

-- The ask's thread key, for the pending asks of a thread.
ALTER TABLE asks ADD COLUMN thread_key TEXT;
CREATE INDEX asks_pending_by_thread ON asks (thread_key, created_at)
    WHERE state = 'pending' AND thread_key IS NOT NULL;
