"""The end of a contest that waits for its last runs, and a moderator's amendment of its frozen board: fake
Discord → bot → a runner double that joined the `h100` pool (it judges when the test says so, with the scores the
test chooses) → Postgres.

The contest is created through the core with a `now` a little in the past, so that it is running at once; the
moderator then shortens it to end in a second, while both runs are still held by the runner."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from contract.wire import JobRequest, SubmissionResult
from core import contests
from core.members import actor
from core.store import jobs
from runner.gpus import GPU_MODELS
from tests.bot.fleet_member import TestFleet, gpu_hardware
from tests.bot.harness import JOB_TIMEOUT_S, RED, Arena
from tests.bot.test_e2e_contest import ask, submitted, text_of
from tests.fakediscord import RecordedMessage
from tests.store.faults import RunnerDouble, passing
from tests.store.store_helpers import wait_for_state

H100 = next(m for m in GPU_MODELS if m.key == "h100")
SCORES: dict[str, float] = {}
"""GFLOPS by runner-side job key (`job-<id>`); a job not named here scores 10."""


def scored(request: JobRequest) -> SubmissionResult:
    return passing(SCORES.get(request.submission_id, 10.0))(request)


@pytest.fixture
async def double(fleet: TestFleet) -> AsyncIterator[RunnerDouble]:
    SCORES.clear()
    member = await fleet.join("h100-box", "h100")
    runner = RunnerDouble(member.secret, verdict=scored, hold=asyncio.Event())
    await runner.start()
    try:
        await member.register(runner.url, gpu_hardware(H100, slots=2))
        yield runner
    finally:
        await runner.stop()


@pytest.fixture
def bot_overrides(double: RunnerDouble) -> dict[str, Any]:
    # The podium's second runs have their own tests (tests/store/test_podium_checks.py, test_e2e_podium_check.py).
    return {"fleet": "on", "local_runner": "off", "contest_freeze_interval_s": 0.2, "contest_podium_check": False}


async def job_of(arena: Arena, submission_id: int) -> int:
    return int(await arena.bot.pool.fetchval("SELECT max(id) FROM jobs WHERE submission_id = $1", submission_id))


def announced(arena: Arena, title: str) -> list[RecordedMessage]:
    general = arena.fake.channel("general").id
    return [
        m
        for m in arena.fake.messages
        if m.channel_id == general and m.embeds and title in str(m.embeds[0].get("title", ""))
    ]


async def posted(arena: Arena, title: str) -> str:
    general = arena.fake.channel("general").id
    message = await arena.fake.wait_for_message(
        lambda m: m.channel_id == general and bool(m.embeds) and title in str(m.embeds[0].get("title", "")),
        timeout=JOB_TIMEOUT_S,
    )
    return text_of(message)


async def test_an_ended_contest_waits_once_then_freezes_and_a_moderator_amends_it_after_a_rerun(
    arena: Arena, double: RunnerDouble
) -> None:
    fake, mod, pool = arena.fake, arena.moderator, arena.bot.pool
    alice, bob, carol = fake.add_member("alice"), fake.add_member("bob"), fake.add_member("carol")
    now = datetime.now(UTC)
    draft = contests.ContestDraft(
        "cup", "Cup", now - timedelta(seconds=5), now + timedelta(hours=1), ("vector_add",), (("h100", "float32"),)
    )
    gpus = contests.GpuCatalog.of(GPU_MODELS)
    await contests.create_contest(pool, actor(int(mod.id), "Mod"), draft, now=now - timedelta(seconds=10), gpus=gpus)

    alice_run, alice_live = await submitted(arena, alice)
    bob_run, bob_live = await submitted(arena, bob)
    SCORES[f"job-{await job_of(arena, alice_run)}"] = 10.0
    SCORES[f"job-{await job_of(arena, bob_run)}"] = 20.0  # bob wins as judged first
    assert "Contest `cup` changed" in await ask(arena, mod, "mod contest edit", {"slug": "cup", "end": "in 1s"})

    # The contest ends while the runner holds both runs: one note, however many times the freezer looks.
    waiting = await posted(arena, "Cup has ended")
    assert "⏳ Cup has ended" in waiting
    assert re.search(r"waits for 2 run\(s\) still being judged, until <t:\d+:R> at the latest", waiting), waiting
    early = await fake.invoke_slash(mod, "mod contest amend", {"slug": "cup", "reason": "too early"})
    assert "`cup` is not frozen yet" in await arena.error_of(early)
    await asyncio.sleep(1.0)  # five freezer ticks
    assert len(announced(arena, "Cup has ended")) == 1 and not announced(arena, "Cup is over")

    assert double.hold is not None
    double.hold.set()
    for live in (alice_live, bob_live):
        await arena.final(live)
    podium = await posted(arena, "Cup is over")
    assert re.search(r"🥇 \*\*Bob\*\*.*\n🥈 \*\*Alice\*\*", podium), podium
    assert len(announced(arena, "Cup has ended")) == 1

    # A rerun gives alice a better score; the frozen board keeps the old places until the moderator amends it.
    double.hold = asyncio.Event()
    rerun = await ask(arena, mod, "mod rerun", {"id": alice_run, "reason": "noisy host"})
    found = re.search(r"queued again as job (\d+)", rerun)
    assert found, rerun
    rerun_job = int(found.group(1))
    SCORES[f"job-{rerun_job}"] = 40.0
    busy = await fake.invoke_slash(mod, "mod contest amend", {"slug": "cup", "reason": "rerun"})
    assert f"Job #{rerun_job} of `cup` has not finished" in await arena.error_of(busy)
    double.hold.set()
    assert await wait_for_state(pool, rerun_job, set(jobs.FINAL_STATES), timeout_s=JOB_TIMEOUT_S) == "done"
    assert re.search(r"🥇 \*\*Bob\*\*", await ask(arena, carol, "contest", {"slug": "cup"}))

    amended = await ask(arena, mod, "mod contest amend", {"slug": "cup", "reason": "alice's rerun"})
    assert "Final board of `cup` amended" in amended and "a correction goes to the announcement channel" in amended
    assert "**Alice**: 2 → 1" in amended and "**Bob**: 1 → 2" in amended
    correction = await posted(arena, "the final board is corrected")
    assert "📝 Cup: the final board is corrected" in correction and "**Alice**: 2 → 1" in correction
    assert "Ratings stay as they were" in correction and "alice's rerun" not in correction
    board = await ask(arena, carol, "contest", {"slug": "cup"})
    assert re.search(r"Podium: 🥇 \*\*Alice\*\* \(total 1\)\n🥈 \*\*Bob\*\* \(total 2\)", board), board

    audit = await pool.fetchrow("SELECT action, target, reason, details FROM audit_log WHERE action = 'contest_amend'")
    assert (audit["action"], audit["target"], audit["reason"]) == ("contest_amend", "contest:cup", "alice's rerun")
    assert "before" in str(audit["details"]) and "after" in str(audit["details"])

    again = await ask(arena, mod, "mod contest amend", {"slug": "cup", "reason": "check"})
    assert "No change" in again and "Places" not in again
    assert len(announced(arena, "the final board is corrected")) == 1

    refused = await fake.invoke_slash(alice, "mod contest amend", {"slug": "cup", "reason": "I won"})
    reply = await fake.wait_for_original(refused, lambda m: bool(m.embeds))
    assert reply.embeds[0]["color"] == RED and "Only moderators" in reply.embeds[0]["description"]
    amends = await pool.fetchval("SELECT count(*) FROM audit_log WHERE action = 'contest_amend'")
    assert amends == 2  # the moderator's two; the refused member's none
