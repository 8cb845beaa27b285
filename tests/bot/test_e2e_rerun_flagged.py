"""`/mod rerun-flagged`: the ranked results timed on a runner whose canaries drifted are queued again at once."""

from __future__ import annotations

from tests.bot.harness import Arena


async def test_a_moderator_reruns_the_flagged_ranked_results_and_their_flags_clear(arena: Arena) -> None:
    fake = arena.fake
    rita = fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="ranked")
    await arena.final(interaction)
    runner = await arena.bot.pool.fetchval("SELECT runner FROM submissions WHERE id = 1")
    # As core.fleet.canary does when a runner's canaries drift twice.
    await arena.bot.pool.execute("UPDATE submissions SET timing_flag = 'timed on a drifted runner' WHERE id = 1")

    asked = await fake.invoke_slash(arena.moderator, "mod rerun-flagged", {"runner": runner})
    notice = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    assert "1 of 1 flagged results queued again" in notice["description"]
    assert "#1: queued again as job 2" in notice["description"]
    assert await arena.bot.pool.fetchval("SELECT timing_flag FROM submissions WHERE id = 1") is None

    again = await fake.invoke_slash(arena.moderator, "mod rerun-flagged")
    nothing = (await fake.wait_for_original(again, lambda m: bool(m.embeds))).embeds[0]
    assert nothing["description"] == "No ranked result is flagged."
