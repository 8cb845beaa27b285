"""Live progress in Discord: one message per submission, edited as the runner's events arrive.

The dispatcher's events reach `ProgressHub` (core.progress); a `SubmissionTracker` task per submission
folds them into the message, at most one edit per `progress_interval_s` (events in between are coalesced),
and ends with the result embed, the roofline chart and any long log as attachments. While the job waits in
the queue, its position is read from the store. The message is an interaction follow-up while the
interaction's token lasts (15 minutes), then a message in the same channel.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

import discord

from bot.bot_settings import BotSettings
from bot.ui.embeds import RankChange, SubmissionHeader, render_announcement, render_notice, render_progress
from bot.ui.results import ResultMessage, as_files, result_message
from contract.wire import SubmissionResult
from core.progress import EditThrottle, ProgressHub, ProgressState, Subscription
from core.store.jobs import FINAL_STATES
from core.store.outage import STORE_OUTAGE_ERRORS
from core.submit.service import ArenaService, JobProgress, Outcome, SubmitTicket

log = logging.getLogger(__name__)

Files = Sequence[tuple[str, bytes]]
Announce = Callable[[discord.Embed], Awaitable[None]]
POLL_S = 2.0
RECORD_TIMEOUT_S = 30.0


class LiveMessage:
    """The message showing one submission: a follow-up to the command while its interaction token lasts,
    then (or when the follow-up cannot be edited any more) a message in the same channel."""

    def __init__(self, interaction: discord.Interaction, window_s: float) -> None:
        self._interaction = interaction
        self._deadline = time.monotonic() + window_s
        self._followup: discord.WebhookMessage | None = None
        self._channel_message: discord.Message | None = None

    @property
    def in_channel(self) -> bool:
        return self._channel_message is not None

    async def show(self, embed: discord.Embed, files: Files = ()) -> None:
        if self._channel_message is not None:
            await self._channel_message.edit(embed=embed, attachments=as_files(files))
            return
        if time.monotonic() < self._deadline:
            try:
                if self._followup is None:
                    self._followup = await self._interaction.followup.send(
                        embed=embed, files=as_files(files), wait=True
                    )
                else:
                    await self._followup.edit(embed=embed, attachments=as_files(files))
                return
            except discord.HTTPException as exc:
                if exc.status not in (401, 404):
                    raise
                log.info("interaction %s can no longer be edited (%s)", self._interaction.id, exc.status)
        await self._move_to_channel(embed, files)

    async def _move_to_channel(self, embed: discord.Embed, files: Files) -> None:
        channel = self._interaction.channel
        if not isinstance(channel, discord.abc.Messageable):
            raise RuntimeError(f"interaction {self._interaction.id} has no channel to continue in")
        user = self._interaction.user
        self._channel_message = await channel.send(
            content=f"{user.mention}, your submission continues here:",
            embed=embed,
            files=as_files(files),
            allowed_mentions=discord.AllowedMentions(everyone=False, roles=False, users=[user]),
        )


class SubmissionTracker:
    """Runs one live-message task per submission; `aclose()` stops them all."""

    def __init__(
        self, service: ArenaService, hub: ProgressHub, settings: BotSettings, announce: Announce | None = None
    ) -> None:
        self._service = service
        self._hub = hub
        self._settings = settings
        self._announce = announce
        self._tasks: set[asyncio.Task[None]] = set()

    def follow(self, interaction: discord.Interaction, ticket: SubmitTicket) -> None:
        """Show `ticket`'s progress in a new message. Subscribes at once, so no event is missed."""
        subscription = self._hub.subscribe(ticket.submission_id)
        live = LiveMessage(interaction, self._settings.interaction_edit_window_s)
        task = asyncio.create_task(self._run(live, ticket, subscription), name=f"live-{ticket.submission_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Until every live message has its final state (tests)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self, live: LiveMessage, ticket: SubmitTicket, subscription: Subscription) -> None:
        header = SubmissionHeader.of(ticket)
        try:
            async with subscription:
                state = ProgressState(
                    queue_position=ticket.receipt.queue_position or None,
                    gpu_type=ticket.gpu_type,
                    start_in_s=ticket.start_in_s,
                )
                state.runner_outage_s = self._hub.runner_outage_s(ticket.gpu_type)
                throttle = EditThrottle(self._settings.progress_interval_s)
                await live.show(render_progress(header, state))
                throttle.mark(time.monotonic())
                finished, result = await self._follow(live, header, state, ticket, subscription, throttle)
                if not finished:
                    minutes = self._settings.result_timeout_s / 60
                    text = (
                        f"Still running after {minutes:.0f} min; `/submission {header.submission_id}` shows it later."
                    )
                    await live.show(render_notice(text, title=header.title))
                    return
                outcome = await self._outcome(ticket, result)
                final = await self._final(header.judged(outcome.contests), outcome)
                await asyncio.sleep(throttle.wait_s(time.monotonic()))
                await live.show(final.embed, final.files)
            log.info("submission %d: final message shown (%s)", header.submission_id, outcome.submission.status)
            await self._maybe_announce(header, outcome)
        except Exception:
            log.exception("submission %d: the live message failed", header.submission_id)

    async def _follow(
        self,
        live: LiveMessage,
        header: SubmissionHeader,
        state: ProgressState,
        ticket: SubmitTicket,
        subscription: Subscription,
        throttle: EditThrottle,
    ) -> tuple[bool, SubmissionResult | None]:
        """Edit the message from events until the job is done: (finished, the runner's result if seen)."""
        deadline = time.monotonic() + self._settings.result_timeout_s
        next_poll = time.monotonic() + POLL_S
        dirty = False
        while (now := time.monotonic()) < deadline:
            wait = min(next_poll - now, throttle.wait_s(now) if dirty else next_poll - now)
            event = await subscription.next(wait)
            events = [event] if event is not None else []
            if (now := time.monotonic()) >= next_poll:
                next_poll = now + POLL_S
                try:
                    progress = await self._service.job_progress(ticket.receipt.job_id)
                except STORE_OUTAGE_ERRORS as exc:
                    # The database is away for a moment (the dispatcher waits it out too): ask again next poll.
                    log.warning("submission %d: cannot read the job's state now (%r)", header.submission_id, exc)
                    progress = JobProgress("unknown", 0)
                if progress.state in FINAL_STATES:  # finished; its `done` may be waiting, or was never seen
                    events += subscription.drain()
                    done = next((e for e in events if e.type == "done" and e.result is not None), None)
                    return True, done.result if done else None
                if progress.state == "queued" and progress.queue_position != state.queue_position:
                    state.queue_position = progress.queue_position
                    dirty = True
                if progress.state == "queued":
                    # Only a change the message shows is worth an edit: the estimate moves a little on every poll.
                    before = state.status
                    state.start_in_s = progress.start_in_s
                    dirty = dirty or state.status != before
                shown = state.status
                state.runner_outage_s = self._hub.runner_outage_s(ticket.gpu_type)  # no runner of its type answers
                dirty = dirty or state.status != shown
            for event in events:
                state.apply(event)
                dirty = True
                if event.type == "done" and event.result is not None:
                    return True, event.result
            if dirty and throttle.wait_s(now := time.monotonic()) == 0:
                await live.show(render_progress(header, state))
                throttle.mark(now)
                dirty = False
        return False, None

    async def _outcome(self, ticket: SubmitTicket, result: SubmissionResult | None) -> Outcome:
        """The stored outcome, asked again while the database is briefly out of reach."""
        deadline = time.monotonic() + self._settings.result_timeout_s
        while True:
            try:
                return await self._service.outcome(ticket, result, RECORD_TIMEOUT_S)
            except STORE_OUTAGE_ERRORS as exc:
                if time.monotonic() >= deadline:
                    raise
                log.warning("submission %d: cannot read the outcome now (%r)", ticket.submission_id, exc)
                await asyncio.sleep(POLL_S)

    async def _final(self, header: SubmissionHeader, outcome: Outcome) -> ResultMessage:
        result = outcome.result
        rank = None
        if header.mode == "ranked" and outcome.recorded:
            before = outcome.rank_before.rank if outcome.rank_before else None
            rank = RankChange(before, outcome.rank_after.rank if outcome.rank_after else None)
        return await asyncio.to_thread(result_message, header, result, self._settings.spec_for(result.device), rank)

    async def _maybe_announce(self, header: SubmissionHeader, outcome: Outcome) -> None:
        after = outcome.rank_after
        if self._announce is None or after is None or not (outcome.personal_best or outcome.podium):
            return
        embed = render_announcement(
            header, outcome.result, after.rank, after.score, personal_best=outcome.personal_best
        )
        try:
            await self._announce(embed)
        except discord.HTTPException:
            log.warning("submission %d: could not post the announcement", header.submission_id, exc_info=True)
