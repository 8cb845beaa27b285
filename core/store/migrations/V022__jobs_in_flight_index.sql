-- The jobs in flight of a GPU type, counted for every start estimate (core.store.jobs: start_estimate, estimate_at,
-- a queued submission's progress and /quota): the count read `state IN ('dispatched', 'running')`, which the
-- partial index of live jobs (jobs_one_live_per_submission, queued ones too) also serves, and the planner took
-- that index, whose statistics, read while hardly any job was queued, call it empty. With 10,000 jobs queued
-- each count then read every one of them: 11 ms from the cache, 103 ms from the disk, for a count of a few.
-- A job is in flight exactly when it holds a lease token (the CHECK jobs_check), and no other index's predicate
-- follows from `lease_token IS NOT NULL`: the count, written so, can only be read from this index.
CREATE INDEX jobs_in_flight ON jobs (gpu_type) WHERE lease_token IS NOT NULL;
