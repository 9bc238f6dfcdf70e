-- askgate fleet schema, version 3: approved plans per (principal, session), so that a plan
-- registered through one replica covers the same session's writes on every replica. The rows
-- go with the events that clear plans (in the same transaction) and at their expiry.
CREATE TABLE plans (
    principal  text NOT NULL,
    session_id text NOT NULL,
    token      text NOT NULL,
    project_id text NOT NULL,
    plan       jsonb NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (principal, session_id, token)
);
CREATE INDEX plans_project ON plans (project_id);
CREATE INDEX plans_expiry ON plans (expires_at);
