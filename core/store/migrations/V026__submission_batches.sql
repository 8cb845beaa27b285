-- A batch: up to 16 variants of one problem sent together by one user (POST /v1/submissions/batches, `arena
-- submit SLUG a.cu b.cu ...`). Each variant is a submission of its own, with its own job, quota charge and place
-- in the fair queue; the batch only groups them, in the order they were sent, for one status and one ranked table.
CREATE TABLE submission_batches (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users (id),
    problem_id  bigint NOT NULL REFERENCES problems (id),
    mode        text NOT NULL CHECK (mode IN ('test', 'benchmark', 'ranked', 'profile')),
    dtype       text NOT NULL CHECK (dtype IN ('float32', 'float16', 'bfloat16')),
    gpu_type    text NOT NULL,
    -- The caller's Idempotency-Key: a retry of the same batch answers the first one.
    client_token text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, client_token)
);

CREATE TABLE batch_members (
    batch_id      bigint NOT NULL REFERENCES submission_batches (id),
    position      integer NOT NULL CHECK (position >= 0 AND position < 16),
    submission_id bigint NOT NULL UNIQUE REFERENCES submissions (id),
    PRIMARY KEY (batch_id, position)
);
