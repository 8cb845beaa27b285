"""The contest clock: every `contest_freeze_interval_s`, freeze the contests that are due and announce them, and
warn about a contest that starts soon on a GPU type none of the bot's runners serves.

`core.contests.freeze_if_due` does the work (it is safe to run from several processes: each contest freezes and
is rated once). A contest that has ended but waits for its last jobs is announced once, and each frozen contest gets
its podium, the rating changes and the code-reveal note in the announcement channel once: the store records each
notice as claimed before it is posted (`core.contests.claim_announcements`), so a restarted bot, or a second one,
neither repeats a notice nor loses the podium of a contest frozen just before a restart. The warning before a start
(`core.contests.claim_start_warnings`, within `START_WARNING_LEAD` of it) is claimed the same way, and logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import asyncpg
import discord

from bot.ui.contests import render_freeze_announcement, render_start_warning, render_waiting_announcement
from core.contests import (
    FREEZE_GRACE,
    FreezeReport,
    GpuCatalog,
    claim_announcements,
    claim_start_warnings,
    freeze_if_due,
)
from core.store.outage import STORE_OUTAGE_ERRORS

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
        gpus: GpuCatalog | None = None,
        podium_check: bool = True,
    ) -> None:
        self._pool = pool
        self._podium_check = podium_check
        self._gpus = gpus
        self._interval_s = interval_s
        self._grace = grace
        self._announce = announce
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

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
        """Freeze what is due now; announce each contest that starts to wait for its last jobs, and each podium, once
        (claimed in the store before posting: a notice whose post fails is not tried again, as it is a courtesy and
        the board itself is already final); and warn once about each contest starting soon on a GPU type no runner
        serves."""
        now = self._clock()
        report = await freeze_if_due(self._pool, now, grace=self._grace, podium_check=self._podium_check)
        waiting, frozen = await claim_announcements(self._pool, report, now)
        for note in waiting:
            log.info(
                "contest %s ended; its board waits for jobs %s (until %s at the latest)",
                note.contest.slug,
                note.pending_jobs,
                note.freeze_by.isoformat(),
            )
            await self._post(render_waiting_announcement(note), note.contest.slug, "its waiting note")
        for done in frozen:
            await self._post(render_freeze_announcement(done), done.contest.slug, "its announcement")
        if self._gpus is not None:
            for warning in await claim_start_warnings(self._pool, now, self._gpus):
                log.warning(
                    "contest %s starts at %s: %s",
                    warning.view.contest.slug,
                    warning.view.contest.starts_at.isoformat(),
                    warning.text,
                )
                await self._post(render_start_warning(warning), warning.view.contest.slug, "its start warning")
        return report

    async def _post(self, embed: discord.Embed, slug: str, what: str) -> None:
        try:
            await self._announce(embed)
        except discord.HTTPException:
            log.warning("contest %s: %s could not be posted", slug, what, exc_info=True)
