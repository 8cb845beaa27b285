"""End-to-end fixtures: the fake Discord, a real Postgres, and the real bot with a local CPU runner."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.client import ArenaBot
from tests.bot.fleet_member import fleet, fleet_heartbeat_timeout_s  # noqa: F401  (fixtures, found by name)
from tests.bot.harness import Arena, make_settings
from tests.fakediscord import FakeDiscord
from tests.fakediscord.fixtures import fake_discord, running_bot  # noqa: F401  (fixture, found by name)
from tests.store.conftest import db_dsn, pg_dsn, template_db  # noqa: F401  (fixtures, found by name)


@pytest.fixture
def bot_overrides() -> dict[str, Any]:
    """Settings a test module changes for its bot (override this fixture)."""
    return {}


@pytest.fixture
async def arena(
    fake_discord: FakeDiscord,  # noqa: F811
    db_dsn: str,  # noqa: F811
    bot_overrides: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[Arena]:
    # The local runner's sandbox reads RUNNER_* settings. One torch thread per worker: on a 2-core CI machine a
    # second thread competes with this process (bot and fake Discord) and parallel ops stall for milliseconds.
    monkeypatch.setenv("RUNNER_SANDBOX_ENV", '{"OMP_NUM_THREADS": "1"}')
    role = fake_discord.add_role("Arena Moderator")
    moderator = fake_discord.add_member("mod", roles=(role,))
    bot = ArenaBot(make_settings(fake_discord, db_dsn, role, **bot_overrides))
    async with running_bot(fake_discord, bot):
        yield Arena(fake_discord, bot, moderator, role)
        await asyncio.wait_for(bot.tracker.wait_idle(), 300)  # every live message has its final state
