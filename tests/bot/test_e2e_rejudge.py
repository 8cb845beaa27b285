"""`/mod rejudge`: a board's entries timed under an older timing protocol are marked, and re-run under the current one.

Each re-judge is a real new run through the bot's dispatcher and the local runner; the earlier job keeps its rows.
"""

from __future__ import annotations

from core.leaderboard import OLDER_PROTOCOL_MARK
from core.store import jobs
from runner.protocol import protocol_version
from tests.bot.harness import JOB_TIMEOUT_S, Arena
from tests.store.store_helpers import wait_for_state

OLD = "tp-000000000000"


async def _board(arena: Arena, member: object, gpu: str) -> str:
    asked = await arena.fake.invoke_slash(member, "leaderboard", {"problem": "vector_add", "gpu": gpu})
    return str((await arena.fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]["description"])


async def test_an_entry_timed_under_an_older_protocol_is_marked_and_rejudged_under_the_current(arena: Arena) -> None:
    fake, pool = arena.fake, arena.bot.pool
    rita = fake.add_member("rita")
    await arena.final(await arena.submit_example(rita, "vector_add", "vector_add.py", mode="ranked"))
    assert await pool.fetchval("SELECT protocol FROM submissions WHERE id = 1") == protocol_version()
    gpu = await pool.fetchval("SELECT gpu_type FROM submissions WHERE id = 1")
    assert OLDER_PROTOCOL_MARK not in await _board(arena, rita, gpu)

    # As if the judge's timing code had changed since the run: its protocol is not this installation's.
    await pool.execute("UPDATE submissions SET protocol = $1 WHERE id = 1", OLD)
    marked = await _board(arena, rita, gpu)
    assert OLDER_PROTOCOL_MARK in marked and "older timing protocol" in marked

    asked = await fake.invoke_slash(arena.moderator, "mod rejudge", {"slug": "vector_add", "gpu": gpu, "top": 5})
    notice = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]["description"]
    assert f"1 of 1 entries queued again under timing protocol {protocol_version()}" in notice
    assert "#1 · submission #1: queued again as job 2" in notice
    assert await wait_for_state(pool, 2, set(jobs.FINAL_STATES), timeout_s=JOB_TIMEOUT_S) == "done"
    assert await pool.fetchval("SELECT protocol FROM submissions WHERE id = 1") == protocol_version()
    assert await pool.fetchval("SELECT count(*) FROM case_results WHERE job_id = 1") > 0  # the old run's rows stay
    assert OLDER_PROTOCOL_MARK not in await _board(arena, rita, gpu)

    again = await fake.invoke_slash(arena.moderator, "mod rejudge", {"slug": "vector_add", "gpu": gpu})
    skipped = (await fake.wait_for_original(again, lambda m: bool(m.embeds))).embeds[0]["description"]
    assert "0 of 1 entries queued again" in skipped and "already timed under the current protocol" in skipped
