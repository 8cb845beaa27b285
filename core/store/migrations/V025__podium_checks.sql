-- A contest's podium is run a second time before its board freezes (core/podium_checks.py): one check per podium
-- run, on another runner of the pool where there is one. A check job leaves its submission's verdict alone (its
-- case rows are its own); only a check that reads the run slower than the canary threshold allows puts its own,
-- slower result on the board (the honest time is the larger one).
ALTER TABLE jobs
    ADD COLUMN podium_check boolean NOT NULL DEFAULT false,
    -- A runner this job should not go to (the one that timed the run being checked), while another may take it.
    ADD COLUMN avoid_runner text;

CREATE TABLE podium_checks (
    contest_id    bigint NOT NULL REFERENCES contests (id),
    submission_id bigint NOT NULL REFERENCES submissions (id),
    first_job_id  bigint REFERENCES jobs (id),
    first_runner  text,
    first_score   double precision NOT NULL CHECK (first_score > 0),
    check_job_id  bigint NOT NULL UNIQUE REFERENCES jobs (id),
    check_runner  text,
    check_score   double precision,
    -- pending: queued or running; agreed / disagreed: within the canary threshold or not; failed: the check did
    -- not pass (the service's fault or the run's: either way the first run stands and the freeze says so).
    verdict       text NOT NULL DEFAULT 'pending' CHECK (verdict IN ('pending', 'agreed', 'disagreed', 'failed')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    checked_at    timestamptz,
    PRIMARY KEY (contest_id, submission_id)
);
