"""A competitor's page (/users/{id}): their rating with its chart (inline SVG, no script), their best result on each
board with its place (ties shared), and their recent runs: the ranked ones for everybody, every mode for the
competitor themselves once signed in."""

from __future__ import annotations

import re
from datetime import timedelta

import asyncpg
import pytest
from aiohttp.test_utils import TestClient

import web.pages as web_pages
from core.contests.views import user_rating_card
from core.store import pages as store_pages
from core.store import users
from tests.store.store_helpers import VECTOR_ADD, add_problems, submit_scored
from tests.web.signin_helpers import NELLY, sign_in, signin_stack
from tests.web.test_pages import get_text
from tests.web.web_helpers import FROZEN_AT, HOSTILE, Clock, Seeded, seed_contest


async def user_id(pool: asyncpg.Pool, name: str) -> int:
    found = await pool.fetchval("SELECT id FROM users WHERE display_name = $1", name)
    assert found is not None, name
    return int(found)


async def test_a_rated_players_page_draws_the_rating_history_as_an_svg_chart(
    client: TestClient, clock: Clock, pool: asyncpg.Pool
) -> None:
    await seed_contest(pool, freeze=True)
    clock.at = FROZEN_AT + timedelta(minutes=5)
    bob = await user_id(pool, "bob")
    card = await user_rating_card(pool, await users.get_user(pool, bob))  # type: ignore[arg-type]
    page = await get_text(client, f"/users/{bob}")
    svg = page.split('<svg class="history"', 1)[1].split("</svg>", 1)[0]
    # One point for the rating before the first contest, one after each: the first and the last are labelled.
    assert svg.count('<circle class="dot"') == len(card.history) + 1 == 2
    assert f"{card.history[0].rating_before:.0f}" in svg and f"{card.history[-1].rating_after:.0f}" in svg
    assert "<polyline" in svg and "<script" not in page
    assert 'aria-label="Rating after each of 1 rated contests' in page


async def test_the_page_lists_the_best_result_per_board_with_its_place_and_only_public_runs(
    client: TestClient, seeded: Seeded, pool: asyncpg.Pool
) -> None:
    alice = await user_id(pool, "alice")
    page = await get_text(client, f"/users/{alice}")
    best = page.split('<table class="best">', 1)[1].split("</table>", 1)[0]
    # vector_add h100/float32: bob 50, carol 40, alice 30, the hostile name 20.
    assert "vector_add" in best and "<td class=num>3 of 4</td>" in best and "30 GFLOPS" in best
    assert f'href="/submissions/{seeded.ranked["alice"]}"' in best
    recent = page.split('<table class="recent">', 1)[1].split("</table>", 1)[0]
    assert f"#{seeded.ranked['alice']}" in recent
    # Her benchmark run is hers alone: a reader who is not her sees no trace of it.
    assert f"#{seeded.benchmark}<" not in page and "benchmark" not in recent


async def test_equal_scores_share_the_place_on_the_players_page(client: TestClient, pool: asyncpg.Pool) -> None:
    await add_problems(pool, VECTOR_ADD)
    for user, score in (("ann", 50.0), ("ben", 50.0), ("cat", 20.0)):
        await submit_scored(pool, user, score)
    ben = await get_text(client, f"/users/{await user_id(pool, 'ben')}")
    assert "<td class=num>1 of 3</td>" in ben
    cat = await get_text(client, f"/users/{await user_id(pool, 'cat')}")
    assert "<td class=num>3 of 3</td>" in cat


async def test_a_hostile_name_is_escaped_on_the_players_page(
    client: TestClient, seeded: Seeded, pool: asyncpg.Pool
) -> None:
    page = await get_text(client, f"/users/{await user_id(pool, HOSTILE)}")
    assert HOSTILE not in page and "<script>" not in page
    assert "<h1>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;</h1>" in page


async def test_signed_in_a_player_sees_their_own_private_runs_and_nobody_elses(pool: asyncpg.Pool, db_dsn: str) -> None:
    await add_problems(pool, VECTOR_ADD)
    mine = (await submit_scored(pool, NELLY.id, 12.0, mode="benchmark")).submission_id
    ranked = (await submit_scored(pool, NELLY.id, 11.0)).submission_id
    theirs = (await submit_scored(pool, "roy", 13.0, mode="test")).submission_id
    nelly = await pool.fetchval("SELECT id FROM users WHERE external_id = $1", f"discord:{NELLY.id}")
    roy = await user_id(pool, "roy")
    async with signin_stack(pool, db_dsn) as stack:
        anonymous = await get_text(stack.client, f"/users/{nelly}")
        assert f"#{ranked}" in anonymous and f"#{mine}" not in anonymous
        await sign_in(stack.client, stack.fake, NELLY)
        own = await get_text(stack.client, f"/users/{nelly}")
        recent = own.split('<table class="recent">', 1)[1].split("</table>", 1)[0]
        assert re.search(rf"<td>#{mine}</td><td><a [^>]+>vector_add</a></td><td>benchmark</td>", recent), recent
        assert f'<a href="/submissions/{ranked}">#{ranked}</a>' in recent
        assert "Your runs of every mode" in own
        other = await get_text(stack.client, f"/users/{roy}")
        assert f"#{theirs}" not in other and "Your runs" not in other


async def test_a_place_past_the_counted_ones_reads_as_past_them_and_other_boards_are_counted(
    client: TestClient, pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Places are counted up to a bound (a count costs an index entry per entry ahead); here the bound is 1.
    monkeypatch.setattr(store_pages, "PLACES_COUNTED", 1)
    monkeypatch.setattr(web_pages, "PLACES_COUNTED", 1)
    await add_problems(pool, VECTOR_ADD)
    for user, score in (("ann", 50.0), ("ben", 40.0), ("cat", 20.0)):
        await submit_scored(pool, user, score)
    await submit_scored(pool, "cat", 30.0, gpu="h200")
    ann = await get_text(client, f"/users/{await user_id(pool, 'ann')}")
    assert "<td class=num>1 of 3</td>" in ann
    cat = await get_text(client, f"/users/{await user_id(pool, 'cat')}")
    assert "<td class=num>1+ of 3</td>" in cat and "h100 · float32 · cpu (and 1 more)" in cat
