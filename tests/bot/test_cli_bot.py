"""`arena bot` is configured from the environment alone: it starts, syncs its commands, answers, and stops."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from discord.ext.commands import GroupCog

from bot.client import COGS
from tests.fakediscord import FakeDiscord


async def _stderr_after_exit(process: asyncio.subprocess.Process, timeout_s: float = 120) -> bytes:
    """The bot's log once it has exited. A bot that does not stop is made to dump every thread's stack
    (faulthandler, on SIGABRT) and the test fails with its log, so that a hang says where it is."""
    assert process.stderr is not None
    chunks: list[bytes] = []

    async def collect() -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.read(65536):
            chunks.append(chunk)

    reader = asyncio.create_task(collect())
    try:
        await asyncio.wait_for(process.wait(), timeout_s)
        await asyncio.wait_for(reader, 10)
        return b"".join(chunks)
    except TimeoutError:
        alive = process.returncode is None
        if alive:
            process.send_signal(signal.SIGABRT)
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
        await asyncio.sleep(1)
        reader.cancel()
    log = b"".join(chunks).decode(errors="replace")
    state = "did not stop" if alive else "stopped, but its log pipe stayed open"
    raise AssertionError(f"the bot {state} within {timeout_s:.0f} s of SIGINT:\n{log[-12000:]}")


def _default_sigint() -> None:
    """A shell that starts the tests in the background makes them ignore SIGINT, and children inherit that:
    the bot would never see the test's SIGINT. Python installs its KeyboardInterrupt handler only when SIGINT is
    not ignored at start-up."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_arena_bot_runs_from_environment_variables(fake_discord: FakeDiscord, db_dsn: str) -> None:
    env = {
        **os.environ,
        "ARENA_BOT_TOKEN": fake_discord.token,
        "ARENA_DISCORD_API_BASE": fake_discord.base_url,
        "ARENA_BOT_GUILD_ID": fake_discord.guild.id,
        "ARENA_BOT_LOCAL_DEVICE": "cpu",
        "DATABASE_URL": db_dsn,
        "PYTHONFAULTHANDLER": "1",
        "ARENA_BOT_HEALTH_PORT": "0",  # its probes have their own test; 8081 may be another run's
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena", "bot", env=env, stderr=asyncio.subprocess.PIPE, preexec_fn=_default_sigint
    )
    try:
        await fake_discord.wait_for_commands("submit", "leaderboard", "mod", timeout=180)
        await fake_discord.wait_until_connected(timeout=120)
        user = fake_discord.add_member("quinn")
        asked = await fake_discord.invoke_slash(user, "problems")
        listing = await fake_discord.wait_for_original(asked, lambda m: bool(m.embeds))
        assert "`relu`" in str(listing.embeds[0]["fields"])  # the first page: activations, easiest first
    finally:
        process.send_signal(signal.SIGINT)
        stderr = await _stderr_after_exit(process)
    log = stderr.decode()
    assert process.returncode == 0, log
    # Every top-level command of every cog reached the guild; a group cog (/mod) is one command.
    commands = sum(1 if issubclass(cog, GroupCog) else len(cog.__cog_app_commands__) for cog in COGS)
    assert f"synced {commands} commands to guild" in log and "local runner serves cpu" in log


async def test_arena_bot_without_a_token_says_what_to_set() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_BOT_TOKEN", "DISCORD_TOKEN")}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena", "bot", env=env, stderr=asyncio.subprocess.PIPE, cwd="/"
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 2
    assert "Set ARENA_BOT_TOKEN (or DISCORD_TOKEN)" in stderr.decode()
