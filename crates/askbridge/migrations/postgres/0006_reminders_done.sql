-- How many of an ask's reminders were posted in every place they went to.
-- A reminder is claimed (`reminded` counts it) before it is posted and
-- done once posted: one claimed but not done when its instance died is
-- offered again when `remind_at` comes (the places skip what they posted).
ALTER TABLE asks ADD COLUMN reminders_done BIGINT NOT NULL DEFAULT 0;
UPDATE asks SET reminders_done = reminded;
