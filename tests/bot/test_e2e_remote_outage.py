"""The real runner daemon (CPU slot, sandboxed workers) down when a submission comes, then started: the job waits,
the user is told so, and it runs once the daemon is up, after one attempt."""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.bot_settings import RunnerConfig
from core.settings import DispatchSettings, RateLimitSettings, Settings, StoreSettings
from runner.daemon.server import create_app
from runner.settings import RunnerSettings
from tests.bot.harness import GREEN, Arena
from tests.fakediscord import RecordedMessage
from tests.store.faults import free_port

pytestmark = pytest.mark.timeout(400)

SECRET = secrets.token_hex(24)


class Daemon:
    """`python -m runner serve` in this process, on a fixed port, that a test starts when it chooses."""

    def __init__(self, state_dir: Path) -> None:
        self.port = free_port()
        self._settings = RunnerSettings(
            secret=SECRET, state_dir=state_dir, device="cpu", max_queue=4, name="cpu-daemon"
        )
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        runner = web.AppRunner(create_app(self._settings), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port, reuse_address=True).start()
        self._runner = runner

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()


@pytest.fixture
async def daemon() -> AsyncIterator[Daemon]:
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        down = Daemon(Path(state))
        try:
            yield down
        finally:
            await down.stop()


@pytest.fixture
def bot_overrides(daemon: Daemon, db_dsn: str) -> dict[str, Any]:
    config = RunnerConfig(name="cpu-daemon", url=daemon.url, gpu_type="cpu", slots=1)
    arena = Settings(
        store=StoreSettings(database_url=db_dsn, pool_min_size=1, pool_max_size=8),
        dispatch=DispatchSettings(owner="bot-tests", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2, runner_probe_s=0.5),
        rate=RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100),
        local_user="tester",
    )
    return {"runners": [config], "runner_secret": SECRET, "local_runner": "off", "arena": arena}


def waiting(message: RecordedMessage) -> bool:
    return bool(message.embeds) and "Waiting for the `cpu` runner to come back" in str(message.embeds[0])


async def test_a_submission_waits_for_the_runner_daemon_and_runs_once_it_is_started(
    arena: Arena, daemon: Daemon
) -> None:
    rita = arena.fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    await arena.fake.wait_for_followup(interaction, waiting, timeout=120)
    await daemon.start()
    final = await arena.final(interaction)
    embed = final.embeds[0]
    assert embed["color"] == GREEN and embed["description"] == "✅ All 3 test cases passed.", final.summary()
    job = await arena.bot.pool.fetchrow("SELECT state, attempts FROM jobs WHERE submission_id = 1")
    assert dict(job) == {"state": "done", "attempts": 1}
    assert str(daemon.port) not in str([m.history for m in arena.fake.messages])
