"""A submission made while its runner is down: the user is told that it waits, and it runs when the runner is back.

The runner is a `RunnerDouble` (runner-shaped HTTP daemon, made-up verdicts, no sandbox) that the real bot reaches
through its remote-runner settings; nothing the bot posts may name the runner's address.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.bot_settings import RunnerConfig
from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import RecordedMessage
from tests.store.faults import RunnerDouble

pytestmark = pytest.mark.timeout(300)

SECRET = secrets.token_hex(16)
WAITING = "Waiting for the `h100` runner to come back"


@pytest.fixture
async def double() -> AsyncIterator[RunnerDouble]:
    runner = RunnerDouble(SECRET)  # down until a test starts it
    try:
        yield runner
    finally:
        await runner.stop()


@pytest.fixture
def bot_overrides(double: RunnerDouble, db_dsn: str) -> dict[str, Any]:
    config = RunnerConfig(name="h100-box", url=double.url, gpu_type="h100", slots=1)
    arena = Settings(
        store=StoreSettings(database_url=db_dsn, pool_min_size=1, pool_max_size=8),
        dispatch=DispatchSettings(owner="bot-tests", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2, runner_probe_s=0.3),
        rate=RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100),
        local_user="tester",
    )
    return {"runners": [config], "runner_secret": SECRET, "local_runner": "off", "arena": arena}


def shows(text: str) -> Any:
    def predicate(message: RecordedMessage) -> bool:
        return bool(message.embeds) and text in str(message.embeds[0].get("description", ""))

    return predicate


async def test_a_submission_waits_for_its_runner_says_so_and_runs_when_it_is_back(
    arena: Arena, double: RunnerDouble
) -> None:
    fake = arena.fake
    rita = fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    await fake.wait_for_followup(interaction, shows(WAITING), timeout=120)

    asked = await fake.invoke_slash(arena.moderator, "mod runners")
    field = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]["fields"][0]
    assert field["name"] == "h100-box" and "no answer" in field["value"]

    await double.start()
    final = await arena.final(interaction)
    assert final.embeds[0]["color"] == GREEN
    job = await arena.bot.pool.fetchrow("SELECT state, attempts FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "done", "attempts": 1}, "the wait cost the job no attempt"

    posted = json.dumps([m.history for m in fake.messages])
    for leak in (double.url, f":{double.port}"):  # (the fake Discord itself is on 127.0.0.1)
        assert leak not in posted, f"{leak!r} was shown in Discord"
