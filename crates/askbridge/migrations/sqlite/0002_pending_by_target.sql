-- Pending asks by target: a typed message in a chat goes to the newest
-- pending ask posted there (`target` is `telegram:-100123/7` or that with
-- `@<user>`; a range scan on the place finds both).
CREATE INDEX asks_pending_by_target ON asks (target, created_at) WHERE state = 'pending';
