-- A fair queue (core.store.jobs.claim_next). Within a GPU type's queue, a job requeued after its runner or its
-- dispatcher was lost goes first; then, while a contest that reserves a share of the pool has fewer of its ranked
-- runs in flight than its share, the contest's oldest job; then the modes in their priority order
-- (core.store.jobs.MODE_PRIORITY), and within a mode the users take turns: the next job goes to the user whose last
-- claimed job of that GPU type is the oldest (a user never served first), and it is that user's oldest ready job of
-- the mode. One user's 500 queued jobs no longer hold back a user who queues one.

-- The submitter and the mode, copied onto the job so that the claim finds each user's oldest queued job of a mode
-- in one index probe instead of joining every queued job to its submission.
ALTER TABLE jobs ADD COLUMN user_id bigint REFERENCES users (id);
ALTER TABLE jobs ADD COLUMN mode text;
UPDATE jobs j SET user_id = s.user_id, mode = s.mode FROM submissions s WHERE s.id = j.submission_id;
ALTER TABLE jobs ALTER COLUMN user_id SET NOT NULL;
ALTER TABLE jobs ALTER COLUMN mode SET NOT NULL;

-- Every insert of a job names its submission; the submitter and the mode follow from it. A trigger fills them so
-- that no insert (the submit statement, a moderator's rerun, a bench loading rows in bulk) can leave them out or
-- get them wrong. A submission's user and mode never change, so an insert is the only moment to copy them.
CREATE FUNCTION jobs_fill_from_submission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT s.user_id, s.mode INTO NEW.user_id, NEW.mode FROM submissions s WHERE s.id = NEW.submission_id;
    RETURN NEW;
END
$$;
CREATE TRIGGER jobs_fill_from_submission BEFORE INSERT ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_fill_from_submission();

-- Set when the job went back to the queue after a dispatch (core.store.jobs.requeue): it already had its turn,
-- and lost it through no fault of its user, so it goes to the head of its queue. It stays set: a job requeued
-- twice is still a re-run.
ALTER TABLE jobs ADD COLUMN requeued boolean NOT NULL DEFAULT false;
UPDATE jobs SET requeued = true WHERE state = 'queued' AND attempts > 0;

-- Each user's queue of a mode on a GPU type, oldest first: the claim reads the first entry per user (and the
-- distinct users of a mode by skipping from one user's first entry to the next's).
CREATE INDEX jobs_fair_queue ON jobs (gpu_type, mode, user_id, id) WHERE state = 'queued';
-- The queued ranked runs of a GPU type by age: a contest that reserves a share of its pool reads its oldest queued
-- run from here, starting at the contest's start (core.store.jobs._RESERVED_PICK), so it passes over only the
-- ranked runs queued since then that are not the contest's.
CREATE INDEX jobs_ranked_queue ON jobs (gpu_type, created_at, id) WHERE state = 'queued' AND mode = 'ranked';
-- A user's own queued jobs, whatever their GPU type and mode: `/quota` lists them with their places.
CREATE INDEX jobs_user_queue ON jobs (user_id) WHERE state = 'queued';
-- The re-runs waiting on a GPU type: few, read before anything else on every claim.
CREATE INDEX jobs_requeued_queue ON jobs (gpu_type, id) WHERE state = 'queued' AND requeued;

-- When each user was last served on each GPU type, as a turn number: the claim that dispatches a user's job
-- draws the next number in the same statement. A number, not a time, so two claims in one instant still differ.
-- One turn per GPU type, whatever the mode: a user just served a test run waits behind others for their ranked
-- run too, since both took the same pool's time.
CREATE SEQUENCE queue_turn_seq;
CREATE TABLE queue_turns (
    gpu_type  text NOT NULL,
    user_id   bigint NOT NULL REFERENCES users (id),
    turn      bigint NOT NULL,
    PRIMARY KEY (gpu_type, user_id)
);

-- The share of its GPU types' runner slots a contest keeps for its ranked runs while it runs (NULL: none). While
-- fewer of its runs are in flight on a target's GPU type than this share of the type's slots, its oldest queued
-- run goes before every other job but a re-run.
ALTER TABLE contests ADD COLUMN reserve_share double precision CHECK (reserve_share > 0 AND reserve_share <= 1);
