"""Contest boards and the rating table come a page at a time: a board of thousands of entrants would otherwise be
megabytes of HTML. With two rows a page, the four entrants of the seeded contest take two pages."""

from __future__ import annotations

import re
from datetime import timedelta

import asyncpg
import pytest
from aiohttp.test_utils import TestClient

from core.contests import contest_board
from tests.web.test_contest_pages import board_rows, core_rows
from tests.web.test_pages import get_text
from tests.web.web_helpers import FROZEN_AT, START, Clock, seed_contest


@pytest.fixture
def page_size() -> int:
    return 2


async def test_a_live_board_pages_on_in_place_order_and_says_where_each_page_is(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    await seed_contest(pool)
    clock.at = START + timedelta(seconds=30)
    whole = core_rows(await contest_board(pool, "spring"))
    first, second = await get_text(client, "/contests/spring"), await get_text(client, "/contests/spring?page=2")
    assert board_rows(first) == whole[:2] and board_rows(second) == whole[2:4]
    assert "entrants 1–2 of 4" in first and '<a href="/contests/spring?page=2">next →</a>' in first
    assert "← previous" not in first
    assert "entrants 3–4 of 4" in second and '<a href="/contests/spring?page=1">← previous</a>' in second
    assert "next →" not in second


async def test_a_page_past_the_end_of_a_board_links_the_last_one(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    await seed_contest(pool, freeze=True)
    clock.at = FROZEN_AT + timedelta(minutes=5)
    page = await get_text(client, "/contests/spring?page=9")
    assert '<table class="contest-board">' not in page
    assert "Page 9 is past the end of these 4 entrants" in page
    assert '<a href="/contests/spring?page=2">page 2</a>' in page
    assert "Podium" in page  # the podium stays on every page of a frozen board


async def test_the_rating_table_pages_on_and_a_bad_page_number_is_a_400(client: TestClient, pool: asyncpg.Pool) -> None:
    await seed_contest(pool, freeze=True)
    first, second = await get_text(client, "/ratings"), await get_text(client, "/ratings?page=2")
    assert first.count("<tr><td class=num>") == 2 and "players 1–2 of 4" in first
    assert second.count("<tr><td class=num>") == 2 and "players 3–4 of 4" in second
    assert "<tr><td class=num>3</td>" in second
    response = await client.get("/ratings?page=zero")
    assert response.status == 400
    assert "is not a page number" in await response.text()


async def test_equal_conservative_ratings_share_a_place_across_the_pages_of_the_rating_table(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    await seed_contest(pool, freeze=True)
    # Level the four rated players: every one of them is first.
    await pool.execute("UPDATE ratings SET rating = 1500, rd = 100")
    first, second = await get_text(client, "/ratings"), await get_text(client, "/ratings?page=2")
    places = re.findall(r"<tr><td class=num>(\d+)</td>", first + second)
    assert places == ["1", "1", "1", "1"]
    past = await get_text(client, "/ratings?page=5")
    assert "Page 5 is past the end of these 4 players" in past and '<a href="/ratings?page=2">page 2</a>' in past
