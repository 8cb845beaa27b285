"""What contests hide: problems not yet public before their contest starts, and contest code until the end."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from core.contests.clock import as_utc
from core.moderation import Actor
from core.store import contests, users
from core.store.pool import Conn
from core.store.problems import ProblemVersion
from core.store.submissions import Submission


async def hidden_problem_ids(conn: Conn, now: datetime) -> set[int]:
    """Problems left out of the problem list at `now`: in a contest not yet started, and not public before."""
    return await contests.hidden_problem_ids(conn, as_utc(now, "current time"))


async def visible_problems(conn: Conn, problems: Sequence[ProblemVersion], now: datetime) -> list[ProblemVersion]:
    """`problems` without those a contest hides at `now`."""
    hidden = await hidden_problem_ids(conn, now)
    return [p for p in problems if p.problem_id not in hidden]


async def code_revealed(conn: Conn, submission: Submission, now: datetime) -> bool:
    """Whether people other than its author (and moderators) may read the submission's code at `now`.

    Only contest code is ever revealed: a ranked run of a contest's phase, once every contest it belongs to has
    ended, unless its author opted out. Anything else stays private, as it always was."""
    ends = await contests.contest_ends_of_submission(conn, submission.id)
    if not ends or any(as_utc(now, "current time") < end for end in ends):
        return False
    return await contests.reveals_code(conn, submission.user_id)


async def set_code_reveal(pool: asyncpg.Pool, who: Actor, allowed: bool) -> None:
    """Let others read (or stop them reading) the user's code of contests that have ended."""
    async with pool.acquire() as conn, conn.transaction():
        user = await users.ensure_user(conn, who.external_id, who.display_name)
        await contests.set_reveals_code(conn, user.id, allowed)
