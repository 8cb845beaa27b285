-- Personal access tokens (core/tokens.py): a competitor calls the public API (`api/`) as their own user, the same
-- row that their Discord runs use, so their quotas, bans and rating are one. Only the token's SHA-256 is kept: the
-- owner sees the token once, when it is created. Tokens are long random strings, so a plain hash is enough.
CREATE TABLE personal_tokens (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       bigint NOT NULL REFERENCES users (id),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    token_sha256  bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    -- The token's first characters (`arena_pat_` and a few of the secret), so that its owner can tell tokens apart.
    prefix        text NOT NULL,
    -- What the token may do: `read` (the read routes), `submit` (submissions and their events and code).
    scopes        text[] NOT NULL CHECK (cardinality(scopes) >= 1 AND scopes <@ ARRAY['read', 'submit']::text[]),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    revoked_at    timestamptz,
    -- Written at most once a minute per token (core/tokens.py), so that reads do not turn into writes.
    last_used_at  timestamptz
);
-- A user's listing, and the count that caps how many live tokens one user holds.
CREATE INDEX personal_tokens_user ON personal_tokens (user_id, id);

-- The web's read-only role reads every table; it has no use for token hashes.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'arena_web_reader') THEN
        EXECUTE 'REVOKE ALL ON personal_tokens FROM arena_web_reader';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot revoke personal_tokens from arena_web_reader';
END
$$;
