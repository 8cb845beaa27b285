-- Contests: a set of problems on chosen (GPU type, dtype) targets between a start and an end (UTC). The live
-- boards are computed from `submissions` (core.store.contests); what is stored here is the contest itself, who may
-- enter, the board as it froze at the end, and the ratings that the frozen board produced.

CREATE TABLE contests (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug          text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
    title         text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    starts_at     timestamptz NOT NULL,
    ends_at       timestamptz NOT NULL,
    visibility    text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'invite_only')),
    -- How the board combines problems; one rule so far (docs/contests.md), named so that another can be added.
    scoring       text NOT NULL DEFAULT 'rank_sum' CHECK (scoring IN ('rank_sum')),
    created_by    bigint REFERENCES users (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    cancelled_at  timestamptz,
    cancelled_by  bigint REFERENCES users (id),
    -- Set once, when the frozen standings are written; rated_at once, in the same transaction as the ratings.
    frozen_at     timestamptz,
    rated_at      timestamptz,
    CHECK (ends_at > starts_at),
    CHECK (cancelled_at IS NULL OR frozen_at IS NULL),
    CHECK (rated_at IS NULL OR frozen_at IS NOT NULL)
);

-- What `freeze_if_due` looks for: contests that ended and are neither frozen nor cancelled.
CREATE INDEX contests_to_freeze ON contests (ends_at) WHERE frozen_at IS NULL AND cancelled_at IS NULL;

-- The problems of a contest, each pinned to the version it is judged at: scores of two versions do not compare.
-- `public_before`: the problem was public when it joined the contest (built into the runners, or submitted to);
-- otherwise it is hidden from the problem list until the contest starts.
CREATE TABLE contest_problems (
    contest_id       bigint NOT NULL REFERENCES contests (id),
    problem_id       bigint NOT NULL,
    problem_version  integer NOT NULL,
    position         integer NOT NULL CHECK (position >= 0),
    public_before    boolean NOT NULL,
    PRIMARY KEY (contest_id, problem_id),
    FOREIGN KEY (problem_id, problem_version) REFERENCES problem_versions (problem_id, version)
);

-- Which contests a problem is in: the problem list's filter and the reveal policy read it from the problem's side.
CREATE INDEX contest_problems_problem ON contest_problems (problem_id);

-- The (GPU type, dtype) pairs whose ranked runs count.
CREATE TABLE contest_targets (
    contest_id  bigint NOT NULL REFERENCES contests (id),
    gpu_type    text NOT NULL CHECK (gpu_type ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    dtype       text NOT NULL CHECK (dtype IN ('float32', 'float16', 'bfloat16')),
    PRIMARY KEY (contest_id, gpu_type, dtype)
);

-- Who may enter an invite-only contest (a public one ignores this table).
CREATE TABLE contest_invitations (
    contest_id  bigint NOT NULL REFERENCES contests (id),
    user_id     bigint NOT NULL REFERENCES users (id),
    invited_by  bigint REFERENCES users (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (contest_id, user_id)
);

-- The board as it froze: one row per entrant, with the rank sum and the place (equal sums share a place).
CREATE TABLE contest_standings (
    contest_id  bigint NOT NULL REFERENCES contests (id),
    user_id     bigint NOT NULL REFERENCES users (id),
    place       integer NOT NULL CHECK (place >= 1),
    total       integer NOT NULL CHECK (total >= 0),
    PRIMARY KEY (contest_id, user_id)
);

CREATE INDEX contest_standings_place ON contest_standings (contest_id, place, user_id);

-- Each entrant's cell per (problem, GPU type, dtype) column of the frozen board: the rank they had there, or the
-- penalty rank (entrants + 1) with no submission when they had none.
CREATE TABLE contest_standing_cells (
    contest_id     bigint NOT NULL,
    user_id        bigint NOT NULL,
    problem_id     bigint NOT NULL,
    gpu_type       text NOT NULL,
    dtype          text NOT NULL,
    rank           integer NOT NULL CHECK (rank >= 1),
    submission_id  bigint REFERENCES submissions (id),
    score          double precision,
    method         text,
    PRIMARY KEY (contest_id, user_id, problem_id, gpu_type, dtype),
    FOREIGN KEY (contest_id, user_id) REFERENCES contest_standings (contest_id, user_id) ON DELETE CASCADE
);

-- Each user's current Glicko-2 rating (core/rating.py), changed only by rating a frozen contest.
CREATE TABLE ratings (
    user_id          bigint PRIMARY KEY REFERENCES users (id),
    rating           double precision NOT NULL,
    rd               double precision NOT NULL CHECK (rd > 0),
    volatility       double precision NOT NULL CHECK (volatility > 0),
    contests         integer NOT NULL CHECK (contests >= 1),
    last_contest_id  bigint NOT NULL REFERENCES contests (id),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

-- One row per user and rated contest: the primary key is what makes rating a contest twice impossible.
CREATE TABLE rating_history (
    user_id            bigint NOT NULL REFERENCES users (id),
    contest_id         bigint NOT NULL REFERENCES contests (id),
    place              integer NOT NULL CHECK (place >= 1),
    rating_before      double precision NOT NULL,
    rd_before          double precision NOT NULL,
    volatility_before  double precision NOT NULL,
    rating_after       double precision NOT NULL,
    rd_after           double precision NOT NULL,
    volatility_after   double precision NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, contest_id)
);

CREATE INDEX rating_history_contest ON rating_history (contest_id);

-- Whether others may read a user's contest code once the contest has ended. Allowed unless the user opts out.
ALTER TABLE users ADD COLUMN reveal_code boolean NOT NULL DEFAULT true;

-- The contest board reads a contest's ranked runs by problem and creation time.
CREATE INDEX submissions_contest_window ON submissions (problem_id, problem_version, created_at)
    INCLUDE (user_id, gpu_type, dtype)
    WHERE mode = 'ranked';

ALTER TABLE audit_log
    DROP CONSTRAINT audit_log_action_check,
    ADD CONSTRAINT audit_log_action_check CHECK (action IN (
        'ban', 'unban', 'invalidate', 'restore', 'rerun',
        'problem_create', 'problem_enable', 'problem_disable', 'problem_replace',
        'contest_create', 'contest_edit', 'contest_cancel', 'contest_invite', 'contest_amend'));
