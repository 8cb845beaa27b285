-- Kernel Arena: the initial schema. Accepted submissions are never deleted; moderation marks, it does not erase.

CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Where the user comes from and their id there: 'discord:80351110224678912', 'local:alice'.
    external_id   text NOT NULL UNIQUE CHECK (length(external_id) BETWEEN 1 AND 200),
    display_name  text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 100),
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE problems (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug             text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    title            text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    enabled          boolean NOT NULL DEFAULT true,
    current_version  integer NOT NULL,
    created_by       bigint REFERENCES users (id),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE problem_versions (
    problem_id     bigint NOT NULL REFERENCES problems (id),
    version        integer NOT NULL CHECK (version >= 1),
    -- The problem module's text; NULL for a problem built into the runners (they load it by slug).
    source         text,
    dtypes         text[] NOT NULL
                   CHECK (cardinality(dtypes) >= 1 AND dtypes <@ ARRAY['float32', 'float16', 'bfloat16']),
    score_metric   text NOT NULL DEFAULT 'gflops' CHECK (score_metric IN ('gflops', 'gbps')),
    created_by     bigint REFERENCES users (id),
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (problem_id, version)
);

-- Deferred so that a problem and its first version can be inserted in one transaction, in either order.
ALTER TABLE problems ADD CONSTRAINT problems_current_version_fkey
    FOREIGN KEY (id, current_version) REFERENCES problem_versions (problem_id, version)
    DEFERRABLE INITIALLY DEFERRED;

-- Source text stored once per distinct content: resubmitting a file costs one small row.
CREATE TABLE sources (
    sha256      bytea PRIMARY KEY CHECK (length(sha256) = 32),
    body        text NOT NULL,
    size_bytes  integer NOT NULL CHECK (size_bytes >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE submissions (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          bigint NOT NULL REFERENCES users (id),
    problem_id       bigint NOT NULL,
    problem_version  integer NOT NULL,
    source_sha256    bytea NOT NULL REFERENCES sources (sha256),
    file_name        text NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
    language         text NOT NULL CHECK (language IN ('cuda', 'python', 'triton')),
    dtype            text NOT NULL CHECK (dtype IN ('float32', 'float16', 'bfloat16')),
    mode             text NOT NULL CHECK (mode IN ('test', 'benchmark', 'ranked')),
    gpu_type         text NOT NULL CHECK (gpu_type ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'passed', 'failed', 'error')),
    -- The ranking figure of the latest finished run: geometric-mean GFLOPS (GB/s for bandwidth problems).
    score            double precision CHECK (score > 0 AND score < 'Infinity'),
    mean_score       double precision,
    score_metric     text CHECK (score_metric IN ('gflops', 'gbps')),
    device           text,
    runner           text,
    error_code       text,
    error_message    text,
    error_log        text,
    result_job_id    bigint,
    -- Mirrors a row in `invalidations`, so the ranking index can leave invalidated submissions out.
    invalidated      boolean NOT NULL DEFAULT false,
    -- The caller's idempotency key (a Discord interaction id): a retried submit returns the first submission.
    client_token     text CHECK (length(client_token) <= 200),
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    FOREIGN KEY (problem_id, problem_version) REFERENCES problem_versions (problem_id, version),
    UNIQUE (user_id, client_token)
);

CREATE INDEX submissions_user_history ON submissions (user_id, created_at DESC, id DESC);
-- A user's verified ranked runs on one board, best first: what the leaderboard refresh reads.
CREATE INDEX submissions_user_ranked ON submissions
    (user_id, problem_id, problem_version, gpu_type, dtype, score DESC, created_at, id)
    WHERE mode = 'ranked' AND status = 'passed' AND NOT invalidated AND score IS NOT NULL;

-- One row per attempt to evaluate a submission. A rerun adds a job; the old one keeps its results.
CREATE TABLE jobs (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    submission_id  bigint NOT NULL REFERENCES submissions (id),
    gpu_type       text NOT NULL,
    state          text NOT NULL DEFAULT 'queued'
                   CHECK (state IN ('queued', 'dispatched', 'running', 'done', 'failed', 'error')),
    attempts       integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    not_before     timestamptz NOT NULL DEFAULT now(),
    -- The dispatcher holding the job. Each claim or re-attach draws a fresh token; only its holder may finish.
    lease_owner    text,
    lease_token    uuid,
    lease_until    timestamptz,
    runner         text,
    last_error     text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    dispatched_at  timestamptz,
    started_at     timestamptz,
    finished_at    timestamptz,
    CHECK ((state IN ('dispatched', 'running')) = (lease_token IS NOT NULL))
);

ALTER TABLE submissions ADD CONSTRAINT submissions_result_job_fkey
    FOREIGN KEY (result_job_id) REFERENCES jobs (id);

CREATE INDEX jobs_queue ON jobs (gpu_type, id) WHERE state = 'queued';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE state IN ('dispatched', 'running');
CREATE INDEX jobs_submission ON jobs (submission_id);
CREATE UNIQUE INDEX jobs_one_live_per_submission ON jobs (submission_id)
    WHERE state IN ('queued', 'dispatched', 'running');

-- Every state change after `queued`, for audit and for proving a job finished exactly once.
CREATE TABLE job_transitions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id      bigint NOT NULL REFERENCES jobs (id),
    from_state  text NOT NULL,
    to_state    text NOT NULL,
    attempt     integer NOT NULL,
    owner       text,
    note        text,
    at          timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX job_transitions_job ON job_transitions (job_id, id);

-- Per-case results of one job: a verdict for each test case, a timing for each benchmark case.
CREATE TABLE case_results (
    job_id             bigint NOT NULL REFERENCES jobs (id),
    kind               text NOT NULL CHECK (kind IN ('test', 'benchmark')),
    idx                integer NOT NULL CHECK (idx >= 0),
    name               text NOT NULL,
    dims               bigint[] NOT NULL,
    passed             boolean,
    message            text,
    details            jsonb,
    method             text,
    runtime_median_us  double precision,
    runtime_mean_us    double precision,
    gflops             double precision,
    gflops_mean        double precision,
    gbps               double precision,
    flops              bigint,
    bytes              bigint,
    samples            integer,
    cv                 double precision,
    converged          boolean,
    PRIMARY KEY (job_id, kind, idx)
);

-- Each user's best verified ranked submission per board, kept in the result-recording transaction.
-- `language` is the board's filter: one row per language the user ranked in, plus 'any' for their overall best.
CREATE TABLE leaderboard_entries (
    problem_id       bigint NOT NULL,
    problem_version  integer NOT NULL,
    gpu_type         text NOT NULL,
    dtype            text NOT NULL,
    language         text NOT NULL CHECK (language IN ('any', 'cuda', 'python', 'triton')),
    user_id          bigint NOT NULL REFERENCES users (id),
    submission_id    bigint NOT NULL REFERENCES submissions (id),
    score            double precision NOT NULL,
    submitted_at     timestamptz NOT NULL,
    PRIMARY KEY (problem_id, problem_version, gpu_type, dtype, language, user_id),
    FOREIGN KEY (problem_id, problem_version) REFERENCES problem_versions (problem_id, version)
);

-- The board in rank order: the top 20 is the first 20 index entries.
CREATE INDEX leaderboard_entries_rank ON leaderboard_entries
    (problem_id, problem_version, gpu_type, dtype, language, score DESC, submitted_at, submission_id)
    INCLUDE (user_id);

CREATE TABLE bans (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users (id),
    reason      text NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    banned_by   bigint REFERENCES users (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    lifted_at   timestamptz,
    lifted_by   bigint REFERENCES users (id)
);

CREATE UNIQUE INDEX bans_one_active ON bans (user_id) WHERE lifted_at IS NULL;

CREATE TABLE invalidations (
    submission_id   bigint PRIMARY KEY REFERENCES submissions (id),
    reason          text NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    invalidated_by  bigint REFERENCES users (id),
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE audit_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor_id    bigint REFERENCES users (id),
    action      text NOT NULL CHECK (action IN (
                    'ban', 'unban', 'invalidate', 'restore', 'rerun',
                    'problem_create', 'problem_enable', 'problem_disable', 'problem_replace')),
    target      text NOT NULL,
    reason      text,
    details     jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX audit_log_target ON audit_log (target, id);

-- Token buckets per user and mode: survive restarts, and the row lock serialises one user's concurrent submits.
CREATE TABLE rate_limits (
    user_id     bigint NOT NULL REFERENCES users (id),
    mode        text NOT NULL CHECK (mode IN ('test', 'benchmark', 'ranked')),
    tokens      double precision NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (user_id, mode)
);
