-- The ranks a submission runs on: 1 for a single-device problem, N for a distributed problem run on a runner's
-- slot of N ranks. Its job and board key is the pool's rank pool (`cpux2`, contract.names.rank_pool); the count
-- is kept beside it so that the job's spec sends it and its result and board rows say it.
ALTER TABLE submissions ADD COLUMN world_size integer NOT NULL DEFAULT 1 CHECK (world_size BETWEEN 1 AND 64);
