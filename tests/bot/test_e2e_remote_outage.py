"""The `cpu` pool has no runner when a submission comes: the job waits in the queue, the user is told so, and it
runs once the real runner daemon (CPU slot, sandboxed workers) joins the pool, after one attempt."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from tests.bot.fleet_member import TestFleet, daemon_hardware, daemon_settings, serve_daemon
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import RecordedMessage

pytestmark = pytest.mark.timeout(400)


@pytest.fixture
async def cpu_pool(fleet: TestFleet) -> AsyncIterator[TestFleet]:
    """The pool exists (an operator made its bootstrap token) before the bot starts; no runner has joined yet."""
    await fleet.token("cpu")
    yield fleet


@pytest.fixture
def bot_overrides(cpu_pool: TestFleet, db_dsn: str) -> dict[str, Any]:
    arena = Settings(
        store=StoreSettings(database_url=db_dsn, pool_min_size=1, pool_max_size=8),
        dispatch=DispatchSettings(owner="bot-tests", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2, runner_probe_s=0.5),
        rate=RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100),
        local_user="tester",
    )
    return {"fleet": "on", "local_runner": "off", "arena": arena}


def queued(message: RecordedMessage) -> bool:
    return bool(message.embeds) and "⏳ Queued: position 1" in str(message.embeds[0].get("description", ""))


async def test_a_submission_waits_for_a_runner_to_join_its_pool_and_runs_once_one_does(
    arena: Arena, cpu_pool: TestFleet
) -> None:
    rita = arena.fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    await arena.fake.wait_for_followup(interaction, queued, timeout=120)
    job = await arena.bot.pool.fetchrow("SELECT state, attempts FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "queued", "attempts": 0}

    member = await cpu_pool.join("cpu-daemon", "cpu")
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        async with serve_daemon(daemon_settings(Path(state), "cpu-daemon"), member.secret) as daemon:
            await member.register(daemon.url, await daemon_hardware(daemon.app))
            final = await arena.final(interaction)
            await member.go_silent()
    embed = final.embeds[0]
    assert embed["color"] == GREEN and embed["description"] == "✅ All 3 test cases passed.", final.summary()
    job = await arena.bot.pool.fetchrow("SELECT state, attempts, runner FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "done", "attempts": 1, "runner": "cpu-daemon"}
    port = daemon.url.rsplit(":", 1)[1]
    assert f":{port}" not in str([m.history for m in arena.fake.messages])
