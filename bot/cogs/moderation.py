"""`/mod …`: moderator tools, for members with the configured role or permission. Every answer is private.

`/mod contest create|edit|cancel|invite` take times as typed (`2030-01-31T18:00Z`, `in 2h`) and lists as
comma-separated text; `core.contests.input` reads them and `core.contests` applies the rules. `/mod contest amend`
recomputes a frozen board after reruns and posts a correction where places moved."""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.cogs._common import (
    NotModeratorError,
    answer,
    contest_choices,
    defer,
    is_moderator,
    member_actor,
    problem_choices,
    read_attachment,
    utcnow,
)
from bot.ui.contests import render_amend_announcement, render_amendment, render_contest_saved
from bot.ui.embeds import render_notice
from bot.ui.moderation import render_admission, render_audit, render_published, render_runners
from bot.ui.views import ConfirmView
from contract.names import DType
from core import browse, contests, moderation
from core.admission import Candidate, check_problem_attachment, examine_problem, publish_problem
from core.contests.input import parse_list, parse_targets, parse_when
from core.errors import InvalidOptionError
from core.fleet import canary as fleet_canary
from core.members import ban_member, external_id
from core.rejudge import rejudge_board
from runner.gpus import GPU_MODELS
from runner.protocol import protocol_version

if TYPE_CHECKING:
    from bot.client import ArenaBot

log = logging.getLogger(__name__)

