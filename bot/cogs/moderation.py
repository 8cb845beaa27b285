"""`/mod …`: moderator tools, for members with the configured role or permission. Every answer is private."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import (
    NotModeratorError,
    answer,
    defer,
    is_moderator,
    member_actor,
    problem_choices,
    read_attachment,
)
from bot.ui.embeds import render_notice
from bot.ui.moderation import render_admission, render_published, render_runners
from bot.ui.views import ConfirmView
from core import browse, moderation
from core.admission import Candidate, check_problem_attachment, examine_problem, publish_problem
from core.members import ban_member, external_id

if TYPE_CHECKING:
    from bot.client import ArenaBot

Reason = app_commands.Range[str, 1, 500]
Slug = app_commands.Range[str, 1, 64]


class ModerationCog(commands.GroupCog, group_name="mod", group_description="Moderator tools"):
    def __init__(self, bot: ArenaBot) -> None:
        self.bot = bot
        super().__init__()

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        if not is_moderator(interaction):
            raise NotModeratorError
        return True

    @app_commands.command(name="problem-add", description="Add a problem module: self-test on a runner, then publish")
    @app_commands.describe(file="the problem's Python module (one Problem subclass)", gpu="GPU type to test on")
    async def problem_add(
        self, interaction: discord.Interaction, file: discord.Attachment, gpu: str | None = None
    ) -> None:
        check_problem_attachment(file.filename, file.size)
        await defer(interaction, public=False)
        validator = self.bot.runners.validator(gpu)
        candidate = await examine_problem(self.bot.pool, file.filename, await read_attachment(file, False), validator)
        if not candidate.publishable:
            await answer(interaction, embed=render_admission(candidate))
            return
        publish = partial(self._publish, candidate)
        view = ConfirmView(interaction.user.id, self.bot.settings.view_timeout_s, publish, confirm_label="Publish")
        view.origin = interaction
        await answer(interaction, embed=render_admission(candidate), view=view)

    async def _publish(self, candidate: Candidate, interaction: discord.Interaction) -> discord.Embed:
        return render_published(await publish_problem(self.bot.pool, member_actor(interaction.user), candidate))

    @app_commands.command(name="problem-disable", description="Close a problem for new submissions")
    @app_commands.describe(slug="the problem", reason="why (kept in the audit log)")
    @app_commands.autocomplete(slug=problem_choices)
    async def problem_disable(self, interaction: discord.Interaction, slug: Slug, reason: Reason | None = None) -> None:
        await defer(interaction, public=False)
        problem = await moderation.set_problem_enabled(
            self.bot.pool, member_actor(interaction.user), slug.strip(), False, reason
        )
        await answer(interaction, embed=render_notice(f"`{problem.slug}` is closed for new submissions."))

    @app_commands.command(name="problem-enable", description="Open a problem for submissions again")
    @app_commands.describe(slug="the problem", reason="why (kept in the audit log)")
    @app_commands.autocomplete(slug=problem_choices)
    async def problem_enable(self, interaction: discord.Interaction, slug: Slug, reason: Reason | None = None) -> None:
        await defer(interaction, public=False)
        problem = await moderation.set_problem_enabled(
            self.bot.pool, member_actor(interaction.user), slug.strip(), True, reason
        )
        await answer(interaction, embed=render_notice(f"`{problem.slug}` is open for submissions."))

    @app_commands.command(name="ban", description="Stop a member from submitting and hide them from the boards")
    @app_commands.describe(user="the member", reason="why (kept in the audit log)")
    async def ban(self, interaction: discord.Interaction, user: discord.User, reason: Reason) -> None:
        await defer(interaction, public=False)
        await ban_member(self.bot.pool, member_actor(interaction.user), user.id, user.display_name, reason)
        text = f"{user.mention} is banned: they cannot submit, and their entries are off the boards."
        await answer(interaction, embed=render_notice(text))

    @app_commands.command(name="unban", description="Lift a member's ban")
    @app_commands.describe(user="the member", reason="why (kept in the audit log)")
    async def unban(self, interaction: discord.Interaction, user: discord.User, reason: Reason | None = None) -> None:
        await defer(interaction, public=False)
        await moderation.unban_user(self.bot.pool, member_actor(interaction.user), external_id(user.id), reason)
        await answer(interaction, embed=render_notice(f"{user.mention} may submit again; their entries are back."))

    @app_commands.command(name="invalidate", description="Take a submission off the leaderboards")
    @app_commands.describe(id="the submission number", reason="why (kept in the audit log)")
    async def invalidate(
        self, interaction: discord.Interaction, id: app_commands.Range[int, 1], reason: Reason
    ) -> None:
        await defer(interaction, public=False)
        await moderation.invalidate_submission(self.bot.pool, member_actor(interaction.user), id, reason)
        await answer(
            interaction, embed=render_notice(f"Submission #{id} is off the boards; the next best entry counts.")
        )

    @app_commands.command(name="rerun", description="Run a submission again (its verdict is replaced)")
    @app_commands.describe(id="the submission number", reason="why (kept in the audit log)")
    async def rerun(
        self, interaction: discord.Interaction, id: app_commands.Range[int, 1], reason: Reason | None = None
    ) -> None:
        await defer(interaction, public=False)
        job_id = await moderation.rerun_submission(self.bot.pool, member_actor(interaction.user), id, reason)
        text = f"Submission #{id} is queued again as job {job_id}; `/submission {id}` shows the new result."
        await answer(interaction, embed=render_notice(text))

    @app_commands.command(name="runners", description="Runners: health, slots, GPUs and the job queue")
    async def runners(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=False)
        statuses = await self.bot.runners.statuses()
        counts = await browse.job_counts(self.bot.pool)
        await answer(interaction, embed=render_runners(statuses, counts, len(self.bot.dispatcher.inflight)))
