-- askgate fleet schema, version 8 (issue 36 §2): two more usage counters per bucket — the
-- calls refused (deny decisions) and the bytes uploaded (file bodies written) — and a
-- session's calls, in rows of their own: `principal` holds the session's key (the principal
-- and the session id), `width` 300 (five-minute buckets, twelve slots), `calls` its count.
-- Rows written by version 7 read as zero for the new counters.
ALTER TABLE usage_counts
    ADD COLUMN denies integer NOT NULL DEFAULT 0 CHECK (denies >= 0),
    ADD COLUMN uploaded integer NOT NULL DEFAULT 0 CHECK (uploaded >= 0),
    DROP CONSTRAINT usage_counts_width_check,
    ADD CONSTRAINT usage_counts_width_check CHECK (width IN (1, 60, 300, 3600));
