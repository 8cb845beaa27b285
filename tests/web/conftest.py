"""The web leaderboard served by a real aiohttp server over a real PostgreSQL (the store tests' fixtures), with
submissions made through the core's submit and result-recording path. The pages read through a pool whose every
connection acts as the read-only role, as `arena web`'s do: a page that wrote would fail its test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from core.settings import StoreSettings
from core.store.pool import READER_ROLE, create_pool
from tests.store.conftest import db_dsn, empty_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.web.web_helpers import Clock, Seeded, seed
from web.app import create_app
from web.settings import WebSettings


def web_settings(dsn: str, **overrides: object) -> WebSettings:
    # Boards computed on every request: the tests move the clock and the data between two reads of one page.
    values = {"board_cache_s": 0.0, **overrides}
    return WebSettings(store=StoreSettings(database_url=dsn), **values)  # type: ignore[arg-type]


@pytest.fixture
async def seeded(pool: asyncpg.Pool) -> Seeded:  # noqa: F811
    return await seed(pool)


@pytest.fixture
def page_size() -> int:
    """Board rows per page (override in a module to test pagination)."""
    return 50


@pytest.fixture
def clock() -> Clock:
    """The app's clock: the wall clock until a test sets `clock.at`."""
    return Clock()


@pytest.fixture
async def client(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
    page_size: int,
    clock: Clock,
) -> AsyncIterator[TestClient]:
    async with create_pool(db_dsn, min_size=1, max_size=4, command_timeout=30, role=READER_ROLE) as reader:
        app = create_app(web_settings(db_dsn, page_size=page_size), reader, clock=clock)
        async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
            yield test_client
