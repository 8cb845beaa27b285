"""Rate limits per user and mode, kept in Postgres: bursts, refill, restarts and concurrency."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from core.errors import RateLimitedError
from core.ratelimit import describe_wait, remaining
from core.settings import RateLimitSettings
from core.store.pool import create_pool
from core.submit.intake import submit
from tests.store.store_helpers import add_problems, count, request

TIGHT = RateLimitSettings(ranked_burst=2, ranked_per_hour=60, test_burst=5, test_per_hour=60)


async def test_a_user_past_the_burst_is_refused_with_the_wait(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit(pool, request("alice"), TIGHT)
    await submit(pool, request("alice"), TIGHT)
    with pytest.raises(RateLimitedError, match="Try again in") as refused:
        await submit(pool, request("alice"), TIGHT)
    # One token comes back every minute at 60 an hour.
    assert 55 <= refused.value.retry_after_s <= 60
    assert await count(pool, "submissions") == 2 and await count(pool, "jobs") == 2


async def test_limits_are_separate_per_user_and_per_mode(pool: asyncpg.Pool):
    await add_problems(pool)
    for _ in range(2):
        await submit(pool, request("alice"), TIGHT)
    await submit(pool, request("alice", mode="test"), TIGHT)
    await submit(pool, request("bob"), TIGHT)
    user_id = await pool.fetchval("SELECT id FROM users WHERE external_id = 'discord:alice'")
    assert await remaining(pool, user_id, "ranked", TIGHT) == 0
    assert await remaining(pool, user_id, "test", TIGHT) == 4


async def test_limits_survive_a_restart(pool: asyncpg.Pool, db_dsn: str):
    await add_problems(pool)
    for _ in range(2):
        await submit(pool, request("alice"), TIGHT)
    await pool.close()
    async with create_pool(db_dsn, min_size=1, max_size=2) as restarted:
        with pytest.raises(RateLimitedError):
            await submit(restarted, request("alice"), TIGHT)


async def test_tokens_come_back_as_time_passes(pool: asyncpg.Pool):
    await add_problems(pool)
    for _ in range(2):
        await submit(pool, request("alice"), TIGHT)
    # Move the bucket's clock back 90 s: one and a half tokens refilled at 60 an hour.
    await pool.execute("UPDATE rate_limits SET updated_at = updated_at - interval '90 seconds'")
    await submit(pool, request("alice"), TIGHT)
    with pytest.raises(RateLimitedError):
        await submit(pool, request("alice"), TIGHT)


async def test_concurrent_submits_by_one_user_never_exceed_the_burst(pool: asyncpg.Pool):
    await add_problems(pool)
    burst = RateLimitSettings(ranked_burst=5, ranked_per_hour=1)
    outcomes = await asyncio.gather(*(submit(pool, request("alice"), burst) for _ in range(20)), return_exceptions=True)
    accepted = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, RateLimitedError)]
    assert len(accepted) == 5 and len(refused) == 15
    assert await count(pool, "submissions") == 5


def test_waits_are_described_in_the_largest_sensible_unit():
    assert describe_wait(0.2) == "1 second"
    assert describe_wait(59.5) == "60 seconds"
    assert describe_wait(600) == "10 minutes"
    assert describe_wait(3 * 3600) == "3.0 hours"
