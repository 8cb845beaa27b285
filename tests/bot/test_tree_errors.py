"""Error routing of the command tree: each kind of failure becomes the right private reply (through the fake)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Literal

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from bot.client import ArenaTree
from bot.cogs._common import NotModeratorError, defer
from core.errors import BadUploadError, RateLimitedError
from tests.bot.harness import RED
from tests.fakediscord import FakeDiscord
from tests.fakediscord.fixtures import running_bot

Kind = Literal["user", "rate", "crash", "public-crash"]


class Rejecting(app_commands.Transformer):
    async def transform(self, interaction: discord.Interaction, value: str) -> str:
        raise app_commands.TransformerError(value, discord.AppCommandOptionType.string, self)


def _deny(interaction: discord.Interaction) -> bool:
    raise NotModeratorError


def build_bot(guild_id: int) -> commands.Bot:
    bot = commands.Bot(
        command_prefix=commands.when_mentioned,
        intents=discord.Intents.default(),
        tree_cls=ArenaTree,
        guild_ready_timeout=0.05,
    )
    guild = discord.Object(guild_id)

    @app_commands.command(description="Fail in a chosen way")
    async def fail(interaction: discord.Interaction, kind: Kind) -> None:
        if kind == "user":
            raise BadUploadError("`a.txt` is not a .cu or .py file.")
        if kind == "rate":
            raise RateLimitedError("You have used your ranked submissions. Try again in 3 minutes.", 180.0)
        if kind == "public-crash":
            await defer(interaction, public=True)
        raise RuntimeError("boom")

    @app_commands.command(description="Only for moderators")
    @app_commands.check(_deny)
    async def guarded(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("never")

    @app_commands.command(description="An option no value fits")
    async def convert(interaction: discord.Interaction, value: app_commands.Transform[str, Rejecting]) -> None:
        await interaction.response.send_message(value)

    for command in (fail, guarded, convert):
        bot.tree.add_command(command, guild=guild)

    async def setup_hook() -> None:
        await bot.tree.sync(guild=guild)

    bot.setup_hook = setup_hook  # type: ignore[method-assign]
    return bot


@pytest.fixture
async def tree_bot(fake_discord: FakeDiscord) -> AsyncIterator[commands.Bot]:
    async with running_bot(fake_discord, build_bot(int(fake_discord.guild.id)), fail_on_errors=False) as bot:
        yield bot


async def _private_reply(fake: FakeDiscord, command: str, options: dict[str, str] | None = None) -> dict:
    interaction = await fake.invoke_slash(fake.add_member("olga"), command, options or {})
    reply = await fake.wait_for_message(lambda m: m.interaction_id == interaction.id and bool(m.embeds))
    assert reply.ephemeral and reply.embeds[0]["color"] == RED
    return reply.embeds[0]


async def test_user_facing_errors_are_shown_as_they_are(fake_discord: FakeDiscord, tree_bot: commands.Bot) -> None:
    embed = await _private_reply(fake_discord, "fail", {"kind": "user"})
    assert embed["description"] == "❌ `a.txt` is not a .cu or .py file."
    assert not fake_discord.bot_errors


async def test_a_rate_limit_says_when_to_retry(fake_discord: FakeDiscord, tree_bot: commands.Bot) -> None:
    embed = await _private_reply(fake_discord, "fail", {"kind": "rate"})
    assert "Try again in 3 minutes." in embed["description"]
    assert embed["fields"][0]["name"] == "Next submission"
    assert re.fullmatch(r"<t:\d+:R>", embed["fields"][0]["value"])


async def test_failed_checks_and_bad_values_are_user_errors(fake_discord: FakeDiscord, tree_bot: commands.Bot) -> None:
    guarded = await _private_reply(fake_discord, "guarded")
    assert "Only moderators" in guarded["description"]
    converted = await _private_reply(fake_discord, "convert", {"value": "xyz"})
    assert "`xyz` is not a valid value here" in converted["description"]
    assert not fake_discord.bot_errors


async def test_unexpected_errors_apologise_with_an_incident_id_that_is_logged(
    fake_discord: FakeDiscord, tree_bot: commands.Bot
) -> None:
    embed = await _private_reply(fake_discord, "fail", {"kind": "crash"})
    incident = re.search(r"Error id `([0-9a-f]{10})`", embed["description"])
    assert incident is not None and embed["description"].startswith("Sorry, something went wrong on our side.")
    assert "boom" not in embed["description"]
    logged = [e for e in fake_discord.bot_errors if f"incident {incident[1]}" in e]
    assert len(logged) == 1 and "/fail by user" in logged[0]
    fake_discord.bot_errors.clear()


async def test_an_error_after_a_public_defer_is_still_private(
    fake_discord: FakeDiscord, tree_bot: commands.Bot
) -> None:
    interaction = await fake_discord.invoke_slash(fake_discord.add_member("pat"), "fail", {"kind": "public-crash"})
    reply = await fake_discord.wait_for_followup(interaction, lambda m: bool(m.embeds))
    assert reply.ephemeral and "Error id" in reply.embeds[0]["description"]
    placeholder = fake_discord.message(interaction.original_message_id or "")
    assert placeholder.deleted and not placeholder.ephemeral
    fake_discord.bot_errors.clear()