Reason = app_commands.Range[str, 1, 500]
Slug = app_commands.Range[str, 1, 64]
Title = app_commands.Range[str, 1, 200]
When = app_commands.Range[str, 1, 64]
Listed = app_commands.Range[str, 1, 500]
Visibility = Literal["public", "invite_only"]
CONTEST_OPTIONS = {
    "slug": "the contest's short name, e.g. spring-2030",
    "title": "the contest's title",
    "problems": "problem slugs, comma-separated, in order",
    "start": "UTC ISO-8601 (2030-01-31T18:00Z) or from now (in 10m, in 2h)",
    "end": "UTC ISO-8601 (2030-01-31T20:00Z) or from now (in 2h, in 1d)",
    "gpus": "GPU types, comma-separated (default: the only one, or the configured default)",
    "dtypes": "dtypes, comma-separated (default float32); every GPU type × every dtype is a target",
    "visibility": "public: anyone may enter; invite_only: only invited members count",
    "reserve_share": "share of its GPU pools its ranked runs get first while it runs, 0 to 1 (0: none)",
}


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

    @app_commands.command(
        name="rerun-flagged", description="Run again the ranked results timed on a runner whose canaries drifted"
    )
    @app_commands.describe(runner="only those timed on this runner (default: every flagged result)")
    async def rerun_flagged(
        self, interaction: discord.Interaction, runner: app_commands.Range[str, 1, 64] | None = None
    ) -> None:
        await defer(interaction, public=False)
        reruns = await fleet_canary.rerun_flagged(self.bot.pool, member_actor(interaction.user), runner)
        if not reruns:
            text = "No ranked result is flagged" + (f" on `{runner}`." if runner else ".")
        else:
            lines = [
                f"#{r.submission_id}: "
                + (f"queued again as job {r.job_id}" if r.job_id is not None else r.problem or "")
                for r in reruns
            ]
            text = f"{sum(r.job_id is not None for r in reruns)} of {len(reruns)} flagged results queued again.\n"
            text += "\n".join(lines[:20]) + ("\n…" if len(lines) > 20 else "")
        await answer(interaction, embed=render_notice(text))

    @app_commands.command(
        name="rejudge", description="Run again a board's top entries timed under an older timing protocol"
    )
    @app_commands.describe(
        slug="the problem",
        gpu="the board's GPU type, e.g. h100",
        dtype="the board's dtype (default float32)",
        top="how many of the top entries to look at (1 to 100)",
        every="run them again even when timed under the current protocol",
    )
    @app_commands.autocomplete(slug=problem_choices)
    async def rejudge(
        self,
        interaction: discord.Interaction,
        slug: Slug,
        gpu: app_commands.Range[str, 1, 32],
        dtype: DType = "float32",
        top: app_commands.Range[int, 1, 100] = 10,
        every: bool = False,
    ) -> None:
        await defer(interaction, public=False)
        done = await rejudge_board(
            self.bot.pool, member_actor(interaction.user), slug.strip(), gpu.strip(), dtype, top=top, every=every
        )
        again = [d for d in done if d.job_id is not None]
        lines = [
            f"#{d.rank} · submission #{d.submission_id}: "
            + (f"queued again as job {d.job_id}" if d.job_id is not None else d.skipped or "")
            for d in done
        ]
        text = f"{len(again)} of {len(done)} entries queued again under timing protocol {protocol_version()}.\n"
        text += "\n".join(lines[:20]) + ("\n…" if len(lines) > 20 else "")
        await answer(interaction, embed=render_notice(text))

    @app_commands.command(name="audit", description="The latest moderator actions, or those on one target")
    @app_commands.describe(
        target="e.g. submission:42, contest:spring, problem:matmul (default: every target)",
        count="how many entries, newest first (1 to 25)",
    )
    async def audit(
        self,
        interaction: discord.Interaction,
        target: app_commands.Range[str, 3, 80] | None = None,
        count: app_commands.Range[int, 1, 25] = 10,
    ) -> None:
        await defer(interaction, public=False)
        wanted = target.strip() if target else None
        entries = await moderation.audit_entries(self.bot.pool, wanted, count)
        await answer(interaction, embed=render_audit(entries, wanted))

    @app_commands.command(name="runners", description="Runners: health, slots, GPUs and the job queue")
    async def runners(self, interaction: discord.Interaction) -> None:
        await defer(interaction, public=False)
        statuses = await self.bot.runners.statuses()
        counts = await browse.job_counts(self.bot.pool)
        await answer(interaction, embed=render_runners(statuses, counts, len(self.bot.dispatcher.inflight)))

    contest = app_commands.Group(name="contest", description="Contests: create, edit, cancel, invite, amend")

    @contest.command(name="create", description="Create a contest: problems, targets, a window in UTC")
    @app_commands.describe(
        **CONTEST_OPTIONS,
        ranked_burst="the contest's own limit on ranked runs: this many at once (with ranked_per_hour)",
        ranked_per_hour="...refilled at this many an hour (default: the practice limit applies)",
    )
    async def contest_create(
        self,
        interaction: discord.Interaction,
        slug: Slug,
        title: Title,
        problems: Listed,
        start: When,
        end: When,
        gpus: Listed | None = None,
        dtypes: Listed = "float32",
        visibility: Visibility = "public",
        ranked_burst: app_commands.Range[int, 1, 1000] | None = None,
        ranked_per_hour: app_commands.Range[float, 0.01, 10000.0] | None = None,
        reserve_share: app_commands.Range[float, 0.0, 1.0] | None = None,
    ) -> None:
        now = utcnow()
        if (ranked_burst is None) != (ranked_per_hour is None):
            raise InvalidOptionError("Give ranked_burst and ranked_per_hour together: they are one limit.")
        draft = contests.ContestDraft(
            slug=slug.strip(),
            title=title.strip(),
            starts_at=parse_when(start, now, what="start"),
            ends_at=parse_when(end, now, what="end"),
            problems=parse_list(problems, what="problem"),
            targets=parse_targets(gpus or self._default_gpu(), dtypes),
            visibility=visibility,
            ranked_limit=None if ranked_burst is None or ranked_per_hour is None else (ranked_burst, ranked_per_hour),
            reserve_share=reserve_share or None,
        )
        await defer(interaction, public=False)
        gpus = self._gpu_catalog()
        created = await contests.create_contest(
            self.bot.pool, member_actor(interaction.user), draft, now=now, gpus=gpus
        )
        await answer(interaction, embed=render_contest_saved(created, "created", now, self._warn(created, gpus)))

    @contest.command(name="edit", description="Change a contest (once started: only its title and end)")
    @app_commands.describe(**CONTEST_OPTIONS, reason="why (kept in the audit log)")
    @app_commands.autocomplete(slug=contest_choices)
    async def contest_edit(
        self,
        interaction: discord.Interaction,
        slug: Slug,
        title: Title | None = None,
        problems: Listed | None = None,
        start: When | None = None,
        end: When | None = None,
        gpus: Listed | None = None,
        dtypes: Listed | None = None,
        visibility: Visibility | None = None,
        reserve_share: app_commands.Range[float, 0.0, 1.0] | None = None,
        reason: Reason | None = None,
    ) -> None:
        if (gpus is None) != (dtypes is None):
            raise InvalidOptionError("Give both `gpus` and `dtypes` to change the targets (every pair is one).")
        now = utcnow()
        changes = {
            "title": title.strip() if title is not None else None,
            "starts_at": parse_when(start, now, what="start") if start is not None else None,
            "ends_at": parse_when(end, now, what="end") if end is not None else None,
            "visibility": visibility,
            "problems": parse_list(problems, what="problem") if problems is not None else None,
            "targets": parse_targets(gpus, dtypes) if gpus is not None and dtypes is not None else None,
            "reserve_share": reserve_share,
        }
        await defer(interaction, public=False)
        actor = member_actor(interaction.user)
        gpus = self._gpu_catalog()
        edited = await contests.edit_contest(
            self.bot.pool, actor, slug.strip(), now=now, gpus=gpus, reason=reason, **changes
        )
        await answer(interaction, embed=render_contest_saved(edited, "changed", now, self._warn(edited, gpus)))

    @contest.command(name="cancel", description="Call a contest off: it is never frozen nor rated")
    @app_commands.describe(slug="the contest", reason="why (kept in the audit log)")
    @app_commands.autocomplete(slug=contest_choices)
    async def contest_cancel(self, interaction: discord.Interaction, slug: Slug, reason: Reason) -> None:
        await defer(interaction, public=False)
        now = utcnow()
        cancelled = await contests.cancel_contest(
            self.bot.pool, member_actor(interaction.user), slug.strip(), reason, now=now
        )
        await answer(interaction, embed=render_contest_saved(cancelled, "cancelled", now))

    @contest.command(name="invite", description="Let members enter an invite-only contest")
    @app_commands.describe(
        slug="the contest", user="a member to invite", user2="another", user3="another", user4="another",
        user5="another", reason="why (kept in the audit log)",
    )  # fmt: skip
    @app_commands.autocomplete(slug=contest_choices)
    async def contest_invite(
        self,
        interaction: discord.Interaction,
        slug: Slug,
        user: discord.User,
        user2: discord.User | None = None,
        user3: discord.User | None = None,
        user4: discord.User | None = None,
        user5: discord.User | None = None,
        reason: Reason | None = None,
    ) -> None:
        members = list({u.id: u for u in (user, user2, user3, user4, user5) if u is not None}.values())
        await defer(interaction, public=False)
        added = await contests.invite(
            self.bot.pool, member_actor(interaction.user), slug.strip(), [member_actor(m) for m in members], reason
        )
        named = ", ".join(m.mention for m in members)
        text = f"Invited to `{slug.strip()}`: {named} ({len(added)} new, {len(members) - len(added)} invited before)."
        await answer(interaction, embed=render_notice(text))

    @contest.command(name="amend", description="Recompute a frozen board after reruns (ratings stay)")
    @app_commands.describe(slug="the frozen contest", reason="why (kept in the audit log)")
    @app_commands.autocomplete(slug=contest_choices)
    async def contest_amend(self, interaction: discord.Interaction, slug: Slug, reason: Reason) -> None:
        await defer(interaction, public=False)
        amendment = await contests.amend_frozen_board(
            self.bot.pool, member_actor(interaction.user), slug.strip(), reason, now=utcnow()
        )
        receipt = render_amendment(amendment)
        if amendment.moves:
            try:
                await self.bot.announce(render_amend_announcement(amendment))
            except discord.HTTPException:
                log.warning("contest %s: the correction could not be posted", slug.strip(), exc_info=True)
                text = "The board is amended, but the correction could not be posted to the announcement channel."
                receipt.add_field(name="Not announced", value=text, inline=False)
        await answer(interaction, embed=receipt)

    def _gpu_catalog(self) -> contests.GpuCatalog:
        """The GPU types a contest may target (the registry's), and those this bot's runners serve."""
        return contests.GpuCatalog.of(GPU_MODELS, self.bot.service.gpu_types())

    @staticmethod
    def _warn(saved: contests.ContestView, gpus: contests.GpuCatalog) -> str | None:
        """The warning that a target has no runner, logged as well: the moderator may not act on a receipt."""
        warning = contests.unserved_warning(saved, gpus)
        if warning is not None:
            log.warning("contest %s: %s", saved.contest.slug, warning)
        return warning

    def _default_gpu(self) -> str:
        gpu = self.bot.service.default_gpu()
        if gpu is None:
            raise InvalidOptionError("Several GPU types have runners; name the contest's with the `gpus` option.")
        return gpu
