-- queue_waiters is small (a row per user, GPU type and mode that ever queued) and churns: every submission, claim
-- and finished job rewrites a row, and a row whose count moves between 0 and 1 enters or leaves the partial index
-- queue_waiters_next, leaving a dead entry there. The place of a new job (core.store.jobs.place_and_wake) and the
-- fair claim walk that index from its head, past every dead entry not yet vacuumed. With the default thresholds
-- (20 % of the table dead), a 10-million-submission store with 38,000 such rows reached 10.8 ms a place read after
-- two bursts of 5,000 submissions, against 0.46 ms right after a VACUUM (bench/results/store_10m_submit.txt).
-- Vacuum it after a fixed number of dead rows instead, however large it grows, and without the cost-based pauses:
-- a pass over this table takes milliseconds.
ALTER TABLE queue_waiters SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 2000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0
);
