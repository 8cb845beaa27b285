-- The fleet (core/fleet.py, api/): runners join a pool with a bootstrap token, get a credential of their own,
-- register the address where dispatchers reach them and their hardware, and send heartbeats. A pool is a GPU type
-- (`h100`): the boards' key, and the `gpu_type` of the jobs its runners take.

-- A bootstrap token lets any runner join one pool. Only its SHA-256 is kept: the operator sees the token once.
CREATE TABLE runner_join_tokens (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    gpu_type      text NOT NULL CHECK (length(gpu_type) BETWEEN 1 AND 64),
    token_sha256  bytea NOT NULL UNIQUE,
    -- The token's first characters, so that an operator can tell tokens apart in a listing.
    prefix        text NOT NULL,
    note          text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz
);

-- One row per join: a runner that restarts joins again and gets a new row (and a new credential); the old row
-- leaves. States: `joined` (credential issued, not registered yet), `active` (registered and heard from),
-- `draining` (finishing the job in hand, takes no new one), `left` (deregistered, or not heard from), `revoked`
-- (an operator revoked its credential), `refused` (its hardware does not match its pool).
CREATE TABLE runners (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    gpu_type           text NOT NULL,
    join_token_id      bigint REFERENCES runner_join_tokens (id),
    state              text NOT NULL DEFAULT 'joined'
                       CHECK (state IN ('joined', 'active', 'draining', 'left', 'revoked', 'refused')),
    url                text,
    slots              integer NOT NULL DEFAULT 1 CHECK (slots BETWEEN 1 AND 64),
    -- What the runner reported when it registered: runner.api.RunnerHardware.
    hardware           jsonb,
    joined_at          timestamptz NOT NULL DEFAULT now(),
    registered_at      timestamptz,
    last_seen_at       timestamptz NOT NULL DEFAULT now(),
    left_at            timestamptz,
    note               text,
    -- The timestamp (Unix seconds, as signed) of the last request the API accepted from this runner. A signed request
    -- must be newer, so none can be replayed to any replica of the API, however many there are.
    last_request_ts    double precision NOT NULL DEFAULT 0,
    -- Canaries (core/canary.py): a quarantined runner takes no ranked job.
    quarantined_at     timestamptz,
    quarantine_reason  text,
    last_good_canary_at timestamptz
);
CREATE UNIQUE INDEX runners_one_live_name ON runners (name) WHERE state IN ('joined', 'active', 'draining');
CREATE INDEX runners_live ON runners (gpu_type) WHERE state IN ('active', 'draining');

-- The credential each runner signs with, and with which dispatchers sign what they send it. Apart from `runners`
-- so that the web's read-only role, which may read every table, is refused this one.
CREATE TABLE runner_secrets (
    runner_id  bigint PRIMARY KEY REFERENCES runners (id),
    secret     text NOT NULL
);
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'arena_web_reader') THEN
        EXECUTE 'REVOKE ALL ON runner_secrets FROM arena_web_reader';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot revoke runner_secrets from arena_web_reader';
END
$$;

-- Every canary measurement a runner reported, and what the core made of it.
CREATE TABLE runner_canaries (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    runner_id    bigint NOT NULL REFERENCES runners (id),
    measured_at  timestamptz NOT NULL DEFAULT now(),
    set_version  integer NOT NULL,
    report       jsonb NOT NULL,
    verdict      text NOT NULL CHECK (verdict IN ('ok', 'drifted', 'needs_confirmation', 'no_baseline')),
    detail       text NOT NULL DEFAULT ''
);
CREATE INDEX runner_canaries_latest ON runner_canaries (runner_id, id DESC);

-- A ranked result timed on a runner whose canaries drifted afterwards: flagged until a moderator reruns it.
ALTER TABLE submissions ADD COLUMN timing_flag text;
