"""`/profile diff` through the fake Discord and the real bot: a member compares two of their profiled runs (the
reports recorded on an H100) and reads the figures as the CLI prints them, privately; without B the bot compares
with their fastest other profile; a run that is not a profile is refused with what to fix."""

from __future__ import annotations

from core.members import external_id
from tests.bot.harness import Arena
from tests.fakediscord import RecordedMessage
from tests.store.profiled_runs import cuda, recorded, run_of

SLUG = "matrix-multiplication"


async def answer_of(arena: Arena, user: object, options: dict[str, int]) -> RecordedMessage:
    asked = await arena.fake.invoke_slash(user, "profile diff", options)  # type: ignore[arg-type]
    reply = await arena.fake.wait_for_original(asked, lambda m: bool(m.embeds))
    assert reply.ephemeral, "a diff shows the member's own runs: private"
    return reply


async def test_a_member_compares_two_profiled_runs_and_b_defaults_to_their_fastest(arena: Arena) -> None:
    ada = arena.fake.add_member("ada")
    who = external_id(int(ada.id))
    pool = arena.bot.pool
    naive = await run_of(pool, "ada", cuda("naive"), report=recorded("naive"), slug=SLUG, external_id=who)
    tiled = await run_of(
        pool, "ada", cuda("tiled"), report=recorded("tiled", kernel_name="matmul_kernel"), slug=SLUG, external_id=who
    )

    embed = (await answer_of(arena, ada, {"a": naive, "b": tiled})).embeds[0]
    assert embed["title"] == f"🔬 Profile diff · {SLUG} · h100"
    assert embed["description"].startswith("B took 19.79 ms against A's 47.60 ms: 2.40× faster (58.4 % less time).")
    assert f"**A** #{naive} solution.cu by ada" in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    kernel = fields["`matmul_kernel`"]
    assert "**time** 47.60 ms → 19.79 ms · -27.81 ms (-58.4 %)" in kernel
    assert "**smem/block** 0 B → 8 KiB · +8 KiB" in kernel
    assert "long_scoreboard 91 % → 14 %" in kernel
    assert "**DRAM moved** 4.33 GB → 8.49 GB · +4.17 GB (+96.4 %)" in fields["Totals"]

    chosen = (await answer_of(arena, ada, {"a": tiled})).embeds[0]
    assert f"**B** #{naive} solution.cu" in chosen["description"]
    assert "B is your fastest other profile" in chosen["description"]


async def test_a_run_that_is_not_a_profile_is_refused_with_what_to_fix(arena: Arena) -> None:
    ada = arena.fake.add_member("ada")
    who = external_id(int(ada.id))
    pool = arena.bot.pool
    profiled = await run_of(pool, "ada", cuda("p"), report=recorded("naive"), slug=SLUG, external_id=who)
    timed = await run_of(pool, "ada", cuda("t"), mode="benchmark", score=10.0, slug=SLUG, external_id=who)
    refused = await arena.fake.invoke_slash(ada, "profile diff", {"a": timed, "b": profiled})
    assert "is a benchmark run, not a profile" in await arena.error_of(refused)
    # Someone else's run reads as one that does not exist.
    other = arena.fake.add_member("bob")
    refused = await arena.fake.invoke_slash(other, "profile diff", {"a": profiled})
    assert f"no profiled run #{profiled} you may read" in await arena.error_of(refused)
