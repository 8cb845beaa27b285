"""The API process's shared poll of job moves (`core.submit.events.EventFeed`), on the real store: a move wakes
the streams of its submission and no other, and a move whose id was taken before a later move committed (two
dispatchers' transactions, the first still open when the poll passed its id) still wakes its stream once it
commits, rather than waiting for the stream's own fallback read."""

from __future__ import annotations

import asyncio

import asyncpg

from core.store import jobs
from core.submit.events import EventFeed
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request


async def woken(watch_moved: asyncio.Event, within_s: float) -> bool:
    try:
        async with asyncio.timeout(within_s):
            await watch_moved.wait()
    except TimeoutError:
        return False
    return True


async def test_a_move_committed_after_a_later_one_still_wakes_its_stream(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    first = await submit(pool, request("alice", mode="test"), ROOMY)
    second = await submit(pool, request("bob", mode="test"), ROOMY)
    third = await submit(pool, request("carol", mode="test"), ROOMY)
    feed = EventFeed(pool, poll_s=0.05)
    try:
        async with feed.watch(first.submission_id) as mine, feed.watch(third.submission_id) as other:
            async with pool.acquire() as slow:
                transaction = slow.transaction()
                await transaction.start()
                # The first job's move takes its id now, and commits only after the second job's later move.
                assert await jobs.claim_job(slow, first.job_id, "dispatcher-a", 30.0, "runner-a") is not None
                assert await jobs.claim_job(pool, second.job_id, "dispatcher-b", 30.0, "runner-b") is not None
                await asyncio.sleep(0.5)  # several polls pass the second move's id
                assert not mine.moved.is_set(), "its move is not committed yet"
                await transaction.commit()
            assert await woken(mine.moved, 10.0), "the move passed over wakes its stream once it commits"
            assert not other.moved.is_set(), "no move of its own: not woken"
    finally:
        await feed.close()
