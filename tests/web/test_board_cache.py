"""The contest-board cache: one computation per board at a time, a kept copy served at once, and a fresh one
computed in the background once the kept copy is older than its time to live."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.web.conftest import web_settings
from tests.web.test_contest_pages import board_rows
from tests.web.test_pages import get_text
from tests.web.web_helpers import START, Clock, ranked_at, seed_contest
from web.app import create_app
from web.board_cache import StaleWhileRevalidate


class Ticking:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Counted:
    """A computation that counts its runs and waits until released (or fails, when told to)."""

    def __init__(self) -> None:
        self.runs = 0
        self.release = asyncio.Event()
        self.fail = False

    async def __call__(self) -> int:
        self.runs += 1
        await self.release.wait()
        if self.fail:
            raise RuntimeError("the store went away")
        return self.runs


async def test_readers_of_a_new_board_share_one_computation() -> None:
    cache: StaleWhileRevalidate[int] = StaleWhileRevalidate(15.0, clock=Ticking())
    compute = Counted()
    readers = [asyncio.create_task(cache.get("spring", compute)) for _ in range(5)]
    await asyncio.sleep(0)
    compute.release.set()
    assert [kept.value for kept in await asyncio.gather(*readers)] == [1] * 5
    assert compute.runs == 1


async def test_an_old_copy_is_served_at_once_while_a_fresh_one_is_computed() -> None:
    clock = Ticking()
    cache: StaleWhileRevalidate[int] = StaleWhileRevalidate(15.0, clock=clock)
    compute = Counted()
    compute.release.set()
    assert (await cache.get("spring", compute)).value == 1
    clock.now = 10.0
    assert (await cache.get("spring", compute)).value == 1 and compute.runs == 1  # young: no computation
    clock.now = 16.0
    compute.release.clear()
    stale = await cache.get("spring", compute)  # old: served as it is, a refresh starts
    assert stale.value == 1 and stale.at == 0.0
    await asyncio.sleep(0)
    assert compute.runs == 2
    compute.release.set()
    await asyncio.sleep(0.01)
    fresh = await cache.get("spring", compute)
    assert fresh.value == 2 and fresh.at == 16.0


async def test_a_failed_refresh_keeps_the_old_copy_and_a_failed_first_computation_reaches_its_reader() -> None:
    clock = Ticking()
    cache: StaleWhileRevalidate[int] = StaleWhileRevalidate(15.0, clock=clock)
    compute = Counted()
    compute.release.set()
    await cache.get("spring", compute)
    clock.now, compute.fail = 20.0, True
    assert (await cache.get("spring", compute)).value == 1
    await asyncio.sleep(0.01)
    assert (await cache.get("spring", compute)).value == 1  # each read of an old copy retries
    await asyncio.sleep(0.01)
    assert compute.runs == 3
    with pytest.raises(RuntimeError, match="store went away"):
        await cache.get("autumn", compute)


async def test_at_most_size_boards_are_kept_and_zero_seconds_computes_every_read() -> None:
    cache: StaleWhileRevalidate[int] = StaleWhileRevalidate(15.0, size=2, clock=Ticking())
    compute = Counted()
    compute.release.set()
    for key in ("a", "b", "a", "c"):  # "b" is the least recently read when "c" comes
        await cache.get(key, compute)
    await cache.get("b", compute)
    assert compute.runs == 4
    uncached: StaleWhileRevalidate[int] = StaleWhileRevalidate(0.0)
    await uncached.get("a", compute)
    await uncached.get("a", compute)
    assert compute.runs == 6


async def test_a_contest_page_is_served_from_its_kept_board_and_says_when_it_was_computed(
    pool: asyncpg.Pool, db_dsn: str
) -> None:
    await seed_contest(pool)
    clock = Clock()
    clock.at = START + timedelta(seconds=30)
    app = create_app(web_settings(db_dsn, board_cache_s=3600.0), pool, clock=clock)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        first = await get_text(client, "/contests/spring")
        await ranked_at(pool, "erin", 1000.0, START + timedelta(seconds=40))  # would top the live board
        clock.at = START + timedelta(seconds=50)
        second = await get_text(client, "/contests/spring")
    assert board_rows(second) == board_rows(first) and "erin" not in second
    stamp = f'This page as of <time datetime="{START + timedelta(seconds=30):%Y-%m-%dT%H:%M:%SZ}">'
    assert stamp in first and stamp in second
