"""The bot's probes for machines (bot/health.py), through the real discord.py client and the fake Discord.

`/healthz` answers `ok` while the process answers; `/readyz` answers `ok` once the bot is connected to the gateway
and while its store answers, else 503 `not ready`; neither says anything more. The bot's store is a PostgreSQL of
this module's own, so that a test may stop it. `arena bot` serves them on ARENA_BOT_HEALTH_HOST:ARENA_BOT_HEALTH_PORT
and says in one line when it cannot.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest
from pydantic import ValidationError

from bot.bot_settings import BotSettings
from bot.client import ArenaBot
from bot.health import HealthListenerError, bot_readiness, health_listener
from tests.bot.harness import make_settings
from tests.fakediscord import FakeDiscord
from tests.fakediscord.fixtures import running_bot
from tests.store.faults import PostgresUnderTest, free_port

pytestmark = pytest.mark.timeout(600)
# How long a test waits for an answer: a bound that tells a stuck bot from a busy host, never a budget.
PATIENCE_S = 120.0


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[PostgresUnderTest]:
    started = await PostgresUnderTest.start_new()
    try:
        yield started
    finally:
        await started.close()


async def probe(url: str) -> tuple[int, str]:
    """Status and body of a GET; (0, "") when nothing answers."""
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
                return response.status, await response.text()
    except (aiohttp.ClientError, TimeoutError):
        return 0, ""


async def until(url: str, expected: tuple[int, str], describe: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while (answer := await probe(url)) != expected:
        assert loop.time() < deadline, f"{url} answered {answer}, not {expected}: {describe}"
        await asyncio.sleep(0.2)


def bare_bot(fake: FakeDiscord, dsn: str) -> ArenaBot:
    """The real bot with no runner at all: its readiness is Discord's and the store's, not a runner's."""
    role = fake.add_role("Arena Moderator")
    return ArenaBot(make_settings(fake, dsn, role, fleet="off", local_runner="off"))


async def test_the_bot_is_ready_once_connected_and_while_its_store_answers(
    fake_discord: FakeDiscord, server: PostgresUnderTest
) -> None:
    bot = bare_bot(fake_discord, await server.new_database())
    async with health_listener("127.0.0.1", free_port(), bot_readiness(bot)) as url:
        assert url is not None
        # Before the bot logs in: alive, not ready.
        assert await probe(url + "/healthz") == (200, "ok")
        assert await probe(url + "/readyz") == (503, "not ready")
        async with running_bot(fake_discord, bot):
            assert await probe(url + "/readyz") == (200, "ok")
            await server.stop()
            try:
                await until(url + "/readyz", (503, "not ready"), "a stopped store left the bot ready")
                assert await probe(url + "/healthz") == (200, "ok")
            finally:
                await server.start()
            await until(url + "/readyz", (200, "ok"), "the bot did not become ready again once its store was back")
        # Closed: its gateway connection and its store are gone.
        assert await probe(url + "/readyz") == (503, "not ready")
        assert await probe(url + "/healthz") == (200, "ok")


async def test_port_0_turns_the_listener_off_and_a_taken_port_says_which_setting_to_change() -> None:
    async def never() -> bool:
        return False

    async with health_listener("127.0.0.1", 0, never) as url:
        assert url is None
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(HealthListenerError) as refused:
            async with health_listener("127.0.0.1", port, never):
                pass
    assert f"127.0.0.1:{port}" in refused.value.message and "ARENA_BOT_HEALTH_PORT" in refused.value.message


def test_the_listener_is_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = BotSettings(token="not-a-real-token")
    assert (defaults.health_host, defaults.health_port) == ("127.0.0.1", 8081)
    monkeypatch.setenv("ARENA_BOT_HEALTH_HOST", "0.0.0.0")
    monkeypatch.setenv("ARENA_BOT_HEALTH_PORT", "0")
    configured = BotSettings(token="not-a-real-token")
    assert (configured.health_host, configured.health_port) == ("0.0.0.0", 0)
    monkeypatch.setenv("ARENA_BOT_HEALTH_PORT", "70000")
    with pytest.raises(ValidationError, match="health_port"):
        BotSettings(token="not-a-real-token")


def _bot_env(fake: FakeDiscord, dsn: str, port: int) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DISCORD_", "DATABASE_"))}
    return {
        **kept,
        "ARENA_BOT_TOKEN": fake.token,
        "ARENA_DISCORD_API_BASE": fake.base_url,
        "ARENA_BOT_GUILD_ID": fake.guild.id,
        "ARENA_BOT_FLEET": "off",
        "ARENA_BOT_LOCAL_RUNNER": "off",
        "ARENA_BOT_HEALTH_PORT": str(port),
        "DATABASE_URL": dsn,
    }


def _default_sigint() -> None:
    """A shell that starts the tests in the background makes children ignore SIGINT; the bot must see it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_arena_bot_serves_its_probes_from_the_environment(
    fake_discord: FakeDiscord, server: PostgresUnderTest
) -> None:
    port = free_port()
    env = _bot_env(fake_discord, await server.new_database(), port)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "arena",
        "bot",
        env=env,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=_default_sigint,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        await until(url + "/readyz", (200, "ok"), "arena bot did not become ready")
        assert await probe(url + "/healthz") == (200, "ok")
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(process.communicate(), PATIENCE_S)
    assert process.returncode == 0, stderr.decode()[-4000:]
    assert await probe(url + "/healthz") == (0, ""), "the listener stops with the bot"


async def test_arena_bot_on_a_taken_health_port_says_so_in_one_line(
    fake_discord: FakeDiscord, server: PostgresUnderTest
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = _bot_env(fake_discord, await server.new_database(), port)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena", "bot", env=env, stderr=asyncio.subprocess.PIPE
        )
        _, stderr = await asyncio.wait_for(process.communicate(), PATIENCE_S)
    log = stderr.decode()
    assert process.returncode == 2, log[-4000:]
    assert f"127.0.0.1:{port}" in log and "ARENA_BOT_HEALTH_PORT" in log and "Traceback" not in log
