"""Contests for everyone: `/contest` (a board), `/contests` (the list), `/rating`, `/ratings` and `/reveal`.

Moderators create and change contests with `/mod contest …` (bot/cogs/moderation.py); the freeze and its
announcement run in the background (bot/freezer.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import answer, contest_choices, defer, mark_answered, member_actor, member_key, utcnow
from bot.ui.contests import contest_list_pages, rating_table_pages, render_contest, render_rating
from bot.ui.embeds import render_notice
from bot.ui.pages import StaticPages
from bot.ui.views import Paginator
from core.contests import set_code_reveal
from core.contests import views as contest_views

if TYPE_CHECKING:
    from bot.client import ArenaBot

Phase = Literal["contest", "upsolve"]


class ContestCog(commands.Cog):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot

    @app_commands.command(name="contest", description="A contest: its window, state, board and podium")
    @app_commands.describe(slug="the contest", phase="contest: the board of the window (default); upsolve: after it")
    @app_commands.autocomplete(slug=contest_choices)
    async def contest(
        self, interaction: discord.Interaction, slug: app_commands.Range[str, 1, 64], phase: Phase = "contest"
    ) -> None:
        await defer(interaction, public=True)
        page = await contest_views.contest_page(self.bot.pool, slug.strip().lower(), phase)
        await answer(interaction, embed=render_contest(page, utcnow()))

    @app_commands.command(name="contests", description="Every contest, the latest first (cancelled ones marked)")
    async def contests(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=True)
        views = await contest_views.list_contests(self.bot.pool)
        await self._pages(interaction, contest_list_pages(views, utcnow()))

    @app_commands.command(name="rating", description="A contest rating (Elo-MMR) and its history")
    @app_commands.describe(user="whose rating (default: yours)")
    async def rating(self, interaction: discord.Interaction, user: discord.User | None = None) -> None:
        who = user or interaction.user
        await defer(interaction, public=True)
        card = await contest_views.rating_card(self.bot.pool, member_key(who), who.display_name)
        await answer(interaction, embed=render_rating(card))

    @app_commands.command(name="ratings", description="The rating table: every rated member, by conservative rating")
    async def ratings(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=True)
        rows = await contest_views.rating_table(self.bot.pool)
        await self._pages(interaction, rating_table_pages(rows))

    @app_commands.command(name="reveal", description="Whether others may read your contest code after a contest ends")
    @app_commands.describe(code="on: readable after the end (the default); off: only you and moderators")
    async def reveal(self, interaction: discord.Interaction, code: Literal["on", "off"]) -> None:
        await defer(interaction, public=False)
        await set_code_reveal(self.bot.pool, member_actor(interaction.user), code == "on")
        text = (
            "Others may read the code of your contest runs once their contest has ended."
            if code == "on"
            else "Only you and moderators can read the code of your contest runs, also of those ended already."
        )
        await answer(interaction, embed=render_notice(text))

    async def _pages(self, interaction: discord.Interaction, embeds: list[discord.Embed]) -> None:
        source = StaticPages(embeds)
        view = Paginator(source, interaction.user.id, self.bot.settings.view_timeout_s)
        mark_answered(interaction)
        await view.start(interaction, await source.get_page(0))
