-- askgate fleet schema, version 1: replicas and their leases, approvals with the held call,
-- console sessions.
CREATE TABLE replicas (
    id          text PRIMARY KEY,
    lease_until timestamptz NOT NULL
);

CREATE TABLE approvals (
    id           text PRIMARY KEY,
    seq          bigserial UNIQUE,
    decision_id  text NOT NULL,
    requested_by text NOT NULL,
    status       text NOT NULL,
    view         jsonb NOT NULL,
    call         jsonb,
    bytes        bigint NOT NULL,
    expires_at   timestamptz NOT NULL,
    held_by      text,
    claimed_by   text,
    approved_by  text,
    result       jsonb,
    started_at   timestamptz,
    finished_at  timestamptz,
    open         boolean NOT NULL,
    unlogged     text
);
CREATE INDEX approvals_pending ON approvals (seq) WHERE status = 'pending';
CREATE INDEX approvals_open_by_caller ON approvals (requested_by) WHERE open;
CREATE INDEX approvals_finished ON approvals (finished_at) WHERE NOT open;
CREATE INDEX approvals_unlogged ON approvals (seq) WHERE unlogged IS NOT NULL;

CREATE TABLE console_sessions (
    token      text PRIMARY KEY,
    principal  text NOT NULL,
    csrf       text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_created ON console_sessions (created_at);
