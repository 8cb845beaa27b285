-- Mode `profile`: the submission's correctness check, then one test case run under Nsight Compute. A profile
-- never enters a leaderboard (every board reads `mode = 'ranked'` only) and has a rate-limit bucket of its own.

ALTER TABLE submissions
    DROP CONSTRAINT submissions_mode_check,
    ADD CONSTRAINT submissions_mode_check CHECK (mode IN ('test', 'benchmark', 'ranked', 'profile')),
    -- The test case to profile, by index; NULL: the largest, which the runner picks. It is kept with the
    -- submission, as its dtype is, and not with the job: a rerun (a new job) profiles the same case, and every
    -- job's spec reads it from here, so a restart or a requeue loses nothing.
    ADD COLUMN profile_case integer CHECK (profile_case >= 0),
    ADD CONSTRAINT submissions_profile_case_mode CHECK (profile_case IS NULL OR mode = 'profile');

ALTER TABLE rate_limits
    DROP CONSTRAINT rate_limits_mode_check,
    ADD CONSTRAINT rate_limits_mode_check CHECK (mode IN ('test', 'benchmark', 'ranked', 'profile'));

-- What Nsight Compute measured in one job, keyed by the job as `case_results` are: a rerun stores its own
-- profile and the earlier one stays. The report (kernels, stalls, counts, notes) is jsonb: it is written and read
-- whole, never searched by field, and its shape is the wire model's (`runner.api.ProfileReport`), whose new
-- optional fields then need no migration.
CREATE TABLE job_profiles (
    job_id  bigint PRIMARY KEY REFERENCES jobs (id),
    report  jsonb NOT NULL
);

-- The files that come with a profile (the text report, the .ncu-rep, PTX, SASS), in the report's order. They are
-- kept out of the report's jsonb: as bytea they take their size in bytes (the wire's base64 is a third more),
-- TOAST compresses the text ones, and what reads only the figures does not pull hundreds of kilobytes of files.
CREATE TABLE profile_artifacts (
    job_id  bigint NOT NULL REFERENCES job_profiles (job_id),
    idx     integer NOT NULL CHECK (idx >= 0),
    name    text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    data    bytea NOT NULL,
    PRIMARY KEY (job_id, idx)
);
