-- Secrets the instances on one database share, made once by whichever
-- needs one first: `mcp/request-state` seals the MCP `requestState` of
-- `ask_user`, so a retry reaches its ask after a restart, on any instance.
CREATE TABLE secrets (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
