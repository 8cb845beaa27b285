"""The Discord bot: a `commands.Bot` whose `setup_hook` opens the store, starts the dispatcher and loads cogs.

Lifecycle: `setup_hook` (after login, before the gateway connects) opens the Postgres store (embedded when
no DATABASE_URL), registers the built-in problems (the distributed ones too), builds the runners, starts the
dispatcher, adds the cogs, syncs the commands of the configured guild only and starts the contest freezer. `close`
stops the freezer, live messages, the dispatcher and the local runner's workers, then the Discord connection, then
the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextlib import AsyncExitStack
from datetime import timedelta

import aiohttp
import asyncpg
import discord
from discord import app_commands
from discord.ext import commands

from bot.bot_settings import BotSettings
from bot.cogs.account import AccountCog
from bot.cogs.browse import BrowseCog
from bot.cogs.contests import ContestCog
from bot.cogs.moderation import ModerationCog
from bot.cogs.profile import ProfileCog
from bot.cogs.submit import SubmitCog
from bot.cogs.token import TokenCog
from bot.freezer import ContestFreezer
from bot.runners import RunnerSet, build_runners
from bot.tracker import SubmissionTracker
from bot.ui.errors import send_error
from contract.wire import JobEvent
from core.contests import GpuCatalog
from core.dispatch import Dispatcher
from core.problems import sync_builtin_problems
from core.progress import ProgressHub
from core.store.pool import open_store
from core.submit.events import case_publisher
from core.submit.service import ArenaService
from runner.gpus import GPU_MODELS

log = logging.getLogger(__name__)

COGS = (SubmitCog, BrowseCog, AccountCog, ContestCog, ModerationCog, TokenCog, ProfileCog)


class ArenaTree(app_commands.CommandTree["ArenaBot"]):
    """Every app-command error is answered by `bot.ui.errors.send_error`: a private red embed for the
    user's mistakes, an apology with an incident id (and a logged traceback) for ours."""

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        await send_error(interaction, error)


class ArenaBot(commands.Bot):
    settings: BotSettings
    pool: asyncpg.Pool
    hub: ProgressHub
    runners: RunnerSet
    dispatcher: Dispatcher
    service: ArenaService
    tracker: SubmissionTracker
    freezer: ContestFreezer

    def __init__(self, settings: BotSettings, *, sync_global: bool = False) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents.default(),
            tree_cls=ArenaTree,
            allowed_mentions=discord.AllowedMentions.none(),
            help_command=None,
            guild_ready_timeout=settings.guild_ready_timeout_s,
        )
        self.settings = settings
        self._resources = AsyncExitStack()
        self._sync_global = sync_global
        self._dispatch_task: asyncio.Task[None] | None = None
        self._fleet_task: asyncio.Task[None] | None = None
        self._started = False

    async def setup_hook(self) -> None:
        settings = self.settings
        store = await self._resources.enter_async_context(open_store(settings.arena.store))
        self.pool = store.pool
        if settings.sync_builtin_problems:
            await sync_builtin_problems(self.pool)
        session = await self._resources.enter_async_context(aiohttp.ClientSession())
        self.runners = await build_runners(settings, session, self.pool)
        self._resources.push_async_callback(self.runners.aclose)
        self.hub = ProgressHub()
        runner_pool = self.runners.dispatch_pool
        view = self.runners.view
        gpu_types = view.gpu_types if view is not None else runner_pool.gpu_types
        publish_case = case_publisher(self.pool)
        self._resources.push_async_callback(publish_case.close)

        async def on_event(submission_id: int, event: JobEvent) -> None:
            await self.hub.on_event(submission_id, event)
            # The API's event streams of a job this bot dispatches hear its cases too (`case` events).
            await publish_case(submission_id, event)

        self.dispatcher = Dispatcher(
            self.pool,
            runner_pool,
            settings.arena.dispatch,
            on_event=on_event,
            on_runner_state=self.hub.on_runner_state,
        )
        self._dispatch_task = asyncio.create_task(self.dispatcher.run(), name="dispatcher")
        self._dispatch_task.add_done_callback(_dispatcher_stopped)
        if view is not None:
            self._fleet_task = asyncio.create_task(view.run(), name="fleet-view")
        self.service = ArenaService(self.pool, settings.arena, gpu_types, settings.default_gpu)
        # Closed before the pool (the stack unwinds in reverse): a batch of submissions being stored finishes first.
        self._resources.push_async_callback(self.service.aclose)
        self.tracker = SubmissionTracker(self.service, self.hub, settings, self.announce)
        self.freezer = ContestFreezer(
            self.pool,
            settings.contest_freeze_interval_s,
            self.announce,
            grace=timedelta(seconds=settings.contest_freeze_grace_s),
            gpus=GpuCatalog.of(GPU_MODELS, gpu_types()),
            podium_check=settings.contest_podium_check,
        )
        guild = discord.Object(settings.guild_id) if settings.guild_id is not None else None
        for cog in COGS:
            await self.add_cog(cog(self), guild=guild or discord.utils.MISSING)
        if guild is not None:
            synced = await self.tree.sync(guild=guild)
            log.info("synced %d commands to guild %d", len(synced), guild.id)
        elif self._sync_global:
            synced = await self.tree.sync()
            log.info("synced %d global commands (Discord may take a while to show them)", len(synced))
        else:
            log.warning(
                "ARENA_BOT_GUILD_ID is unset: commands are global; sync them once with `arena bot --sync-global`"
            )
        self.freezer.start()
        self._started = True

    async def announce(self, embed: discord.Embed) -> None:
        """Post to the announcement channel (personal bests, podium places, contest notes); nothing when unset."""
        channel_id = self.settings.announce_channel_id
        if channel_id is None:
            return
        channel = self.get_channel(channel_id) or await self.fetch_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            log.warning("announce channel %d cannot take messages", channel_id)
            return
        await channel.send(embed=embed)

    async def close(self) -> None:
        if self._started:
            await self.freezer.aclose()
            await self.tracker.aclose()
        for task in (self._fleet_task, self._dispatch_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await super().close()
        await self._resources.aclose()


def _dispatcher_stopped(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.critical("the dispatcher stopped: submissions will wait in the queue", exc_info=task.exception())
