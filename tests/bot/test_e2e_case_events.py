"""A job the bot dispatches tells its cases on the store's notification channel, as arena api's dispatcher does, so
that the public API's event stream of a submission made in Discord shows each case live too."""

from __future__ import annotations

import asyncio
import json

import asyncpg

from core.store.submission_feed import CASE_CHANNEL
from tests.bot.harness import GREEN, Arena


async def test_a_run_the_bot_dispatches_tells_each_case_to_the_apis_event_streams(arena: Arena) -> None:
    heard: list[dict[str, object]] = []

    def hear(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        heard.append(json.loads(payload))

    listener: asyncpg.Connection = await arena.bot.pool.acquire()
    try:
        await listener.add_listener(CASE_CHANNEL, hear)
        nina = arena.fake.add_member("nina")
        interaction = await arena.submit_example(nina, "vector_add", "vector_add.py", mode="benchmark")
        final = await arena.final(interaction)
        assert final.embeds[0]["color"] == GREEN, final.embeds[0].get("description")
        submission_id = await arena.bot.pool.fetchval("SELECT max(id) FROM submissions")
        await asyncio.sleep(0.5)  # the last notification, sent before the result was stored, is on its way
    finally:
        await listener.remove_listener(CASE_CHANNEL, hear)
        await arena.bot.pool.release(listener)
    mine = [h for h in heard if h.get("s") == submission_id]
    # vector_add has three test cases and three timed ones: each told once, as its runner finished it.
    assert len(mine) >= 6, heard
