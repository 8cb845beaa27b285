"""A competitor's own data: `/submission` (result and code), `/me` (stats, standings) and `/quota` (what is left)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import answer, defer, is_moderator, member_key
from bot.ui.embeds import SubmissionHeader
from bot.ui.pages import render_quota, render_stats, render_submission
from bot.ui.results import ResultMessage, as_files, result_message
from core import browse
from core.quota import describe_queue, queue_lines, user_queue, user_quota

if TYPE_CHECKING:
    from bot.client import ArenaBot


def _detail_message(detail: browse.SubmissionDetail, bot: ArenaBot) -> ResultMessage:
    sub = detail.submission
    header = SubmissionHeader(
        sub.id, sub.slug, detail.owner_name, sub.file_name, sub.language, sub.dtype, sub.mode, sub.gpu_type
    )
    if detail.result is None:
        message = ResultMessage(render_submission(detail))
    else:
        message = result_message(header, detail.result, bot.settings.spec_for(detail.result.device))
    message.files.append((sub.file_name, detail.source.encode("utf-8")))
    return message


class AccountCog(commands.Cog):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot

    @app_commands.command(name="submission", description="One of your submissions: its result and your code")
    @app_commands.describe(id="the submission number (from its message, or /me)")
    async def submission(self, interaction: discord.Interaction, id: app_commands.Range[int, 1]) -> None:
        await defer(interaction, public=False)
        detail = await browse.submission_detail(
            self.bot.pool, id, member_key(interaction.user), moderator=is_moderator(interaction)
        )
        message = await asyncio.to_thread(_detail_message, detail, self.bot)
        await answer(interaction, embed=message.embed, attachments=as_files(message.files))

    @app_commands.command(
        name="quota", description="What you may still submit in each mode, when it refills, and your queued jobs"
    )
    async def quota(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=False)
        member = member_key(interaction.user)
        quotas = await user_quota(self.bot.pool, member, self.bot.settings.arena.rate)
        embed = render_quota(interaction.user.display_name, quotas)
        queue = await user_queue(self.bot.pool, member)
        if queue.queued:
            lines = "\n".join(queue_lines(queue)) or "—"
            embed.add_field(name=f"queue: {describe_queue(queue)}", value=lines, inline=False)
        await answer(interaction, embed=embed)

    @app_commands.command(name="me", description="Your submissions, leaderboard places and remaining quota")
    async def me(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=False)
        stats = await browse.user_stats(
            self.bot.pool, member_key(interaction.user), interaction.user.display_name, self.bot.settings.arena.rate
        )
        await answer(interaction, embed=render_stats(stats))
