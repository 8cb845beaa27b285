-- The role the public web leaderboard (`arena web`) acts as: it may read every table and write none. The web logs in
-- with the store's credentials (or its own, ARENA_WEB_DATABASE_URL) and takes this role at the start of every
-- connection (core/store/pool.py, open_reader_store), so any write among its queries fails with a permission error.
--
-- A role belongs to the whole server, not to this database: another database on the server may have created it
-- already, and a user without CREATEROLE cannot create it. In that case the rest still applies where it can, and
-- `arena web` refuses to start, naming the statements a database owner runs instead (README, "Web leaderboard").
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'arena_web_reader') THEN
        BEGIN
            CREATE ROLE arena_web_reader NOLOGIN;
        EXCEPTION
            -- Created meanwhile by a migration of another database on the same server.
            WHEN duplicate_object OR unique_violation THEN NULL;
            WHEN insufficient_privilege THEN
                RAISE NOTICE 'cannot create the role arena_web_reader (CREATEROLE is needed); arena web will say what to run';
                RETURN;
        END;
    END IF;
    -- The user that migrates (and that the web logs in as) may take the role.
    BEGIN
        EXECUTE format('GRANT arena_web_reader TO %I', current_user);
    EXCEPTION WHEN insufficient_privilege OR invalid_grant_operation THEN
        RAISE NOTICE 'cannot grant arena_web_reader to %; arena web will say what to run', current_user;
    END;
    BEGIN
        EXECUTE format('GRANT USAGE ON SCHEMA %I TO arena_web_reader', current_schema());
    EXCEPTION WHEN insufficient_privilege THEN
        NULL;  -- the schema's owner did not give this user the right to grant; PUBLIC's usage of it remains
    END;
    -- Reading only: every table there is now, and every table later migrations create.
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO arena_web_reader', current_schema());
    EXECUTE format(
        'ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT SELECT ON TABLES TO arena_web_reader',
        current_user,
        current_schema()
    );
END
$$;
