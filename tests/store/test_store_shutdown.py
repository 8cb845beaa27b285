"""Shutdown: the pool closes even when a task still holds a connection."""

from __future__ import annotations

import asyncio
import time

import asyncpg

from core.store.pool import close_pool, create_pool


async def _other_backends(dsn: str) -> int:
    """Server-side connections to this test's database besides the asking one, once the server has seen the
    cut ones go (it learns of them asynchronously)."""
    conn = await asyncpg.connect(dsn)
    try:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        deadline = time.monotonic() + 60
        while (count := await conn.fetchval(query)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return int(count)
    finally:
        await conn.close()


async def test_a_connection_still_borrowed_at_shutdown_is_cut_after_the_timeout(db_dsn: str) -> None:
    pool = await create_pool(db_dsn, min_size=1, max_size=2)
    await pool.acquire()  # a command handler that is only cancelled after the bot's close
    # Without the cut, closing waits for the connection forever; with it, it returns once the 0.5 s are up. The
    # generous bound only tells a hang from a busy host (how long the close takes is not what is tested).
    await asyncio.wait_for(close_pool(pool, timeout_s=0.5), 120)
    assert await _other_backends(db_dsn) == 0
    try:
        await pool.acquire()
    except asyncpg.InterfaceError as exc:
        assert "closed" in str(exc) or "closing" in str(exc)
    else:
        raise AssertionError("the pool still lent a connection after being closed")


async def test_a_pool_with_every_connection_back_closes_gracefully(db_dsn: str) -> None:
    pool = await create_pool(db_dsn, min_size=1, max_size=2)
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT 1") == 1
    await close_pool(pool, timeout_s=5)
    assert pool._closed  # asyncpg's own flag: no public accessor
