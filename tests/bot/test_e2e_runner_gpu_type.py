"""A runner configured with a GPU type its health contradicts gets no job; the runner that matches is used.

One real runner daemon on this host's CPU (real sandboxed workers) is configured twice in the bot's settings:
as `cpu-daemon` (GPU type `cpu`, what it reports) and as `h100-box` (GPU type `h100`, which it is not). The
bot's real dispatcher, store and remote runners decide where jobs go; a job for `h100` fails after the
(short) outage limit, as when no runner of its type answers.
"""

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
from tests.bot.harness import GREEN, RED, Arena
from tests.fakediscord import RecordedMessage

pytestmark = pytest.mark.timeout(300)

SECRET = secrets.token_hex(24)
WAITING = "Waiting for the `h100` runner to come back"


@pytest.fixture
async def runner_url() -> AsyncIterator[str]:
    with tempfile.TemporaryDirectory(prefix="arena-bot-runner-") as state:
        settings = RunnerSettings(secret=SECRET, state_dir=Path(state), device="cpu", max_queue=4, name="cpu-daemon")
        app = web.AppRunner(create_app(settings), access_log=None)
        await app.setup()
        await web.TCPSite(app, "127.0.0.1", 0).start()
        host, port = app.addresses[0][:2]
        try:
            yield f"http://{host}:{port}"
        finally:
            await app.cleanup()


@pytest.fixture
def bot_overrides(runner_url: str, db_dsn: str) -> dict[str, Any]:
    runners = [
        RunnerConfig(name="h100-box", url=runner_url, gpu_type="h100", slots=1),
        RunnerConfig(name="cpu-daemon", url=runner_url, gpu_type="cpu", slots=1),
    ]
    arena = Settings(
        store=StoreSettings(database_url=db_dsn, pool_min_size=1, pool_max_size=8),
        dispatch=DispatchSettings(
            owner="bot-tests", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2, runner_probe_s=0.3, runner_outage_s=5.0
        ),
        rate=RateLimitSettings(test_burst=100, benchmark_burst=100, ranked_burst=100),
        local_user="tester",
    )
    return {"runners": runners, "runner_secret": SECRET, "local_runner": "off", "arena": arena}


def shows(text: str) -> Any:
    def predicate(message: RecordedMessage) -> bool:
        return bool(message.embeds) and text in str(message.embeds[0].get("description", ""))

    return predicate


async def test_a_runner_reporting_another_gpu_type_is_refused_and_the_matching_one_runs_the_job(
    arena: Arena,
) -> None:
    fake = arena.fake
    rita = fake.add_member("rita")
    on_cpu = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test", gpu="cpu")
    assert (await arena.final(on_cpu)).embeds[0]["color"] == GREEN

    on_h100 = await arena.submit_example(rita, "vector_add", "vector_add.py", mode="test", gpu="h100")
    # Never posted to the CPU daemon: the job waits as for a runner that does not answer, then fails as one.
    await fake.wait_for_followup(on_h100, shows(WAITING), timeout=120)
    assert (await arena.final(on_h100)).embeds[0]["color"] == RED
    # The store logs a job that no runner took as an error, by design; that one is expected here.
    expected = [e for e in fake.bot_errors if "no h100 runner answered" in e]
    assert len(expected) == 1, fake.bot_errors
    fake.bot_errors.remove(expected[0])

    rows = await arena.bot.pool.fetch(
        "SELECT s.gpu_type, s.runner, s.status, j.attempts FROM submissions s JOIN jobs j ON j.submission_id = s.id "
        "ORDER BY s.id"
    )
    assert [dict(r) for r in rows] == [
        {"gpu_type": "cpu", "runner": "cpu-daemon", "status": "passed", "attempts": 1},
        {"gpu_type": "h100", "runner": "none", "status": "error", "attempts": 0},
    ]

    asked = await fake.invoke_slash(arena.moderator, "mod runners")
    embed = (await fake.wait_for_original(asked, lambda m: bool(m.embeds))).embeds[0]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert "⛔ refused, no job goes to it: configured as GPU type `h100`, but it reports `cpu`" in fields["h100-box"]
    assert "refused" not in fields["cpu-daemon"]
