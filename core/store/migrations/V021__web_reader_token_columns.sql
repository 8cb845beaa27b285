-- V019 let the web's read-only role read all of personal_tokens. It needs less: the web keeps a signed-in user's
-- token in a cookie it signs itself, with the token's id (web/session.py), and checks on every page that the row
-- with that id is still live. So the role reads every column but the hash again, as V017 meant: it never looks a
-- token up by its secret, and a leak of its login gives no hash to try guesses against.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'arena_web_reader') THEN
        EXECUTE 'REVOKE ALL ON personal_tokens FROM arena_web_reader';
        EXECUTE 'GRANT SELECT (id, user_id, name, prefix, scopes, created_at, expires_at, revoked_at, last_used_at) '
            'ON personal_tokens TO arena_web_reader';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'cannot grant personal_tokens'' columns to arena_web_reader; web sign-in needs them (docs/web.md)';
END
$$;
