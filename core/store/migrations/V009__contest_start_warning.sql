-- The notice before a contest's start that one of its GPU types has no runner (nobody could enter it there): posted
-- once, claimed (the column set) in the same statement that finds it unclaimed, as V007's notices are. A change of
-- the contest's targets or start clears it, so the changed contest is checked again.
ALTER TABLE contests ADD COLUMN start_warning_at timestamptz;

CREATE INDEX contests_start_warning_due ON contests (starts_at) WHERE start_warning_at IS NULL AND cancelled_at IS NULL;
