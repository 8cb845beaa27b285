"""Finding a contest: by slug, with its problems and targets, and its row locked for a change."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.errors import ContestNotFoundError
from core.moderation import Actor
from core.problems import shown
from core.store import contests, users
from core.store.contests import Contest, ContestProblem, Target
from core.store.pool import Conn


@dataclass(frozen=True)
class ContestView:
    contest: Contest
    problems: list[ContestProblem]
    targets: list[Target]

    def state(self, now: datetime) -> str:
        """`cancelled`, `frozen`, `ended` (waiting for its last jobs), `running` or `upcoming`."""
        c = self.contest
        if c.cancelled_at is not None:
            return "cancelled"
        if c.frozen_at is not None:
            return "frozen"
        if now >= c.ends_at:
            return "ended"
        return "running" if now >= c.starts_at else "upcoming"


async def actor_user_id(conn: Conn, actor: Actor) -> int:
    return (await users.ensure_user(conn, actor.external_id, actor.display_name)).id


async def locked_contest(conn: Conn, slug: str) -> Contest:
    contest = await contests.get_contest(conn, slug, lock=True)
    if contest is None:
        raise ContestNotFoundError(f"There is no contest called `{shown(slug)}`; `/contests` lists them.")
    return contest


async def view(conn: Conn, slug: str) -> ContestView:
    """The contest with its problems and targets, or ContestNotFoundError."""
    contest = await contests.get_contest(conn, slug)
    if contest is None:
        raise ContestNotFoundError(f"There is no contest called `{shown(slug)}`; `/contests` lists them.")
    return await view_of(conn, contest)


async def view_of(conn: Conn, contest: Contest) -> ContestView:
    return ContestView(
        contest, await contests.problems_of(conn, contest.id), await contests.targets_of(conn, contest.id)
    )
