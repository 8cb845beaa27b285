-- A fast fair claim. The claim (core.store.jobs.claim_next) took the users waiting in a mode's queue by skipping
-- through `jobs_fair_queue` from one user's first entry to the next's, then sorted them by their last turn: one
-- index probe per waiting user on every claim, about 20 ms with 1,000 users and 100,000 queued jobs, and the
-- dispatcher claims once per free runner slot. Here the waiting users are kept, by triggers, in a small table
-- indexed in the claim's order, so that the next user is the first entry of one index.

-- One row per (GPU type, user, mode) that ever had a queued job: how many of its jobs are queued now, the user's
-- last turn on the GPU type (queue_turns.turn; NULL: never served there) and the job that began its present wait.
-- A row whose count falls to 0 stays (the partial index below leaves it out): deleting it could race with an
-- insert of the user's next job, and a lost row would strand that job.
CREATE TABLE queue_waiters (
    gpu_type  text NOT NULL,
    user_id   bigint NOT NULL REFERENCES users (id),
    mode      text NOT NULL,
    queued    integer NOT NULL CHECK (queued >= 0),
    turn      bigint,
    -- The first job queued since the count was last 0: the user's oldest queued job of the mode unless that one
    -- left the queue without a claim (withdrawn); orders the users never served, as their oldest job did.
    since     bigint NOT NULL,
    PRIMARY KEY (gpu_type, user_id, mode)
);

-- The claim's order within a mode: the user served longest ago first (never served: first of all), then the one
-- waiting longest.
CREATE INDEX queue_waiters_next ON queue_waiters (gpu_type, mode, turn NULLS FIRST, since) WHERE queued > 0;

INSERT INTO queue_waiters (gpu_type, user_id, mode, queued, turn, since)
SELECT j.gpu_type, j.user_id, j.mode, count(*), min(t.turn), min(j.id)
FROM jobs j LEFT JOIN queue_turns t ON t.gpu_type = j.gpu_type AND t.user_id = j.user_id
WHERE j.state = 'queued'
GROUP BY j.gpu_type, j.user_id, j.mode;

-- A job entering the queue (inserted queued, or requeued) counts for its user's row; one leaving it (claimed,
-- withdrawn, failed, deleted) no longer does. Row locks on the waiter row order concurrent changes, so the count
-- is exact; the claim still checks the jobs themselves, so a count that were ever too high would cost a probe,
-- never a wrong pick.
CREATE FUNCTION queue_waiters_enter() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_waiters AS w (gpu_type, user_id, mode, queued, turn, since)
    VALUES (NEW.gpu_type, NEW.user_id, NEW.mode, 1,
            (SELECT t.turn FROM queue_turns t WHERE t.gpu_type = NEW.gpu_type AND t.user_id = NEW.user_id), NEW.id)
    ON CONFLICT (gpu_type, user_id, mode) DO UPDATE
        SET queued = w.queued + 1, since = CASE WHEN w.queued = 0 THEN excluded.since ELSE w.since END;
    RETURN NULL;
END
$$;

CREATE FUNCTION queue_waiters_leave() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queue_waiters SET queued = queued - 1
    WHERE gpu_type = OLD.gpu_type AND user_id = OLD.user_id AND mode = OLD.mode AND queued > 0;
    RETURN NULL;
END
$$;

CREATE TRIGGER queue_waiters_insert AFTER INSERT ON jobs
    FOR EACH ROW WHEN (NEW.state = 'queued') EXECUTE FUNCTION queue_waiters_enter();
CREATE TRIGGER queue_waiters_requeue AFTER UPDATE OF state ON jobs
    FOR EACH ROW WHEN (OLD.state <> 'queued' AND NEW.state = 'queued') EXECUTE FUNCTION queue_waiters_enter();
CREATE TRIGGER queue_waiters_dequeue AFTER UPDATE OF state ON jobs
    FOR EACH ROW WHEN (OLD.state = 'queued' AND NEW.state <> 'queued') EXECUTE FUNCTION queue_waiters_leave();
CREATE TRIGGER queue_waiters_delete AFTER DELETE ON jobs
    FOR EACH ROW WHEN (OLD.state = 'queued') EXECUTE FUNCTION queue_waiters_leave();

-- A user's new turn on a GPU type (the claim draws it) moves their rows of every mode there. A row made by an insert
-- that ran beside that claim, before it committed, keeps the turn before it until the user's next claim: it can put
-- that user one place early in one mode, once.
CREATE FUNCTION queue_waiters_turn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queue_waiters SET turn = NEW.turn WHERE gpu_type = NEW.gpu_type AND user_id = NEW.user_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER queue_waiters_turn AFTER INSERT OR UPDATE OF turn ON queue_turns
    FOR EACH ROW EXECUTE FUNCTION queue_waiters_turn();
