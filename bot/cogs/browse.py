"""Browsing: `/leaderboard`, `/problems`, `/problem`, `/starter`."""

from __future__ import annotations

import io
from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import (
    DType,
    LanguageFilter,
    StarterLanguage,
    answer,
    defer,
    gpu_choices,
    mark_answered,
    member_key,
    problem_choices,
)
from bot.ui.pages import LeaderboardPages, StaticPages, problem_list_pages, render_problem
from bot.ui.views import Paginator
from contract.names import Method, rank_pool
from core import browse
from core.errors import InvalidOptionError

if TYPE_CHECKING:
    from bot.client import ArenaBot


# The timing methods a board can be ranked by.
TimingMethod = Method


class BrowseCog(commands.Cog):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot

    @app_commands.command(name="leaderboard", description="The best ranked submissions of a problem")
    @app_commands.describe(
        problem="the problem",
        gpu="GPU type of the board (default: the only one, or the configured default)",
        dtype="element type",
        language="show only solutions in this language",
        method="timing method of the board (default: the fullest board's); each method ranks separately",
        ranks="a distributed problem's world size: each has its own board (leave out for one device)",
    )
    @app_commands.autocomplete(problem=problem_choices, gpu=gpu_choices)
    async def leaderboard(
        self,
        interaction: discord.Interaction,
        problem: app_commands.Range[str, 1, 64],
        gpu: app_commands.Range[str, 1, 64] | None = None,
        dtype: DType = "float32",
        language: LanguageFilter = "any",
        method: TimingMethod | None = None,
        ranks: app_commands.Range[int, 1, 64] | None = None,
    ) -> None:
        chosen = gpu or self.bot.service.default_gpu()
        if chosen is None:
            raise InvalidOptionError("Several GPU types have boards; choose one with the `gpu` option.")
        # The board of N ranks is keyed by the pool's rank pool (`cpux2`), as /submit's `ranks` queues it.
        gpu_type = rank_pool(chosen.strip().lower(), ranks or 1)
        await defer(interaction, public=True)
        size = self.bot.settings.leaderboard_page_size
        fetch = partial(
            browse.leaderboard_page,
            self.bot.pool, problem.strip(), gpu_type, dtype, language,
            page_size=size, caller_external_id=member_key(interaction.user), method=method,
        )  # fmt: skip
        source = LeaderboardPages(lambda page: fetch(page=page), interaction.user.display_name)
        first = await source.get_page(0)
        view = Paginator(source, interaction.user.id, self.bot.settings.view_timeout_s)
        mark_answered(interaction)
        await view.start(interaction, first)

    @app_commands.command(name="problems", description="All problems, by category and difficulty")
    async def problems(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=True)
        entries = await browse.list_problems(self.bot.pool)
        source = StaticPages(problem_list_pages(entries))
        view = Paginator(source, interaction.user.id, self.bot.settings.view_timeout_s)
        mark_answered(interaction)
        await view.start(interaction, await source.get_page(0))

    @app_commands.command(name="problem", description="A problem's description, signature, test cases and FLOP formula")
    @app_commands.describe(slug="the problem")
    @app_commands.autocomplete(slug=problem_choices)
    async def problem(self, interaction: discord.Interaction, slug: app_commands.Range[str, 1, 64]) -> None:
        await defer(interaction, public=True)
        entry = await browse.get_problem_entry(self.bot.pool, slug.strip())
        await answer(interaction, embed=render_problem(entry))

    @app_commands.command(name="starter", description="Starter code for a problem, as a file")
    @app_commands.describe(slug="the problem", language="cuda (.cu), python (PyTorch) or triton", dtype="element type")
    @app_commands.autocomplete(slug=problem_choices)
    async def starter(
        self,
        interaction: discord.Interaction,
        slug: app_commands.Range[str, 1, 64],
        language: StarterLanguage,
        dtype: DType = "float32",
    ) -> None:
        await defer(interaction, public=False)
        file_name, text = await browse.starter_file(self.bot.pool, slug.strip(), language, dtype)
        attachment = discord.File(io.BytesIO(text.encode("utf-8")), filename=file_name)
        message = f"Starter for `{slug}` ({language}, {dtype}). Fill in `solution`, then `/submit` it."
        await answer(interaction, content=message, attachments=[attachment])
