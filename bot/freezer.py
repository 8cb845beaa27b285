"""The contest clock: every `contest_freeze_interval_s`, freeze the contests that are due and announce them.

`core.contests.freeze_if_due` does the work (it is safe to run from several processes: each contest freezes and
is rated once). A contest that has ended but waits for its last jobs is announced once, when this freezer first
sees it wait (a restarted bot announces it again, as it cannot know it did); each contest that froze on this call
then gets its podium, the rating changes and the code-reveal note in the announcement channel.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import asyncpg
import discord

from bot.ui.contests import render_freeze_announcement, render_waiting_announcement
from core.contests import FREEZE_GRACE, FreezeReport, freeze_if_due
from core.dispatch import STORE_OUTAGE_ERRORS

log = logging.getLogger(__name__)

Announce = Callable[[discord.Embed], Awaitable[None]]
Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class ContestFreezer:
    """Owns one background task; `start()` begins it and `aclose()` cancels and awaits it."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        interval_s: float,
        announce: Announce,
        clock: Clock = utcnow,
        grace: timedelta = FREEZE_GRACE,
    ) -> None:
        self._pool = pool
        self._interval_s = interval_s
        self._grace = grace
        self._announce = announce
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        self._waiting: set[int] = set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="contest-freezer")

    async def aclose(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                await self.tick()
            except STORE_OUTAGE_ERRORS as exc:
                log.warning("contest freeze: the store is out of reach now (%r); trying again", exc)
            except Exception:
                log.exception("contest freeze failed; trying again in %.0f s", self._interval_s)
            await asyncio.sleep(self._interval_s)

    async def tick(self) -> FreezeReport:
        """Freeze what is due now and announce it; announce a contest that starts to wait for its last jobs."""
        report = await freeze_if_due(self._pool, self._clock(), grace=self._grace)
        for waiting in report.waiting:
            if waiting.contest.id in self._waiting:
                continue
            log.info(
                "contest %s ended; its board waits for jobs %s (until %s at the latest)",
                waiting.contest.slug,
                waiting.pending_jobs,
                waiting.freeze_by.isoformat(),
            )
            self._waiting.add(waiting.contest.id)  # once, even when the post fails: it is a courtesy, not the result
            await self._post(render_waiting_announcement(waiting), waiting.contest.slug, "its waiting note")
        # A contest leaves the waiting set when it freezes (or is cancelled meanwhile); an ended one never returns.
        self._waiting &= {waiting.contest.id for waiting in report.waiting}
        for frozen in report.frozen:
            await self._post(render_freeze_announcement(frozen), frozen.contest.slug, "its announcement")
        return report

    async def _post(self, embed: discord.Embed, slug: str, what: str) -> None:
        try:
            await self._announce(embed)
        except discord.HTTPException:
            log.warning("contest %s: %s could not be posted", slug, what, exc_info=True)
