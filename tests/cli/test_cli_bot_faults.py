"""`arena bot` whose database is unreachable stops with one line naming the database, after logging in."""

from __future__ import annotations

import asyncio
import sys
import tempfile

import pytest

from tests.cli.harness import ROOT, arena_env, closed_port, default_sigint, error_lines
from tests.fakediscord import FakeDiscord
from tests.fakediscord.fixtures import fake_discord  # noqa: F401  (fixture, found by name)

pytestmark = pytest.mark.timeout(300)


async def test_arena_bot_with_the_database_unreachable_names_it_and_exits_2(
    fake_discord: FakeDiscord,  # noqa: F811
) -> None:
    with closed_port() as port:
        env = arena_env(
            tempfile.mkdtemp(prefix="arena-bot-faults-"),
            ARENA_BOT_TOKEN=fake_discord.token,
            ARENA_DISCORD_API_BASE=fake_discord.base_url,
            ARENA_BOT_GUILD_ID=fake_discord.guild.id,
            ARENA_BOT_LOCAL_DEVICE="cpu",
            DATABASE_URL=f"postgresql://arena:pw@127.0.0.1:{port}/arena",
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena", "bot", env=env, cwd=ROOT,
            stderr=asyncio.subprocess.PIPE, preexec_fn=default_sigint,
        )  # fmt: skip
        _, raw = await asyncio.wait_for(process.communicate(), 240)
    stderr = raw.decode()
    assert process.returncode == 2, stderr
    assert "Traceback" not in stderr
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    assert f"Cannot connect to PostgreSQL at 127.0.0.1:{port}/arena" in lines[0]
    assert "DATABASE_URL" in lines[0]


async def test_arena_bot_with_a_token_discord_refuses_says_which_variable_to_fix(
    fake_discord: FakeDiscord,  # noqa: F811
) -> None:
    env = arena_env(
        tempfile.mkdtemp(prefix="arena-bot-faults-"),
        ARENA_BOT_TOKEN="not-the-bot-token",
        ARENA_DISCORD_API_BASE=fake_discord.base_url,
        ARENA_BOT_LOCAL_DEVICE="cpu",
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena", "bot", env=env, cwd=ROOT,
        stderr=asyncio.subprocess.PIPE, preexec_fn=default_sigint,
    )  # fmt: skip
    _, raw = await asyncio.wait_for(process.communicate(), 240)
    stderr = raw.decode()
    assert process.returncode == 2, stderr
    assert "Traceback" not in stderr
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    assert "refused the bot's token" in lines[0] and "ARENA_BOT_TOKEN" in lines[0]
