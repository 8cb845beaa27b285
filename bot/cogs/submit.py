"""`/submit`: send a solution file; the answer is private, the live progress and result are public."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import (
    MODE_CHOICES,
    DType,
    answer,
    defer,
    gpu_choices,
    member_key,
    problem_choices,
    read_attachment,
)
from bot.ui.embeds import SubmissionHeader, render_receipt
from core.submit.intake import parse_mode
from core.submit.uploads import check_declared

if TYPE_CHECKING:
    from bot.client import ArenaBot


class SubmitCog(commands.Cog):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot

    @app_commands.command(name="submit", description="Submit a CUDA (.cu) or Python/Triton (.py) solution")
    @app_commands.describe(
        problem="the problem to solve",
        file="your solution: a .cu file or a .py module, at most 256 KiB",
        dtype="element type of the inputs and outputs",
        mode="what to do with it (default benchmark); profile runs one case under Nsight Compute, never ranked",
        gpu="the GPU type to run on (default: the only one, or the configured default)",
        case="with mode profile: the test case to profile, from 0 as /problem lists them (default the largest)",
        ranks="a distributed problem's world size: how many ranks run it (e.g. 2); leave out for one device",
    )
    @app_commands.autocomplete(problem=problem_choices, gpu=gpu_choices)
    @app_commands.choices(mode=MODE_CHOICES)
    async def submit(
        self,
        interaction: discord.Interaction,
        problem: app_commands.Range[str, 1, 64],
        file: discord.Attachment,
        dtype: DType = "float32",
        # A str, not `Mode`: the choices above name each mode with what it does (Discord sends only their values).
        mode: str = "benchmark",
        gpu: app_commands.Range[str, 1, 64] | None = None,
        case: app_commands.Range[int, 0, 1000] | None = None,
        # Up to 64, as many as a runner's rank slot may hold (RUNNER_RANK_SLOTS); whether the problem takes this
        # many is the service's check, whose refusal names the world sizes it does take.
        ranks: app_commands.Range[int, 1, 64] | None = None,
    ) -> None:
        check_declared(file.filename, file.size)  # before anything is downloaded
        chosen = parse_mode(mode)
        await defer(interaction, public=False)
        data = await read_attachment(file, check=False)
        ticket = await self.bot.service.submit(
            user_external_id=member_key(interaction.user),
            user_name=interaction.user.display_name,
            slug=problem,
            file_name=file.filename,
            data=data,
            dtype=dtype,
            mode=chosen,
            gpu=gpu,
            client_token=str(interaction.id),
            profile_case=case,
            world_size=1 if ranks is None else ranks,
        )
        receipt = render_receipt(
            SubmissionHeader.of(ticket), ticket.receipt.queue_position, len(data), ticket.start_in_s
        )
        await answer(interaction, embed=receipt)
        self.bot.tracker.follow(interaction, ticket)
