"""The bot with a remote runner: a real runner daemon on 127.0.0.1 (CPU slot, real sandboxed workers),
reached over the signed HTTP API by `RemoteRunner`; no local runner."""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.bot_settings import RunnerConfig
from runner.daemon.server import create_app
from runner.settings import RunnerSettings
from tests.bot.harness import DATA, GREEN, JOB_TIMEOUT_S, Arena

SECRET = secrets.token_hex(24)


@pytest.fixture
async def runner_url() -> AsyncIterator[str]:
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        settings = RunnerSettings(secret=SECRET, state_dir=Path(state), device="cpu", max_queue=4, name="cpu-daemon")
        app = web.AppRunner(create_app(settings), access_log=None)
        await app.setup()
        await web.TCPSite(app, "127.0.0.1", 0).start()  # a port the system picks: nothing else can take it first
        host, port = app.addresses[0][:2]
        try:
            yield f"http://{host}:{port}"
        finally:
            await app.cleanup()


@pytest.fixture
def bot_overrides(runner_url: str) -> dict[str, Any]:
    runner = RunnerConfig(name="cpu-daemon", url=runner_url, gpu_type="cpu", slots=1)
    return {"runners": [runner], "runner_secret": SECRET, "local_runner": "off"}


async def test_a_submission_runs_on_the_runner_daemon(arena: Arena) -> None:
    fake = arena.fake
    rita = fake.add_member("rita")
    interaction = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test")
    final = await arena.final(interaction)
    embed = final.embeds[0]
    assert embed["color"] == GREEN and embed["description"] == "✅ All 3 test cases passed."
    assert embed["footer"]["text"].startswith("Rita · vector_add.py · python · test · cpu · CPU")
    row = await arena.bot.pool.fetchrow("SELECT runner, status FROM submissions WHERE id = 1")
    assert dict(row) == {"runner": "cpu-daemon", "status": "passed"}

    asked = await fake.invoke_slash(arena.moderator, "mod runners")
    status = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]["fields"][0]
    assert status["name"] == "cpu-daemon"
    assert "remote · 1 slot(s)" in status["value"] and "free slots 1/1" in status["value"]


async def test_the_runner_daemon_runs_the_admission_self_test(arena: Arena) -> None:
    module = (DATA / "vector_sub.py").read_bytes()
    added = await arena.fake.invoke_slash(arena.moderator, "mod problem-add", attachments=[("vector_sub.py", module)])
    report = await arena.fake.wait_for_original(added, lambda m: bool(m.embeds), timeout=JOB_TIMEOUT_S)
    assert report.embeds[0]["title"] == "Admission self-test of `vector_sub`: ✅ passed"
    assert "Ran on `cpu-daemon`" in report.embeds[0]["description"]
