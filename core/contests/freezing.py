"""The end of a contest: the freeze once its last runs are judged (or the grace period is over), the notices it
claims before they are posted, and a moderator's amendment of a frozen board."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import asyncpg

from core.contests.boards import ContestBoard, board_places, frozen_board, live_board, write_standings
from core.contests.clock import as_utc
from core.contests.lookup import actor_user_id, locked_contest, view_of
from core.contests.ratings import rate_once, rate_pending
from core.errors import ContestError
from core.moderation import Actor
from core.podium_checks import PodiumReport, podium_report, queue_checks
from core.store import contests, moderation
from core.store.contests import Contest, RatingChange
from core.store.pool import Conn

log = logging.getLogger(__name__)

FREEZE_GRACE = timedelta(hours=1)
"""How long after the end the freeze waits for contest-phase jobs still queued or running, before it freezes
without them (a moderator may add their results later with `amend_frozen_board`)."""


@dataclass(frozen=True)
class Frozen:
    """A contest that froze: its final board, the jobs left out after the grace period, and the rating changes."""

    contest: Contest
    board: ContestBoard
    left_out_jobs: list[int]
    ratings: list[RatingChange]
    podium: PodiumReport = field(default_factory=lambda: PodiumReport(()))
    """The podium's second runs (core/podium_checks.py): empty when the freeze did not check its podium."""


@dataclass(frozen=True)
class Waiting:
    """A contest that ended but waits for these jobs, until `freeze_by` at the latest."""

    contest: Contest
    pending_jobs: list[int]
    freeze_by: datetime
    podium_checks: bool = False
    """Whether the jobs are the podium's second runs, queued by this pass."""


@dataclass(frozen=True)
class FreezeReport:
    frozen: list[Frozen]
    waiting: list[Waiting]


@dataclass(frozen=True)
class PlaceMove:
    """An entrant whose place an amendment changed; None: not on that board (a run that passed or failed anew)."""

    user_id: int
    display_name: str
    before: int | None
    after: int | None


@dataclass(frozen=True)
class Amendment:
    before: ContestBoard
    after: ContestBoard

    @property
    def changed(self) -> bool:
        """Whether a place or a total changed."""
        return board_places(self.before) != board_places(self.after)

    @property
    def moves(self) -> tuple[PlaceMove, ...]:
        """The entrants whose place changed, in the amended board's order, then those no longer on it."""
        was = {line.user_id: line.place for line in self.before.lines}
        now = {line.user_id: line.place for line in self.after.lines}
        moved = [
            PlaceMove(line.user_id, line.display_name, was.get(line.user_id), line.place)
            for line in self.after.lines
            if was.get(line.user_id) != line.place
        ]
        gone = [
            PlaceMove(line.user_id, line.display_name, line.place, None)
            for line in self.before.lines
            if line.user_id not in now
        ]
        return tuple(moved + gone)


async def freeze_if_due(
    pool: asyncpg.Pool, now: datetime, *, grace: timedelta = FREEZE_GRACE, podium_check: bool = True
) -> FreezeReport:
    """Freeze and rate every contest whose end has passed and whose contest-phase jobs have all finished (or whose
    grace period is over), once its podium has been run a second time (`podium_check`; core/podium_checks.py).
    Safe to call again and from several processes: each contest freezes once."""
    now = as_utc(now, "current time")
    await _rate_left_unrated(pool, now)
    frozen: list[Frozen] = []
    waiting: list[Waiting] = []
    for due in await contests.due_contests(pool, now):
        outcome = await _freeze(pool, due.id, now, grace, podium_check)
        if isinstance(outcome, Frozen):
            frozen.append(outcome)
        elif isinstance(outcome, Waiting):
            waiting.append(outcome)
    return FreezeReport(frozen, waiting)


async def _rate_left_unrated(pool: asyncpg.Pool, now: datetime) -> None:
    """Rate the frozen contests that are not rated yet. A service that migrated at its start (migration V008 sets
    the old ratings aside) would otherwise show no ratings until `arena db migrate` or the next contest's freeze."""
    async with pool.acquire() as conn:
        if not await contests.unrated_frozen_contests(conn):
            return
        async with conn.transaction():
            rated = await rate_pending(conn, now)
    if rated:
        log.info("rated %d frozen contest(s) left unrated: %s", len(rated), sorted(rated))


