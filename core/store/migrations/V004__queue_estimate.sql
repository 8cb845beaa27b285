-- The start estimate of a queued job reads the latest finished jobs of its GPU type (core.store.jobs.start_estimate):
-- this keeps that read to the index's first rows however many jobs the store holds.
CREATE INDEX jobs_recent_finished ON jobs (gpu_type, finished_at DESC)
    WHERE finished_at IS NOT NULL AND started_at IS NOT NULL;
