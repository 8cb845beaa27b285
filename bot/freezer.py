"""The contest clock: every `contest_freeze_interval_s`, freeze the contests that are due and announce them.

`core.contests.freeze_if_due` does the work (it is safe to run from several processes: each contest freezes and
is rated once). For each contest that froze on this call, the podium, the rating changes and the code-reveal note
are posted to the announcement channel. A contest that waits for its last jobs is logged once, not announced.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import asyncpg
import discord

from bot.ui.contests import render_freeze_announcement
from core.contests import FreezeReport, freeze_if_due
from core.dispatch import STORE_OUTAGE_ERRORS

log = logging.getLogger(__name__)

Announce = Callable[[discord.Embed], Awaitable[None]]
Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


class ContestFreezer:
    """Owns one background task; `start()` begins it and `aclose()` cancels and awaits it."""

    def __init__(self, pool: asyncpg.Pool, interval_s: float, announce: Announce, clock: Clock = utcnow) -> None:
        self._pool = pool
        self._interval_s = interval_s
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
        """Freeze what is due now and announce it."""
        report = await freeze_if_due(self._pool, self._clock())
        for waiting in report.waiting:
            if waiting.contest.id not in self._waiting:
                self._waiting.add(waiting.contest.id)
                log.info(
                    "contest %s ended; its board waits for jobs %s (until %s at the latest)",
                    waiting.contest.slug,
                    waiting.pending_jobs,
                    waiting.freeze_by.isoformat(),
                )
        for frozen in report.frozen:
            self._waiting.discard(frozen.contest.id)
            try:
                await self._announce(render_freeze_announcement(frozen))
            except discord.HTTPException:
                log.warning("contest %s froze, but its announcement failed", frozen.contest.slug, exc_info=True)
        return report
