-- The web signs users in with a personal token of theirs in its session cookie (web/session.py), and checks that
-- token on every page through its read-only role: that role now reads personal_tokens, which V017 kept from it.
-- It reads only; tokens are made and revoked by the API service. A token's row holds its SHA-256, never the token,
-- and a token is 256 random bits, so what the role reads does not give a token away.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'arena_web_reader') THEN
        EXECUTE 'GRANT SELECT ON personal_tokens TO arena_web_reader';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant personal_tokens to arena_web_reader; web sign-in needs it (docs/web.md)';
END
$$;
