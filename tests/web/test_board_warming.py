"""The contest boards that take long to compute are computed as the web starts, so that their first readers find
them ready or under way: a live contest's board, and the upsolve board of a contest that ended."""

from __future__ import annotations

import asyncpg
from aiohttp.test_utils import TestClient, TestServer

from core.store.pool import READER_ROLE, create_pool
from tests.web.conftest import web_settings
from tests.web.web_helpers import FROZEN_AT, Clock, seed_contest
from web.app import BOARDS, create_app


async def test_the_upsolve_board_of_a_contest_that_ended_is_computed_as_the_web_starts(
    pool: asyncpg.Pool, db_dsn: str
) -> None:
    await seed_contest(pool, freeze=True)
    clock = Clock()
    clock.at = FROZEN_AT
    async with create_pool(db_dsn, min_size=1, max_size=4, command_timeout=30, role=READER_ROLE) as reader:
        app = create_app(web_settings(db_dsn, board_cache_s=60.0), reader, clock=clock)
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            # Before any reader asked: under way or kept already.
            assert app[BOARDS].holds(("spring", "upsolve"))
            # A frozen contest's own board is read from its standings, not computed ahead.
            assert not app[BOARDS].holds(("spring", "contest"))
            page = await client.get("/contests/spring/upsolve")
            assert page.status == 200
            assert "carol" in await page.text()
