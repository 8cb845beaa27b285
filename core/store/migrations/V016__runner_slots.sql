-- A runner's slots, counted in the store. Each dispatcher (every replica of the API runs one) kept its own count of
-- the jobs it had sent to each runner, so two dispatchers could each send a runner of one slot a job at once: the
-- second waited in the runner's own queue while another runner stood idle. A claim for a fleet runner now takes a
-- lock of that runner's first, and finds room only while fewer of the jobs in flight name it than it has slots.

-- In a function, so that the count is a statement of its own: under READ COMMITTED it sees the claims that
-- committed while this one waited for the lock, which a subquery of the claim's own statement (its snapshot taken
-- before the wait) would not. The lock is a transaction-level advisory lock on the runner's name, held until the
-- claim commits, so claims for one runner go one at a time; unlike the row's lock it writes nothing and does not
-- hold up the runner's heartbeats. A runner the fleet does not list (the local runner of a bot or CLI) has room
-- whenever its one dispatcher says so.
CREATE FUNCTION runner_has_room(runner_name text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    capacity integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('runner-slots:' || runner_name, 0));
    SELECT slots INTO capacity FROM runners
    WHERE name = runner_name AND state IN ('joined', 'active', 'draining');
    IF NOT FOUND THEN
        RETURN true;
    END IF;
    RETURN (SELECT count(*) FROM jobs WHERE runner = runner_name AND state IN ('dispatched', 'running')) < capacity;
END
$$;

-- The count above reads the jobs in flight of one runner: few, but the in-flight index is on lease_until.
CREATE INDEX jobs_runner_in_flight ON jobs (runner) WHERE state IN ('dispatched', 'running');

-- How many of each waiting user's queued jobs of a mode are re-runs, kept by the same triggers as the count: the
-- queue position (core.store.jobs._POSITION_CTES) then reads only this small table, not the queued jobs, whose
-- partial indexes the planner misjudges (their statistics see hardly any job queued). A job is marked `requeued`
-- as it enters the queue again and stays so, so the flag on entering and on leaving is the same.
ALTER TABLE queue_waiters ADD COLUMN reruns integer NOT NULL DEFAULT 0 CHECK (reruns >= 0);
UPDATE queue_waiters w SET reruns = (
    SELECT count(*) FROM jobs j
    WHERE j.state = 'queued' AND j.requeued AND j.gpu_type = w.gpu_type AND j.user_id = w.user_id AND j.mode = w.mode
) WHERE w.queued > 0;
CREATE INDEX queue_waiters_reruns ON queue_waiters (gpu_type) WHERE reruns > 0;

CREATE OR REPLACE FUNCTION queue_waiters_enter() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_waiters AS w (gpu_type, user_id, mode, queued, reruns, turn, since)
    VALUES (NEW.gpu_type, NEW.user_id, NEW.mode, 1, NEW.requeued::int,
            (SELECT t.turn FROM queue_turns t WHERE t.gpu_type = NEW.gpu_type AND t.user_id = NEW.user_id), NEW.id)
    ON CONFLICT (gpu_type, user_id, mode) DO UPDATE
        SET queued = w.queued + 1, reruns = w.reruns + NEW.requeued::int,
            since = CASE WHEN w.queued = 0 THEN excluded.since ELSE w.since END;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION queue_waiters_leave() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queue_waiters SET queued = queued - 1, reruns = greatest(reruns - OLD.requeued::int, 0)
    WHERE gpu_type = OLD.gpu_type AND user_id = OLD.user_id AND mode = OLD.mode AND queued > 0;
    RETURN NULL;
END
$$;
