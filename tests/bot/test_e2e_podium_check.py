"""A contest's podium run a second time before the freeze, end to end: fake Discord → bot → a runner double that
joined the `h100` pool (the pool's only runner, so each check runs where its first run did) → Postgres.

The double scores each job by its runner-side key (`job-<id>`): the first runs as the test says, and the two checks,
whose ids follow the first runs' in the podium's order, one within the canary threshold and one far slower."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core import contests
from core.members import actor
from core.store import podium_checks
from runner.gpus import GPU_MODELS
from tests.bot.fleet_member import TestFleet, gpu_hardware
from tests.bot.harness import Arena
from tests.bot.test_e2e_contest import ask, submitted
from tests.bot.test_e2e_contest_amend import H100, SCORES, job_of, posted, scored
from tests.store.faults import RunnerDouble


@pytest.fixture
async def double(fleet: TestFleet) -> AsyncIterator[RunnerDouble]:
    SCORES.clear()
    member = await fleet.join("h100-box", "h100")
    runner = RunnerDouble(member.secret, verdict=scored)
    await runner.start()
    try:
        await member.register(runner.url, gpu_hardware(H100, slots=2))
        yield runner
    finally:
        await runner.stop()


@pytest.fixture
def bot_overrides(double: RunnerDouble) -> dict[str, Any]:
    return {"fleet": "on", "local_runner": "off", "contest_freeze_interval_s": 0.2}


async def test_the_podium_runs_again_before_the_freeze_and_a_slower_second_run_counts(
    arena: Arena, double: RunnerDouble
) -> None:
    fake, mod, pool = arena.fake, arena.moderator, arena.bot.pool
    alice, bob = fake.add_member("alice"), fake.add_member("bob")
    now = datetime.now(UTC)
    draft = contests.ContestDraft(
        "cup", "Cup", now - timedelta(seconds=5), now + timedelta(hours=1), ("vector_add",), (("h100", "float32"),)
    )
    gpus = contests.GpuCatalog.of(GPU_MODELS)
    await contests.create_contest(pool, actor(int(mod.id), "Mod"), draft, now=now - timedelta(seconds=10), gpus=gpus)

    # Job ids are taken in order: alice's run, bob's run, then the checks in podium order (bob first, then alice).
    first = int(await pool.fetchval("SELECT coalesce(max(id), 0) FROM jobs")) + 1
    SCORES.update({f"job-{first}": 10.0, f"job-{first + 1}": 20.0})
    SCORES.update({f"job-{first + 2}": 21.0, f"job-{first + 3}": 4.0})  # bob's check agrees; alice's reads 2.5x slower
    alice_run, alice_live = await submitted(arena, alice)
    bob_run, bob_live = await submitted(arena, bob)
    assert (await job_of(arena, alice_run), await job_of(arena, bob_run)) == (first, first + 1)
    for live in (alice_live, bob_live):
        await arena.final(live)
    assert "Contest `cup` changed" in await ask(arena, mod, "mod contest edit", {"slug": "cup", "end": "in 1s"})

    waiting = await posted(arena, "Cup has ended")
    assert "waits for 2 second run(s) of the podium" in waiting, waiting
    podium = await posted(arena, "Cup is over")
    assert re.search(r"🥇 \*\*Bob\*\*.*\n🥈 \*\*Alice\*\*", podium), podium
    assert "run a second time on the same runner (the pool has one)" in podium, podium
    assert "1 of 2 read outside the canary threshold, and the slower of the two runs counts" in podium, podium

    contest_id = int(await pool.fetchval("SELECT id FROM contests WHERE slug = 'cup'"))
    checks = {c.submission_id: c for c in await podium_checks.contest_checks(pool, contest_id)}
    assert checks[bob_run].verdict == "agreed" and checks[alice_run].verdict == "disagreed"
    assert checks[alice_run].same_runner and checks[alice_run].check_score == 4.0
    # Alice's slower second run is her result now, and says why; bob's first run stands.
    assert await pool.fetchval("SELECT score FROM submissions WHERE id = $1", alice_run) == 4.0
    assert await pool.fetchval("SELECT score FROM submissions WHERE id = $1", bob_run) == 20.0
