-- The further places of an ask posted to several at once (`to` as a list;
-- its first place is `asks.target`): a typed message in one of them finds
-- the ask, and a reload knows which channels post it.
CREATE TABLE ask_places (
    ask_id TEXT NOT NULL REFERENCES asks (id),
    position INTEGER NOT NULL,
    target TEXT NOT NULL,
    channel TEXT NOT NULL,
    PRIMARY KEY (ask_id, position)
);

CREATE INDEX ask_places_by_target ON ask_places (target);
