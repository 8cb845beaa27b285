-- Results that read back as they were reported: every field of a runner's result is stored, and the timing
-- method is part of the submission and of the leaderboard's key, so that times measured by different methods
-- (a cold-L2 `arena` median, the seed's mean, a CPU clock) never rank against each other.

-- The per-case figures the first schema dropped. NULL where the runner reported none.
ALTER TABLE case_results
    ADD COLUMN rse               double precision,
    ADD COLUMN dropped_samples   integer CHECK (dropped_samples >= 0),
    ADD COLUMN sm_clock_mhz      double precision,
    ADD COLUMN temperature_c     double precision,
    ADD COLUMN measured_seconds  double precision,
    ADD COLUMN wall_clock_us     double precision,
    ADD COLUMN host_waits        boolean,
    ADD CHECK (method IS NULL OR method IN ('arena', 'seed', 'cpu'));

-- Timings written before these columns: nothing was dropped and no wait was flagged, as far as anyone knows.
UPDATE case_results SET dropped_samples = 0, host_waits = false WHERE kind = 'benchmark';

-- The latest run's summary, beside its verdict (status, score, device, error) that the submission already has.
ALTER TABLE submissions
    -- How the ranking figure was measured; NULL until a run timed something.
    ADD COLUMN method          text CHECK (method IN ('arena', 'seed', 'cpu')),
    ADD COLUMN geomean_gflops  double precision,
    ADD COLUMN mean_gflops     double precision,
    ADD COLUMN geomean_gbps    double precision,
    ADD COLUMN mean_gbps       double precision,
    ADD COLUMN notes           text[] NOT NULL DEFAULT '{}',
    ADD COLUMN phase_seconds   jsonb NOT NULL DEFAULT '{}';

-- Older submissions: the method their own timings recorded, else the only method each kind of runner used.
UPDATE submissions s SET method = coalesce(
    (SELECT c.method FROM case_results c
     WHERE c.job_id = s.result_job_id AND c.kind = 'benchmark' AND c.method IS NOT NULL
     ORDER BY c.idx LIMIT 1),
    CASE WHEN s.gpu_type = 'cpu' THEN 'cpu' ELSE 'arena' END)
WHERE s.score IS NOT NULL
   OR EXISTS (SELECT 1 FROM case_results c WHERE c.job_id = s.result_job_id AND c.kind = 'benchmark');

-- Their summary, as far as the score columns kept it.
UPDATE submissions SET
    geomean_gflops = CASE WHEN score_metric = 'gflops' THEN score END,
    mean_gflops    = CASE WHEN score_metric = 'gflops' THEN mean_score END,
    geomean_gbps   = CASE WHEN score_metric = 'gbps' THEN score END,
    mean_gbps      = CASE WHEN score_metric = 'gbps' THEN mean_score END
WHERE score IS NOT NULL OR mean_score IS NOT NULL;

DROP INDEX submissions_user_ranked;
CREATE INDEX submissions_user_ranked ON submissions
    (user_id, problem_id, problem_version, gpu_type, dtype, method, score DESC, created_at, id)
    WHERE mode = 'ranked' AND status = 'passed' AND NOT invalidated AND score IS NOT NULL;

-- The board gains the method in its key. Its rows are derived data: recomputed here as core/store/leaderboard.py
-- computes them, since a user's best on one method's board may not have been their best overall.
DROP INDEX leaderboard_entries_rank;
DELETE FROM leaderboard_entries;
ALTER TABLE leaderboard_entries
    ADD COLUMN method text NOT NULL CHECK (method IN ('arena', 'seed', 'cpu')),
    DROP CONSTRAINT leaderboard_entries_pkey,
    ADD PRIMARY KEY (problem_id, problem_version, gpu_type, dtype, method, language, user_id);

INSERT INTO leaderboard_entries (problem_id, problem_version, gpu_type, dtype, method, language, user_id,
                                 submission_id, score, submitted_at)
SELECT DISTINCT ON (lang, s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method, s.user_id)
       s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method, lang, s.user_id, s.id, s.score, s.created_at
FROM submissions s CROSS JOIN LATERAL unnest(ARRAY[s.language, 'any']) AS lang
WHERE s.mode = 'ranked' AND s.status = 'passed' AND NOT s.invalidated AND s.score IS NOT NULL
  AND s.method IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM bans b WHERE b.user_id = s.user_id AND b.lifted_at IS NULL)
ORDER BY lang, s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method, s.user_id, s.score DESC,
         s.created_at, s.id;

CREATE INDEX leaderboard_entries_rank ON leaderboard_entries
    (problem_id, problem_version, gpu_type, dtype, method, language, score DESC, submitted_at, submission_id)
    INCLUDE (user_id);