async def claim_announcements(
    pool: asyncpg.Pool, report: FreezeReport, now: datetime
) -> tuple[list[Waiting], list[Frozen]]:
    """What this caller is the first to announce, each claimed in the store before it is posted (so that no notice is
    posted twice, however many bots run or restart): the contests of `report` that wait for their last runs, and
    every frozen contest whose podium is unclaimed. Those are the ones `report` froze, and any that a process froze
    and then stopped before announcing; for those, the jobs left out after the grace period are no longer known."""
    now = as_utc(now, "current time")
    fresh = {frozen.contest.id: frozen for frozen in report.frozen}
    async with pool.acquire() as conn:
        waiting = [w for w in report.waiting if await contests.claim_waiting_notice(conn, w.contest.id, now)]
        frozen: list[Frozen] = []
        for contest_id in await contests.unannounced_frozen(conn):
            claimed = await contests.claim_podium(conn, contest_id, now)
            if claimed is not None:
                frozen.append(fresh.get(contest_id) or await _announced_later(conn, claimed))
    return waiting, frozen


async def _announced_later(conn: Conn, contest: Contest) -> Frozen:
    board = await frozen_board(conn, await view_of(conn, contest))
    return Frozen(contest, board, [], await contests.contest_rating_changes(conn, contest.id))


async def _freeze(
    pool: asyncpg.Pool, contest_id: int, now: datetime, grace: timedelta, podium_check: bool
) -> Frozen | Waiting | None:
    async with pool.acquire() as conn, conn.transaction():
        # The row lock makes a second freezer wait, then see frozen_at set and do nothing.
        contest = await contests.lock_contest_by_id(conn, contest_id)
        if contest is None or contest.frozen_at is not None or contest.cancelled_at is not None:
            return None
        if now < contest.ends_at:
            return None
        pending = await contests.pending_jobs(conn, contest.id, contest.starts_at, contest.ends_at)
        freeze_by = contest.ends_at + grace
        if pending and now < freeze_by:
            return Waiting(contest, pending, freeze_by)
        board = await live_board(conn, await view_of(conn, contest), "contest")
        if podium_check and now < freeze_by:
            # Every run on the podium once more, then the podium as it stands after them (a check that read slower
            # may have moved it): the loop ends once every podium run has its check.
            checks = await queue_checks(conn, board)
            if checks:
                return Waiting(contest, checks, freeze_by, podium_checks=True)
        await write_standings(conn, contest.id, board)
        await contests.mark_frozen(conn, contest.id, now)
        changes = await rate_once(conn, contest.id, now)
        contest = await contests.lock_contest_by_id(conn, contest.id)
        assert contest is not None
        final = await frozen_board(conn, await view_of(conn, contest))
        podium = await podium_report(conn, contest.id) if podium_check else PodiumReport(())
    for check in podium.disagreed:
        log.warning(
            "contest %s: the podium check of submission %d disagreed (first %.4g on %s, check %s on %s)",
            contest.slug,
            check.submission_id,
            check.first_score,
            check.first_runner,
            check.check_score,
            check.check_runner,
        )
        log.warning("contest %s frozen without jobs %s, still unfinished after the grace period", contest.slug, pending)
    log.info("contest %s frozen: %d entrants, %d rated", contest.slug, len(final.lines), len(changes))
    return Frozen(contest, final, pending, changes, podium)


async def amend_frozen_board(pool: asyncpg.Pool, actor: Actor, slug: str, reason: str, *, now: datetime) -> Amendment:
    """Recompute a frozen board from the contest-phase runs as they stand now (after a moderator's rerun, an
    invalidation, or a result that came after the grace period) and store it, with an audit-log entry that holds
    the places before and after. Ratings already given are not changed."""
    as_utc(now, "current time")
    async with pool.acquire() as conn, conn.transaction():
        contest = await locked_contest(conn, slug)
        if contest.frozen_at is None:
            raise ContestError(
                f"`{contest.slug}` is not frozen yet: its board follows every result by itself; nothing to amend."
            )
        pending = await contests.pending_jobs(conn, contest.id, contest.starts_at, contest.ends_at)
        if pending:
            jobs_named = ", ".join(f"#{j}" for j in pending)
            raise ContestError(f"Job {jobs_named} of `{contest.slug}` has not finished; amend the board once it has.")
        contest_view = await view_of(conn, contest)
        before = await frozen_board(conn, contest_view)
        live = await live_board(conn, contest_view, "contest")
        await write_standings(conn, contest.id, live)
        after = await frozen_board(conn, contest_view)
        actor_id = await actor_user_id(conn, actor)
        details = {"before": board_places(before), "after": board_places(after)}
        await moderation.audit(conn, actor_id, "contest_amend", f"contest:{contest.slug}", reason, details)
    amendment = Amendment(before, after)
    log.info("contest %s frozen board amended by %d (changed: %s): %s", slug, actor_id, amendment.changed, reason)
    return amendment
