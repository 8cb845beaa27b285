"""The bot through a database crash: PostgreSQL is killed with SIGKILL while one job runs and another waits, then
started again. Both submissions get their final message, with no restart of the bot and no attempt lost.

The bot's database lives on a server of this module's own (`PostgresUnderTest`), so killing it disturbs no other
test; the runner is a `RunnerDouble` in the `h100` pool that holds its job until the database is down. Its
heartbeats fail while the database is away, as they would at the API service, and go on once it is back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from runner.gpus import GPU_MODELS
from tests.bot.fleet_member import TestFleet, gpu_hardware
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import RecordedMessage
from tests.store.faults import PostgresUnderTest, RunnerDouble

pytestmark = pytest.mark.timeout(300)

H100 = next(m for m in GPU_MODELS if m.key == "h100")


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[PostgresUnderTest]:
    started = await PostgresUnderTest.start_new()
    try:
        yield started
    finally:
        await started.close()


@pytest.fixture
def fleet_heartbeat_timeout_s() -> float:
    """Longer than the database is away: the runner stays in its pool through the outage, whatever the load."""
    return 60.0


@pytest.fixture
async def db_dsn(server: PostgresUnderTest) -> str:
    """The bot's database, and the fleet's, on this module's own server."""
    return await server.new_database()


@pytest.fixture
async def double(fleet: TestFleet) -> AsyncIterator[RunnerDouble]:
    member = await fleet.join("h100-box", "h100")
    runner = RunnerDouble(member.secret, hold=asyncio.Event())
    await runner.start()
    try:
        await member.register(runner.url, gpu_hardware(H100, slots=1))
        yield runner
    finally:
        await runner.stop()


@pytest.fixture
async def bot_overrides(double: RunnerDouble, db_dsn: str) -> dict[str, Any]:
    arena = Settings(
        store=StoreSettings(database_url=db_dsn, pool_min_size=1, pool_max_size=8, command_timeout_s=10),
        # The defaults but for a lease shorter than the outage, so that leases lapse while the database is away.
        dispatch=DispatchSettings(owner="bot-tests", lease_s=4.0, retry_backoff_s=0.0),
        rate=RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100),
        local_user="tester",
    )
    return {"fleet": "on", "local_runner": "off", "arena": arena}


def shows(text: str) -> Any:
    def predicate(message: RecordedMessage) -> bool:
        return bool(message.embeds) and text in str(message.embeds[0].get("description", ""))

    return predicate


async def test_submissions_finish_after_the_database_is_killed_and_started_again(
    arena: Arena, double: RunnerDouble, server: PostgresUnderTest
) -> None:
    fake = arena.fake
    rita, sam = fake.add_member("rita"), fake.add_member("sam")
    running = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    await fake.wait_for_followup(running, shows("Starting on Test GPU"), timeout=120)
    waiting = await arena.submit_example(sam, "vector_add", "vector_add.py", mode="test")
    await fake.wait_for_followup(waiting, shows("Queued"), timeout=120)

    await server.kill()
    try:
        assert double.hold is not None
        double.hold.set()  # the running job finishes while the database is away
        await asyncio.sleep(6.0)
    finally:
        await server.start()

    for interaction in (running, waiting):
        final = await arena.final(interaction)
        assert final.embeds[0]["color"] == GREEN, final.summary()
    rows = await arena.bot.pool.fetch("SELECT state, attempts FROM jobs ORDER BY id")
    assert [tuple(r) for r in rows] == [("done", 1), ("done", 1)]


async def test_a_submission_while_the_database_is_down_is_told_to_try_again_shortly(
    arena: Arena, double: RunnerDouble, server: PostgresUnderTest
) -> None:
    """An outage is no fault a moderator can fix: the user hears that the database is away and to try again."""
    fake = arena.fake
    tess = fake.add_member("tess")
    await server.kill()
    try:
        refused = await arena.submit_example(tess, "vector_add", "vector_add.py", mode="test")
        message = await arena.error_of(refused)
    finally:
        await server.start()
    assert "Try again shortly" in message and "tell a moderator" not in message, message
    assert double.hold is not None
    double.hold.set()
    again = await arena.submit_example(tess, "vector_add", "vector_add.py", mode="test")
    final = await arena.final(again)
    assert final.embeds[0]["color"] == GREEN, final.summary()
