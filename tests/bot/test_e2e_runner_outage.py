"""A runner of the fleet that stops answering, or goes silent altogether: the user is told that the job waits, and it
runs when the runner is back, or on another runner that joins the pool.

The runners are `RunnerDouble`s (runner-shaped HTTP daemons, made-up verdicts, no sandbox) standing in for H100
hosts; each joined the `h100` pool, serves with the secret its join returned, and sends heartbeats
(`tests.bot.fleet_member`). Nothing the bot posts may name a runner's address.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from core.store import jobs
from runner.gpus import GPU_MODELS
from tests.bot.fleet_member import FleetMember, TestFleet, gpu_hardware
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import FakeDiscord, RecordedMessage
from tests.store.faults import RunnerDouble
from tests.store.store_helpers import wait_for_state

pytestmark = pytest.mark.timeout(300)

H100 = next(m for m in GPU_MODELS if m.key == "h100")
WAITING = "Waiting for the `h100` runner to come back"


@pytest.fixture
def fleet_heartbeat_timeout_s() -> float:
    """A silent runner leaves its pool after a few seconds (a healthy one beats every half second)."""
    return 4.0


@pytest.fixture
async def box(fleet: TestFleet) -> AsyncIterator[tuple[FleetMember, RunnerDouble]]:
    """`h100-box`: joined, registered and heard from, its HTTP side down until a test starts it."""
    member = await fleet.join("h100-box", "h100")
    double = RunnerDouble(member.secret, hold=asyncio.Event())
    await member.register(double.url, gpu_hardware(H100, slots=1))
    try:
        yield member, double
    finally:
        await double.stop()


@pytest.fixture
def bot_overrides(box: tuple[FleetMember, RunnerDouble], db_dsn: str) -> dict[str, Any]:
    arena = Settings(
        store=StoreSettings(database_url=db_dsn, pool_min_size=1, pool_max_size=8),
        dispatch=DispatchSettings(owner="bot-tests", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2, runner_probe_s=0.3),
        rate=RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100),
        local_user="tester",
    )
    return {"fleet": "on", "local_runner": "off", "arena": arena}


def shows(text: str) -> Any:
    def predicate(message: RecordedMessage) -> bool:
        return bool(message.embeds) and text in str(message.embeds[0].get("description", ""))

    return predicate


async def runner_fields(arena: Arena) -> dict[str, str]:
    asked = await arena.fake.invoke_slash(arena.moderator, "mod runners")
    embed = (await arena.fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    return {f["name"]: f["value"] for f in embed["fields"]}


def assert_no_address_shown(fake: FakeDiscord, *doubles: RunnerDouble) -> None:
    posted = json.dumps([m.history for m in fake.messages])
    for double in doubles:
        for leak in (double.url, f":{double.port}"):  # (the fake Discord itself is on 127.0.0.1)
            assert leak not in posted, f"{leak!r} was shown in Discord"


async def test_a_submission_waits_for_its_runner_says_so_and_runs_when_it_is_back(
    arena: Arena, box: tuple[FleetMember, RunnerDouble]
) -> None:
    """The runner is in its pool (it sends heartbeats) but does not answer the dispatcher."""
    fake = arena.fake
    _, double = box
    rita = fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    await fake.wait_for_followup(interaction, shows(WAITING), timeout=120)

    field = (await runner_fields(arena))["h100-box"]
    assert "GPU type `h100` · pool · active" in field and "❌ unreachable: no answer" in field, field

    assert double.hold is not None
    double.hold.set()
    await double.start()
    final = await arena.final(interaction)
    assert final.embeds[0]["color"] == GREEN
    job = await arena.bot.pool.fetchrow("SELECT state, attempts, runner FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "done", "attempts": 1, "runner": "h100-box"}, "the wait cost the job no attempt"
    assert double.posts == ["job-1"]
    assert_no_address_shown(fake, double)


async def test_a_runner_that_goes_silent_mid_job_leaves_its_pool_and_the_job_runs_on_one_that_joins(
    arena: Arena, fleet: TestFleet, box: tuple[FleetMember, RunnerDouble]
) -> None:
    """A partition: the runner stops answering, then its heartbeats stop. The fleet requeues its job at the head
    once it leaves its pool (that dispatch counted), and a runner that joins later runs it."""
    fake = arena.fake
    member, silent = box
    await silent.start()
    rita = fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    await fake.wait_for_followup(interaction, shows("Starting on Test GPU"), timeout=120)

    # It stops answering first (it holds the job, and never finishes it): the job waits for it, and the user is
    # told so while the runner is still in its pool. Then its heartbeats stop too.
    await silent.stop()
    await fake.wait_for_followup(interaction, shows(WAITING), timeout=120)
    await member.go_silent()
    # It leaves its pool after the heartbeat timeout, and its job goes back to the queue, the lost dispatch counted.
    assert await wait_for_state(arena.bot.pool, 1, {"queued", *jobs.FINAL_STATES}, timeout_s=120) == "queued"
    left = await arena.bot.pool.fetchrow("SELECT state, note FROM runners WHERE name = 'h100-box'")
    assert dict(left) == {"state": "left", "note": "no heartbeat"}
    job = await arena.bot.pool.fetchrow("SELECT state, attempts FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "queued", "attempts": 1}

    spare_member = await fleet.join("h100-spare", "h100")
    spare = RunnerDouble(spare_member.secret, hold=asyncio.Event())
    await spare.start()
    try:
        await spare_member.register(spare.url, gpu_hardware(H100, slots=1))
        # The live message follows the job to the new runner, as its second attempt.
        await fake.wait_for_followup(interaction, shows("(attempt 2)"), timeout=120)
        fields = await runner_fields(arena)
        assert "GPU type `h100` · pool · active" in fields["h100-spare"], fields
        assert spare.hold is not None
        spare.hold.set()
        final = await arena.final(interaction)
        assert final.embeds[0]["color"] == GREEN, final.summary()
    finally:
        await spare.stop()
    job = await arena.bot.pool.fetchrow("SELECT state, attempts, runner FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "done", "attempts": 2, "runner": "h100-spare"}
    assert silent.posts == ["job-1"] and spare.posts == ["job-1"]
    assert_no_address_shown(fake, silent, spare)
