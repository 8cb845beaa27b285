"""pytest fixtures for the fake Discord, and `running_bot` to run a real discord.py client against it.

Use from any test directory's conftest.py:

    from tests.fakediscord.fixtures import fake_discord  # noqa: F401  (re-exported fixture)

`fake_discord` starts a `FakeDiscord`, points discord.py at it (`configure_discord_base_url`), and afterwards
restores discord.py's endpoints and fails the test if violations remain: a test that provokes one on purpose
asserts on it and then clears `fake.violations`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TypeVar

import discord
import pytest

from bot.discord_base import configure_discord_base_url, current_discord_endpoints, set_discord_endpoints

from .server import FakeDiscord

log = logging.getLogger(__name__)

ClientT = TypeVar("ClientT", bound=discord.Client)
# Bounds that tell a hang from a busy host, never budgets: each wait ends as soon as its condition holds.
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    """A started fake Discord that discord.py is pointed at; no violations may be left at the end."""
    previous = current_discord_endpoints()
    fake = FakeDiscord()
    await fake.start()
    configure_discord_base_url(fake.base_url)
    try:
        yield fake
    finally:
        await fake.close()
        set_discord_endpoints(previous)
    assert fake.violations == [], "the bot sent requests Discord would reject:\n" + "\n".join(map(str, fake.violations))


class _ErrorCollector(logging.Handler):
    """Keeps the bot's ERROR logs (discord.py logs unhandled command errors there) on the fake."""

    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__(level=logging.ERROR)
        self.fake = fake
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.fake.bot_errors.append(self.format(record))


async def _first(
    awaitable: asyncio.Future[object] | asyncio.Task[object], task: asyncio.Task[None], timeout: float
) -> None:
    """Wait for `awaitable`, failing at once with the bot's own error if its task ends first."""
    done, _ = await asyncio.wait({awaitable, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        awaitable.cancel()
        task.result()  # raises the bot's startup error
        raise RuntimeError("the bot stopped before it was ready")
    if awaitable not in done:
        awaitable.cancel()
        raise TimeoutError(f"the bot was not ready within {timeout}s")
    awaitable.result()


@contextlib.asynccontextmanager
async def running_bot(
    fake: FakeDiscord,
    client: ClientT,
    *,
    wait_ready: bool = True,
    fail_on_errors: bool = True,
    timeout: float = START_TIMEOUT_S,
) -> AsyncIterator[ClientT]:
    """Run `client.start(fake.token)` until the block ends, then close it.

    Waits until the bot has connected (READY + GUILD_CREATE) and, with `wait_ready`, until discord.py fired
    `on_ready` (which waits `guild_ready_timeout` after the last GUILD_CREATE: build test clients with a small
    one). With `fail_on_errors`, ERROR logs from the bot (its unhandled exceptions) fail the block.
    """
    collector = _ErrorCollector(fake)
    root = logging.getLogger()
    root.addHandler(collector)
    task = asyncio.create_task(client.start(fake.token), name="fake-discord-bot")
    try:
        connected = asyncio.ensure_future(fake.wait_until_connected(timeout=timeout))
        await _first(connected, task, timeout)
        if wait_ready:
            await _first(asyncio.ensure_future(client.wait_until_ready()), task, timeout)
        yield client
        if fail_on_errors and fake.bot_errors:
            raise AssertionError("the bot logged errors:\n" + "\n".join(fake.bot_errors))
    finally:
        root.removeHandler(collector)
        await asyncio.wait_for(client.close(), STOP_TIMEOUT_S)
        if not task.done():
            await asyncio.wait_for(task, STOP_TIMEOUT_S)
        elif not task.cancelled() and task.exception() is not None:
            log.warning("the bot's task ended with %r", task.exception())
