-- A case timed with the host's part of each call included: the judge's own clock saw each call take longer than
-- its timing events (host work inside the call, or work kept from the events), so the case was timed again by the
-- clock that sees all the work (`host_bound`), and where even that fell short, by the judge's clock itself
-- (`judge_clock`). Before these columns no case was timed so: a disagreement of the clocks was a verdict then.
-- `host_part_us` is the median host time inside each timed call (the launcher's clock), NULL where not reported.
ALTER TABLE case_results
    ADD COLUMN host_bound   boolean,
    ADD COLUMN judge_clock  boolean,
    ADD COLUMN host_part_us double precision;

UPDATE case_results SET host_bound = false, judge_clock = false WHERE kind = 'benchmark';
