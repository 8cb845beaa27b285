"""The pool's reset (core.store.pool.reset_session): a connection goes back with asyncpg's full reset only when its
session changed (the dispatcher's LISTEN, generic plans left on); every other return costs no statement."""

from __future__ import annotations

import asyncpg
import pytest

from core.store.pool import create_pool, generic_plans


def _ignore(*_: object) -> None:
    pass


def _logged(conn: asyncpg.Connection, seen: list[str]) -> None:
    conn.add_query_logger(lambda record: seen.append(record.query))


async def test_an_ordinary_borrow_goes_back_without_a_reset_statement(db_dsn: str) -> None:
    async with create_pool(db_dsn, min_size=1, max_size=1) as pool:
        seen: list[str] = []
        async with pool.acquire() as conn:
            raw = conn._con  # the pool's proxy hides the connection, whose logger outlives the borrow
            _logged(raw, seen)
            await conn.fetchval("SELECT 1")
        assert seen == ["SELECT 1"]


async def test_a_connection_that_listened_is_reset_before_the_next_borrower(db_dsn: str) -> None:
    async with create_pool(db_dsn, min_size=1, max_size=1) as pool:
        seen: list[str] = []
        async with pool.acquire() as conn:
            _logged(conn._con, seen)
            await conn.add_listener("arena_test_channel", _ignore)
            assert await conn.fetchval("SELECT count(*) FROM pg_listening_channels()") == 1
            # As the dispatcher gives its LISTEN connection back: the callback removed, the session still listening.
            await conn.remove_listener("arena_test_channel", _ignore)
        assert any("UNLISTEN *" in query for query in seen)
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM pg_listening_channels()") == 0
            seen.clear()
        # Reset once, it goes back quietly again.
        assert seen == ["SELECT count(*) FROM pg_listening_channels()"]


async def test_an_open_transaction_is_still_rolled_back_on_return(db_dsn: str) -> None:
    async with create_pool(db_dsn, min_size=1, max_size=1) as pool:
        await pool.execute("CREATE TABLE IF NOT EXISTS reset_probe (n int)")
        async with pool.acquire() as conn:
            await conn.execute("BEGIN")
            await conn.execute("INSERT INTO reset_probe VALUES (1)")
        assert await pool.fetchval("SELECT count(*) FROM reset_probe") == 0
        await pool.execute("DROP TABLE reset_probe")


async def test_generic_plans_end_with_their_block_and_quietly(db_dsn: str) -> None:
    async with create_pool(db_dsn, min_size=1, max_size=1) as pool:
        seen: list[str] = []
        async with pool.acquire() as conn:
            _logged(conn._con, seen)
            async with generic_plans(conn):
                assert await conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
            assert await conn.fetchval("SHOW plan_cache_mode") == "auto"
        # The block undid its setting itself: the connection goes back without the full reset.
        assert not any("RESET ALL" in query for query in seen)


async def test_generic_plans_left_by_an_error_are_reset_before_the_next_borrower(db_dsn: str) -> None:
    async with create_pool(db_dsn, min_size=1, max_size=1) as pool:
        with pytest.raises(asyncpg.DivisionByZeroError):
            async with pool.acquire() as conn, generic_plans(conn):
                await conn.fetchval("SELECT 1 / 0")
        async with pool.acquire() as conn:
            assert await conn.fetchval("SHOW plan_cache_mode") == "auto"
