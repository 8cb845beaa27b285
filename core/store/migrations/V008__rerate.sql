-- Contest ratings change method: Glicko-2 with every pair of entrants counted as a full game gives way to Elo-MMR
-- (core/rating.py), which takes one contest as one observation and ages the players who sat it out.
--
-- The old values are kept: every rating_history row moves to rating_archive under the method's label. Then the
-- current ratings are emptied and every rated contest is marked unrated again. SQL cannot run the new method's
-- arithmetic, so the contests are rated again by core.contests.ratings: `arena db migrate` does it right after
-- this migration, and the next freeze does it too before it rates its own contest. Either way the contests are
-- rated in the order they ended, each in turn, and `contests.rated_at` marks which are done, so an interrupted
-- re-rating resumes where it stopped.

CREATE TABLE rating_archive (
    method             text NOT NULL,
    user_id            bigint NOT NULL REFERENCES users (id),
    contest_id         bigint NOT NULL REFERENCES contests (id),
    place              integer NOT NULL CHECK (place >= 1),
    rating_before      double precision NOT NULL,
    rd_before          double precision NOT NULL,
    volatility_before  double precision NOT NULL,
    rating_after       double precision NOT NULL,
    rd_after           double precision NOT NULL,
    volatility_after   double precision NOT NULL,
    -- When the method gave these values (the history row's created_at), and when they were set aside.
    rated_at           timestamptz NOT NULL,
    archived_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (method, user_id, contest_id)
);

INSERT INTO rating_archive (method, user_id, contest_id, place, rating_before, rd_before, volatility_before,
                            rating_after, rd_after, volatility_after, rated_at)
SELECT 'glicko2-all-pairs', user_id, contest_id, place, rating_before, rd_before, volatility_before, rating_after,
       rd_after, volatility_after, created_at
FROM rating_history;

DELETE FROM rating_history;
DELETE FROM ratings;
UPDATE contests SET rated_at = NULL WHERE rated_at IS NOT NULL;

-- From now on each history row names the method that computed it (core.rating.METHOD), so that a later change of
-- method can archive it the same way. The table is empty here, so the column needs no default.
ALTER TABLE rating_history ADD COLUMN method text NOT NULL;

-- A rated contest ages every rated player who did not enter it (core.rating.age): `periods_absent` counts the
-- rated contests a player has sat out since their last one, for the player's page and the tests.
ALTER TABLE ratings ADD COLUMN periods_absent integer NOT NULL DEFAULT 0 CHECK (periods_absent >= 0);

-- The frozen contests still to rate, in the order they are rated.
CREATE INDEX contests_unrated ON contests (ends_at, id) WHERE frozen_at IS NOT NULL AND rated_at IS NULL;
