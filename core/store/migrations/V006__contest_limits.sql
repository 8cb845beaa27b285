-- A contest may set its own limit on ranked submissions (deliverable: "the rate limits of a contest can differ
-- from practice"). While it runs, a ranked run on one of its problems and targets takes a token from the user's
-- bucket for that contest (`contest:<id>` in rate_limits), not from their practice `ranked` bucket.
ALTER TABLE contests
    ADD COLUMN ranked_burst integer CHECK (ranked_burst >= 1),
    ADD COLUMN ranked_per_hour double precision CHECK (ranked_per_hour > 0),
    ADD CONSTRAINT contests_limits_together CHECK ((ranked_burst IS NULL) = (ranked_per_hour IS NULL));

ALTER TABLE rate_limits
    DROP CONSTRAINT rate_limits_mode_check,
    ADD CONSTRAINT rate_limits_mode_check
        CHECK (mode IN ('test', 'benchmark', 'ranked', 'profile') OR mode ~ '^contest:[0-9]+$');
