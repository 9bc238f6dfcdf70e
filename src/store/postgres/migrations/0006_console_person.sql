-- askgate fleet schema, version 6 (issue 34 §4): a console session signed in with the IdP keeps
-- the person as the IdP named them (groups, email), which the approving policies read on every
-- replica. A version-5 replica would read such a session as an approver without groups, so it
-- must not serve this store (see `migrate`).
ALTER TABLE console_sessions
    ADD COLUMN groups jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(groups) = 'array'),
    ADD COLUMN email text NOT NULL DEFAULT '';
