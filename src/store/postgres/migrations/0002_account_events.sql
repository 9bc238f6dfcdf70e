-- askgate fleet schema, version 2: the account's tightening events (consent revoked,
-- membership changed, a plan finalize started, ...) that every replica applies to its view,
-- and how far each replica has applied them (its lease is renewed only when current).
ALTER TABLE replicas ADD COLUMN applied bigint NOT NULL DEFAULT 0;

CREATE TABLE account_events (
    seq     bigserial PRIMARY KEY,
    replica text NOT NULL,
    event   jsonb NOT NULL,
    at      timestamptz NOT NULL DEFAULT now()
);
