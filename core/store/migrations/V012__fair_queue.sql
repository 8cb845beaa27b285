-- A fair queue (core.store.jobs.claim_next). Within a GPU type's queue, a job requeued after its runner or its
-- dispatcher was lost goes first; then the users take turns: the next job goes to the user whose last claimed job
-- of that GPU type is the oldest (a user never served first), and it is that user's oldest ready job. One user's
-- 500 queued jobs no longer hold back a user who queues one.

-- The submitter, copied onto the job so that the claim finds each user's oldest queued job in one index probe
-- instead of joining every queued job to its submission.
ALTER TABLE jobs ADD COLUMN user_id bigint REFERENCES users (id);
UPDATE jobs j SET user_id = s.user_id FROM submissions s WHERE s.id = j.submission_id;
ALTER TABLE jobs ALTER COLUMN user_id SET NOT NULL;

-- Every insert of a job names its submission; the submitter follows from it. A trigger fills it so that no
-- insert (the submit statement, a moderator's rerun, a bench loading rows in bulk) can leave it out or get it
-- wrong.
CREATE FUNCTION jobs_fill_user_id() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.user_id := (SELECT s.user_id FROM submissions s WHERE s.id = NEW.submission_id);
    RETURN NEW;
END
$$;
CREATE TRIGGER jobs_fill_user_id BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_fill_user_id();

-- Set when the job went back to the queue after a dispatch (core.store.jobs.requeue): it already had its turn,
-- and lost it through no fault of its user, so it goes to the head of its queue. It stays set: a job requeued
-- twice is still a re-run.
ALTER TABLE jobs ADD COLUMN requeued boolean NOT NULL DEFAULT false;
UPDATE jobs SET requeued = true WHERE state = 'queued' AND attempts > 0;

-- Each user's queue of a GPU type, oldest first: the claim reads the first entry per user (and the distinct
-- users by skipping from one user's first entry to the next's).
CREATE INDEX jobs_fair_queue ON jobs (gpu_type, user_id, id) WHERE state = 'queued';
-- The re-runs waiting on a GPU type: few, read before anything else on every claim.
CREATE INDEX jobs_requeued_queue ON jobs (gpu_type, id) WHERE state = 'queued' AND requeued;

-- When each user was last served on each GPU type, as a turn number: the claim that dispatches a user's job
-- draws the next number in the same statement. A number, not a time, so two claims in one instant still differ.
CREATE SEQUENCE queue_turn_seq;
CREATE TABLE queue_turns (
    gpu_type  text NOT NULL,
    user_id   bigint NOT NULL REFERENCES users (id),
    turn      bigint NOT NULL,
    PRIMARY KEY (gpu_type, user_id)
);
