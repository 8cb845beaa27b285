-- A claim keeps its user's `queue_waiters` rows (V015) itself, in one UPDATE of its own statement, rather than
-- through two triggers. A fair claim (core.store.jobs.claim_for_runner) changed the rows twice: the dequeue trigger
-- on jobs counted the claimed job out of its mode's row, then the trigger on queue_turns wrote the user's new turn
-- into every row of the user on the GPU type. Two trigger calls and two versions of the claimed mode's row (each
-- a new entry in every index of the table, since the count and the turn are both indexed): with the queue_turns
-- upsert, about a third of the claim's PostgreSQL time (bench/results/fleet.txt). The claim now counts its job out and writes the turn in one UPDATE of the user's
-- rows, which also locks them in one order (the key's) where the triggers locked the claimed mode's row first.
--
-- So the dequeue trigger leaves out the claims: a move to `dispatched` that names a runner. Only the claims make
-- that move (claim_for_runner and claim_job, whose statements count their job out; a job leased to be failed
-- because no runner answers, claim_stranded, names none). Every other way out of the queue (withdrawn, failed,
-- moved by hand, deleted) is still counted by the triggers. queue_turns stays the user's last turn, which a new
-- row of the user takes (queue_waiters_enter); the claim writes it in the same statement.
DROP TRIGGER queue_waiters_turn ON queue_turns;
DROP FUNCTION queue_waiters_turn();

DROP TRIGGER queue_waiters_dequeue ON jobs;
CREATE TRIGGER queue_waiters_dequeue AFTER UPDATE OF state ON jobs
    FOR EACH ROW WHEN (OLD.state = 'queued' AND NEW.state <> 'queued'
                       AND NOT (NEW.state = 'dispatched' AND NEW.runner IS NOT NULL))
    EXECUTE FUNCTION queue_waiters_leave();
