"""Contest ratings: a frozen contest's standings applied to its entrants' ratings (core/rating.py), once, and a
user's rating with its history."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from core.contests.clock import as_utc
from core.contests.lookup import locked_contest
from core.errors import ContestError
from core.rating import Rating, Standing, rate_contest
from core.store import contests, users
from core.store.contests import RatingChange, StoredRating
from core.store.pool import Conn


async def rate_once(conn: Conn, contest_id: int, now: datetime) -> list[RatingChange]:
    """Rate the contest from its frozen standings, once; [] when it was rated already."""
    contest = await contests.lock_contest_by_id(conn, contest_id)
    assert contest is not None and contest.frozen_at is not None
    if contest.rated_at is not None:
        return []
    standings = await contests.frozen_standings(conn, contest_id)
    before = {
        uid: Rating(r.rating, r.rd, r.volatility)
        for uid, r in (await contests.ratings_of(conn, [s.user_id for s in standings])).items()
    }
    after = rate_contest([Standing(s.user_id, s.place) for s in standings], before)
    changes = []
    for s in standings:
        if s.user_id not in after:
            continue
        old, new = before.get(s.user_id, Rating()), after[s.user_id]
        changes.append(
            RatingChange(
                s.user_id, contest_id, s.place, old.rating, old.rd, old.volatility, new.rating, new.rd, new.volatility
            )
        )
    await contests.record_ratings(conn, contest_id, changes, now)
    return changes


async def rate_frozen_contest(pool: asyncpg.Pool, slug: str, *, now: datetime) -> list[RatingChange]:
    """Rate a frozen contest that is not rated yet (the freeze does it; this repairs one that stopped between the
    two); [] when it is rated already."""
    async with pool.acquire() as conn, conn.transaction():
        contest = await locked_contest(conn, slug)
        if contest.frozen_at is None:
            raise ContestError(f"`{contest.slug}` is not frozen yet; it is rated when its board freezes.")
        return await rate_once(conn, contest.id, as_utc(now, "current time"))


async def user_rating(conn: Conn, external_id: str) -> tuple[StoredRating | None, list[RatingChange]]:
    """The user's current rating (None before their first rated contest) and its history, oldest first."""
    user = await users.find_user(conn, external_id)
    if user is None:
        return None, []
    current = (await contests.ratings_of(conn, [user.id])).get(user.id)
    return current, await contests.rating_history(conn, user.id)
