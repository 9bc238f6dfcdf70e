-- askgate fleet schema, version 5 (issue 35): how many distinct approvers an approval needs
-- (the `@quorum` of the policies that asked) and every vote given (who, which way, when, the
-- note), counted and claimed in one conditional UPDATE. A version-4 replica would run a call
-- on its first approval, so it must not serve this store (see `migrate`). `escalated`: the
-- approval was handed to the escalation webhook (by exactly one replica's sweeper).
ALTER TABLE approvals
    ADD COLUMN quorum smallint NOT NULL DEFAULT 1 CHECK (quorum BETWEEN 1 AND 10),
    ADD COLUMN votes jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(votes) = 'array'),
    ADD COLUMN escalated boolean NOT NULL DEFAULT false;
