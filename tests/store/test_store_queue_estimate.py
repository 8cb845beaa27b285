"""The start estimate a receipt and a live message show: place in the queue, jobs in flight, recent job times."""

from __future__ import annotations

import asyncio
import json

import asyncpg
import pytest

from core.settings import Settings
from core.store import jobs
from core.submit.intake import submit
from core.submit.service import ArenaService, SubmitTicket
from tests.store.store_helpers import ROOMY, add_problems, request


async def _finished(pool: asyncpg.Pool, seconds: float) -> None:
    """A job of `h100` that ran for `seconds` and finished."""
    receipt = await submit(pool, request("past"), ROOMY)
    await pool.execute(
        "UPDATE jobs SET state = 'done', started_at = now() - make_interval(secs => $2), finished_at = now() "
        "WHERE id = $1",
        receipt.job_id,
        seconds,
    )


async def _running(pool: asyncpg.Pool, n: int) -> None:
    """`n` jobs of `h100` running (dispatched and started under a lease)."""
    for _ in range(n):
        running = await submit(pool, request("carol"), ROOMY)
        await pool.execute(
            "UPDATE jobs SET state = 'running', lease_owner = 'x', lease_token = gen_random_uuid(), "
            "lease_until = now() + interval '1 minute', started_at = now() WHERE id = $1",
            running.job_id,
        )


async def test_no_estimate_before_any_job_of_the_gpu_type_finished(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    estimate = await jobs.start_estimate(pool, receipt.job_id)
    assert estimate.position == 1 and estimate.median_job_s is None and estimate.start_in_s is None


async def test_the_estimate_is_the_jobs_ahead_at_the_median_time_shared_by_the_jobs_in_flight(
    pool: asyncpg.Pool,
) -> None:
    await add_problems(pool)
    for seconds in (4.0, 6.0, 100.0):  # the median ignores the one slow job
        await _finished(pool, seconds)
    first = await submit(pool, request("alice"), ROOMY)
    second = await submit(pool, request("bob"), ROOMY)
    estimate = await jobs.start_estimate(pool, second.job_id)
    assert estimate.position == 2 and estimate.in_flight == 0
    assert estimate.median_job_s == pytest.approx(6.0, abs=0.01)
    assert estimate.start_in_s == pytest.approx(12.0, abs=0.05)
    # Two jobs running on the type: two slots share the work ahead.
    await _running(pool, 2)
    estimate = await jobs.start_estimate(pool, second.job_id)
    assert estimate.in_flight == 2 and estimate.start_in_s == pytest.approx(6.0, abs=0.05)
    # A job that left the queue has no estimate.
    await pool.execute("UPDATE jobs SET state = 'failed', finished_at = now() WHERE id = $1", first.job_id)
    assert (await jobs.start_estimate(pool, first.job_id)).start_in_s is None


async def test_a_burst_of_submissions_reads_its_gpu_types_pace_once_and_each_estimate_is_from_its_own_place(
    pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await add_problems(pool)
    await _finished(pool, 5.0)
    reads: list[str] = []
    real_read = jobs.estimate_at

    async def counted(conn: asyncpg.Pool, gpu_type: str, position: int) -> jobs.QueueEstimate:
        reads.append(gpu_type)
        await asyncio.sleep(0.5)  # a slow read: the other submissions find the pace unknown meanwhile
        return await real_read(conn, gpu_type, position)

    monkeypatch.setattr(jobs, "estimate_at", counted)
    service = ArenaService(pool, Settings(rate=ROOMY), lambda: ["h100"])

    async def one(i: int) -> SubmitTicket:
        r = request(f"user{i}", mode="benchmark")
        return await service.submit(
            user_external_id=r.user_external_id, user_name=r.user_name, slug=r.problem_slug,
            file_name=r.upload.file_name, data=r.upload.source.encode(), dtype=r.dtype, mode=r.mode, gpu=r.gpu_type,
            client_token=None,
        )  # fmt: skip

    tickets = await asyncio.gather(*(one(i) for i in range(8)))
    # Eight callers found no pace known; one read it, the others waited for that read.
    assert reads == ["h100"]
    # Each estimate is its own place's (places read beside each other's commits may tie), at the pace read once.
    for ticket in tickets:
        assert 1 <= ticket.receipt.queue_position <= 8
        assert ticket.start_in_s == pytest.approx(5.0 * ticket.receipt.queue_position, abs=0.05)


def _index_names(plan: object) -> set[str]:
    if isinstance(plan, dict):
        found = {plan["Index Name"]} if "Index Name" in plan else set()
        return found.union(*(_index_names(v) for v in plan.values()))
    if isinstance(plan, list):
        return set().union(*(_index_names(v) for v in plan))
    return set()


async def test_the_jobs_in_flight_are_counted_from_their_own_index_while_statistics_see_no_live_job(
    pool: asyncpg.Pool,
) -> None:
    await add_problems(pool)
    # Statistics read while no job was live, as a store's often are: the planner then thinks the index of live jobs
    # (queued ones too) empty, and took it for the count, reading every queued job.
    await pool.execute("VACUUM ANALYZE jobs")
    for i in range(100):
        await submit(pool, request(f"queued{i}", mode="benchmark"), ROOMY)
    await _running(pool, 2)
    assert (await jobs.estimate_at(pool, "h100", 1)).in_flight == 2
    count = f"SELECT count(*) FROM jobs r WHERE {jobs._IN_FLIGHT.format(gpu_type='$1')}"
    async with pool.acquire() as conn:
        # A test store is small enough to read whole: the plan at 10 million rows is an index's.
        await conn.execute("SET enable_seqscan = off")
        plan = json.loads(await conn.fetchval(f"EXPLAIN (FORMAT JSON) {count}", "h100"))
        await conn.execute("RESET enable_seqscan")
    assert _index_names(plan) == {"jobs_in_flight"}
