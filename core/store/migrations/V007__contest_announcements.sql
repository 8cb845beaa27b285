-- Which contest notices were posted, so that a restarted bot (or a second one) neither repeats nor loses them: the
-- note that an ended contest waits for its last runs, and the podium once it froze. A notice is claimed (the column
-- set) in the same statement that finds it unclaimed, before it is posted.
ALTER TABLE contests
    ADD COLUMN waiting_announced_at timestamptz,
    ADD COLUMN podium_announced_at timestamptz;

-- Contests that froze before this migration were announced by the bot that froze them.
UPDATE contests SET podium_announced_at = frozen_at, waiting_announced_at = frozen_at WHERE frozen_at IS NOT NULL;

CREATE INDEX contests_podium_due ON contests (frozen_at) WHERE frozen_at IS NOT NULL AND podium_announced_at IS NULL;
