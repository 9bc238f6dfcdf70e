-- askgate fleet schema, version 4 (issue 32): a replica id is held by one process at a time
-- (`instance`: a random token of the process holding the lease, P8); the hook attestations of
-- MCP calls, so that any replica decides an attested call (§3); and the fleet's shared secrets
-- (the key that seals MCP 2026-07-28 `requestState`, so that any replica opens it).
ALTER TABLE replicas ADD COLUMN instance text NOT NULL DEFAULT '';

CREATE TABLE attestations (
    principal   text NOT NULL,
    tool_use_id text NOT NULL,
    attestation jsonb NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (principal, tool_use_id)
);
CREATE INDEX attestations_received ON attestations (received_at);
CREATE INDEX attestations_tool_use ON attestations (tool_use_id);

CREATE TABLE fleet_secrets (
    name       text PRIMARY KEY,
    secret     bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
