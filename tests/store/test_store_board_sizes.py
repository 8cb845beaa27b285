"""The board sizes kept beside the boards (V014): they equal the entries, however the entries changed."""

from __future__ import annotations

import asyncio
import random

import asyncpg

from core.leaderboard import get_leaderboard, list_boards
from core.moderation import ban_user, invalidate_submission, unban_user
from core.store import leaderboard
from tests.store.store_helpers import MOD, add_problems, submit_scored

_COUNTED = """
    SELECT problem_id, problem_version, gpu_type, dtype, method, language, count(*)::int AS entries
    FROM leaderboard_entries GROUP BY 1, 2, 3, 4, 5, 6
"""
_KEPT = """
    SELECT problem_id, problem_version, gpu_type, dtype, method, language, entries
    FROM leaderboard_sizes WHERE entries > 0
"""


async def sizes_agree(pool: asyncpg.Pool) -> set[tuple[object, ...]]:
    """The kept sizes, after checking that they are the entries counted."""
    counted = {tuple(r) for r in await pool.fetch(_COUNTED)}
    kept = {tuple(r) for r in await pool.fetch(_KEPT)}
    assert kept == counted
    return kept


async def test_sizes_follow_results_bans_invalidations_and_rebuilds(pool: asyncpg.Pool):
    await add_problems(pool)
    rng = random.Random(11)
    receipts = []
    for _ in range(30):
        user = f"u{rng.randrange(8)}"
        language = rng.choice(["python", "triton", "cuda"])
        gpu = rng.choice(["h100", "h200"])
        receipts.append(await submit_scored(pool, user, float(rng.randrange(1, 50)), language=language, gpu=gpu))
    kept = await sizes_agree(pool)
    shown = [len((await get_leaderboard(pool, "vector_add", gpu, limit=100)).rows) for gpu in ("h100", "h200")]
    assert sum(n for *_, language, n in kept if language == "any") == sum(shown) > 0
    await invalidate_submission(pool, MOD, receipts[0].submission_id, "bench check")
    await ban_user(pool, MOD, "discord:u1", "bench check")
    await sizes_agree(pool)
    await unban_user(pool, MOD, "discord:u1")
    await sizes_agree(pool)
    async with pool.acquire() as conn, conn.transaction():
        await leaderboard.rebuild(conn)
    await sizes_agree(pool)
    _, boards = await list_boards(pool, "vector_add")
    assert [b.entries for b in boards] == sorted((b.entries for b in boards), reverse=True)


async def test_concurrent_results_on_one_board_are_all_counted(pool: asyncpg.Pool):
    await add_problems(pool)
    await asyncio.gather(*(submit_scored(pool, f"c{i}", float(i + 1)) for i in range(12)))
    kept = await sizes_agree(pool)
    assert {(r[2], r[5], r[6]) for r in kept if r[5] == "any"} == {("h100", "any", 12)}
