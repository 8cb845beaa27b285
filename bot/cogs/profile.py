"""`/profile diff a [b]`: two of your profiled runs (mode `profile`) side by side, kernel by kernel.

The core decides what may be compared and picks B when it is left out (`core.profile_diff`); the answer is private,
as the runs it shows are the member's own (or revealed contest code)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import answer, defer, member_key
from bot.ui.profile_diff import render_profile_diff
from core.profile_diff import profile_diff, viewer_id_of

if TYPE_CHECKING:
    from bot.client import ArenaBot


class ProfileCog(commands.GroupCog, group_name="profile", group_description="Your profiled runs"):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot
        super().__init__()

    @app_commands.command(name="diff", description="Two profiled runs side by side: what changed from A to B")
    @app_commands.describe(
        a="the run compared from (a submission number of mode profile)",
        b="the run compared to (default: your fastest other profile of the same target, else a leader's)",
    )
    async def diff(
        self,
        interaction: discord.Interaction,
        a: app_commands.Range[int, 1],
        b: app_commands.Range[int, 1] | None = None,
    ) -> None:
        await defer(interaction, public=False)
        viewer = await viewer_id_of(self.bot.pool, member_key(interaction.user))
        found = await profile_diff(self.bot.pool, viewer, a, b)
        await answer(interaction, embed=render_profile_diff(found))
