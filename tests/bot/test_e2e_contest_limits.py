"""`/mod contest create` with a contest's own limit on ranked runs, through the fake Discord and the real store."""

from __future__ import annotations

from core.contests import view
from tests.bot.harness import Arena
from tests.bot.test_e2e_contest import ask


async def test_a_moderator_gives_a_contest_its_own_ranked_limit_and_both_figures_are_needed(arena: Arena) -> None:
    mod = arena.moderator
    base = {"title": "Sprint", "problems": "vector_add", "start": "in 1h", "end": "in 2h", "gpus": "cpu"}
    created = await ask(arena, mod, "mod contest create", {**base, "slug": "tight", "ranked_burst": 2,
                                                           "ranked_per_hour": 4.0})  # fmt: skip
    assert "Contest `tight` created" in created
    async with arena.bot.pool.acquire() as conn:
        contest = (await view(conn, "tight")).contest
    assert (contest.ranked_burst, contest.ranked_per_hour) == (2, 4.0)

    half = await ask(arena, mod, "mod contest create", {**base, "slug": "half", "ranked_burst": 2})
    assert "Give ranked_burst and ranked_per_hour together" in half
