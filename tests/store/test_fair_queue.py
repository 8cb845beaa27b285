"""The fair queue: re-runs first, then the users take turns, each user's jobs oldest first (core.store.jobs)."""

from __future__ import annotations

import asyncio

import asyncpg
from store_helpers import ROOMY, add_problems, request

from core.store import jobs
from core.submissions import submit

LEASE_S = 60.0


async def _queue(pool: asyncpg.Pool, user: str, count: int = 1) -> list[int]:
    """Job ids of `count` new h100 submissions by `user`, in the order they were queued."""
    return [(await submit(pool, request(user), ROOMY)).job_id for _ in range(count)]


async def _user_of(pool: asyncpg.Pool, job_id: int) -> str:
    name: str = await pool.fetchval(
        "SELECT u.external_id FROM jobs j JOIN users u ON u.id = j.user_id WHERE j.id = $1", job_id
    )
    return name.removeprefix("discord:")


async def _claim(pool: asyncpg.Pool) -> jobs.Lease:
    lease = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")
    assert lease is not None, "the queue still holds jobs"
    return lease


async def test_a_light_users_job_is_not_stuck_behind_a_heavy_users_queue(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _queue(pool, "heavy", 50)
    # The heavy user has been served before the light user shows up.
    assert await _user_of(pool, (await _claim(pool)).job_id) == "heavy"
    (light,) = await _queue(pool, "light")
    assert await jobs.queue_position(pool, light) == 1
    claimed = [(await _claim(pool)).job_id for _ in range(2)]
    assert light in claimed


async def test_users_with_queued_jobs_take_turns(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    for user in ("ann", "bob", "cid"):
        await _queue(pool, user, 3)
    order = [await _user_of(pool, (await _claim(pool)).job_id) for _ in range(9)]
    assert order == ["ann", "bob", "cid"] * 3


async def test_each_users_jobs_go_oldest_first(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    queued = await _queue(pool, "solo", 5)
    assert [await jobs.queue_position(pool, job_id) for job_id in queued] == [1, 2, 3, 4, 5]
    assert [(await _claim(pool)).job_id for _ in queued] == queued
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1") is None


async def test_a_requeued_job_goes_before_newer_jobs(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (lost,) = await _queue(pool, "ann")
    lease = await _claim(pool)
    assert lease.job_id == lost
    # Newer work arrives, from a user never served and from the same user, while the runner is lost.
    newer = await _queue(pool, "bob", 2) + await _queue(pool, "ann", 1)
    assert await jobs.requeue(pool, lease, "runner lost", 0.0)
    assert await jobs.queue_position(pool, lost) == 1
    assert await jobs.queue_position(pool, newer[0]) == 2
    again = await _claim(pool)
    assert (again.job_id, again.attempts) == (lost, 2)


async def test_a_requeued_job_waits_out_its_backoff_without_blocking_the_queue(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (lost,) = await _queue(pool, "ann")
    assert await jobs.requeue(pool, await _claim(pool), "runner lost", 3600.0)
    (other,) = await _queue(pool, "bob")
    assert (await _claim(pool)).job_id == other
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1") is None
    job = await jobs.get_job(pool, lost)
    assert job is not None and job.state == "queued"


async def test_concurrent_claimers_never_take_the_same_job(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    queued = set()
    for user in ("ann", "bob", "cid", "dan"):
        queued.update(await _queue(pool, user, 5))

    async def claim_all(owner: str) -> list[int]:
        # Each claimer has its own connection, as two dispatchers do.
        async with pool.acquire() as conn:
            taken = []
            while (lease := await jobs.claim_next(conn, "h100", owner, LEASE_S, f"runner-{owner}")) is not None:
                taken.append(lease.job_id)
                await asyncio.sleep(0)
            return taken

    first, second = await asyncio.gather(claim_all("d1"), claim_all("d2"))
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(queued)


async def test_the_position_follows_the_turns(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    heavy = await _queue(pool, "heavy", 4)
    (light,) = await _queue(pool, "light")
    # Never served, both; the heavy user's first job is the older, so their turn comes first.
    assert await jobs.queue_position(pool, light) == 2
    assert await jobs.queue_position(pool, heavy[3]) == 5
    assert (await jobs.start_estimate(pool, light)).position == 2
    # Serving the heavy user once puts the light user's turn first.
    assert (await _claim(pool)).job_id == heavy[0]
    assert await jobs.queue_position(pool, light) == 1
    assert await jobs.queue_position(pool, heavy[1]) == 2
    assert (await _claim(pool)).job_id == light
    assert await jobs.queue_position(pool, light) == 0
