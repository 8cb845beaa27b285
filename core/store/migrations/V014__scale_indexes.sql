-- What the boards need at 10 million submissions (bench/store_10m.py, bench/results/store_10m.md).
--
-- Every board read (the bot's /leaderboard and its rank, the CLI, a problem's web page) first chooses the fullest
-- timing method's board, and the web's problem page lists the problem's boards fullest first. Both counted the
-- board's entries on every read: on a board of 14,000 users that count was 2.2 ms of a 5 ms budget, and a busy
-- problem's list of boards counted all of its boards. The size of each board is kept here instead, per language as
-- the entries are, and read in one index probe.
--
-- The sizes follow `leaderboard_entries` by statement-level triggers, whatever writes it (core/store/leaderboard.py's
-- refreshes and rebuild): each statement adds or takes away the rows it inserted or deleted, per board. A size row is
-- locked by the statement that changes it until its transaction ends, in the order of its key, so two results on
-- the same board wait for each other instead of losing a count, and never deadlock.
CREATE TABLE leaderboard_sizes (
    problem_id       bigint NOT NULL,
    problem_version  integer NOT NULL,
    gpu_type         text NOT NULL,
    dtype            text NOT NULL,
    method           text NOT NULL,
    language         text NOT NULL,
    entries          integer NOT NULL CHECK (entries >= 0),
    PRIMARY KEY (problem_id, problem_version, gpu_type, dtype, method, language)
);

INSERT INTO leaderboard_sizes (problem_id, problem_version, gpu_type, dtype, method, language, entries)
SELECT problem_id, problem_version, gpu_type, dtype, method, language, count(*)
FROM leaderboard_entries GROUP BY problem_id, problem_version, gpu_type, dtype, method, language;

CREATE FUNCTION leaderboard_sizes_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        DELETE FROM leaderboard_sizes;
        RETURN NULL;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM 1 FROM leaderboard_sizes s
        WHERE (s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method, s.language) IN (
            SELECT problem_id, problem_version, gpu_type, dtype, method, language FROM removed)
        ORDER BY s.problem_id, s.problem_version, s.gpu_type, s.dtype, s.method, s.language
        FOR UPDATE;
        UPDATE leaderboard_sizes s SET entries = s.entries - r.n
        FROM (SELECT problem_id, problem_version, gpu_type, dtype, method, language, count(*) AS n
              FROM removed GROUP BY problem_id, problem_version, gpu_type, dtype, method, language) r
        WHERE s.problem_id = r.problem_id AND s.problem_version = r.problem_version AND s.gpu_type = r.gpu_type
          AND s.dtype = r.dtype AND s.method = r.method AND s.language = r.language;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO leaderboard_sizes AS s (problem_id, problem_version, gpu_type, dtype, method, language, entries)
        SELECT problem_id, problem_version, gpu_type, dtype, method, language, count(*)
        FROM added GROUP BY problem_id, problem_version, gpu_type, dtype, method, language
        ORDER BY problem_id, problem_version, gpu_type, dtype, method, language
        ON CONFLICT (problem_id, problem_version, gpu_type, dtype, method, language)
            DO UPDATE SET entries = s.entries + EXCLUDED.entries;
    END IF;
    RETURN NULL;
END
$$;

-- A trigger with transition tables takes one event, so each event has its own.
CREATE TRIGGER leaderboard_sizes_insert AFTER INSERT ON leaderboard_entries
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION leaderboard_sizes_follow();
CREATE TRIGGER leaderboard_sizes_delete AFTER DELETE ON leaderboard_entries
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION leaderboard_sizes_follow();
CREATE TRIGGER leaderboard_sizes_update AFTER UPDATE ON leaderboard_entries
    REFERENCING OLD TABLE AS removed NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION leaderboard_sizes_follow();
CREATE TRIGGER leaderboard_sizes_truncate AFTER TRUNCATE ON leaderboard_entries
    FOR EACH STATEMENT EXECUTE FUNCTION leaderboard_sizes_follow();
