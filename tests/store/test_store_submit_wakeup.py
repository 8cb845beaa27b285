"""A stored submission wakes the dispatchers, by a notification sent once the submission is committed."""

from __future__ import annotations

import asyncio

import asyncpg

from core.store.jobs import QUEUE_CHANNEL
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request

# Only how long to wait for a notification that should come at once; not a budget of the submit path.
WAIT_S = 60.0


async def test_a_submission_notifies_its_gpu_types_queue_after_it_is_committed(pool: asyncpg.Pool, db_dsn: str):
    await add_problems(pool)
    listener = await asyncpg.connect(db_dsn)
    heard: asyncio.Queue[str] = asyncio.Queue()

    def notified(conn: object, pid: int, channel: str, payload: str) -> None:
        heard.put_nowait(payload)

    try:
        await listener.add_listener(QUEUE_CHANNEL, notified)
        receipt = await submit(pool, request("alice", gpu="h200"), ROOMY)
        assert await asyncio.wait_for(heard.get(), WAIT_S) == "h200"
        # Sent after the commit: the job is there for whichever dispatcher wakes.
        state = await listener.fetchval("SELECT state FROM jobs WHERE id = $1", receipt.job_id)
        assert state == "queued"
        retried = request("alice", gpu="h200", token="t-1")
        again = await submit(pool, retried, ROOMY)
        await asyncio.wait_for(heard.get(), WAIT_S)
        repeat = await submit(pool, retried, ROOMY)
        assert repeat.duplicate and repeat.submission_id == again.submission_id
        await asyncio.sleep(0.5)  # a repeat stores no job, so it wakes nobody
        assert heard.empty()
    finally:
        await listener.close()
