-- askgate fleet schema, version 7 (issue 36 §2): the usage counts every replica shares. One
-- row per replica, principal, scale (bucket width in seconds: 1, 60, 3600) and slot of that
-- scale's ring, holding the slot's current bucket; a replica adds its deltas to its own rows
-- (a row whose bucket moved on starts again) and reads the others' rows changed since its last
-- look. Rows are bounded by principals × 144 per replica; rows untouched for a day are deleted.
CREATE TABLE usage_counts (
    replica text NOT NULL,
    principal text NOT NULL,
    width integer NOT NULL CHECK (width IN (1, 60, 3600)),
    slot integer NOT NULL CHECK (slot >= 0 AND slot < 60),
    bucket bigint NOT NULL,
    calls integer NOT NULL DEFAULT 0 CHECK (calls >= 0),
    writes integer NOT NULL DEFAULT 0 CHECK (writes >= 0),
    deletes integer NOT NULL DEFAULT 0 CHECK (deletes >= 0),
    asks integer NOT NULL DEFAULT 0 CHECK (asks >= 0),
    shapes bigint[] NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (replica, principal, width, slot)
);
CREATE INDEX usage_counts_updated ON usage_counts (updated_at);
