-- The timing protocol's version of a submission's latest run (runner.protocol: a digest of the judge's timing code
-- and the service's settings). Boards mark the entries whose protocol is not the current one, and a moderator
-- re-judges them. NULL for runs recorded before versions existed, and for runs that timed nothing.
ALTER TABLE submissions ADD COLUMN protocol text CHECK (protocol IS NULL OR protocol ~ '^tp-[0-9a-f]{12}$');
