"""Contest ratings: a frozen contest's standings applied to its entrants' ratings (core/rating.py), once, the
players who sat it out aged by one period, and a user's rating with its history."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from core.contests.clock import as_utc
from core.contests.lookup import locked_contest
from core.errors import ContestError
from core.rating import METHOD, Rating, Standing, age, rate_contest
from core.store import contests, users
from core.store.contests import RatingChange, StoredRating
from core.store.pool import Conn


async def rate_once(conn: Conn, contest_id: int, now: datetime) -> list[RatingChange]:
    """Rate the contest from its frozen standings, once; [] when it was rated already.

    Contests are rated in the order they ended, so any other frozen contest still unrated (after a change of
    rating method, migration V008, all of them) is rated first, or after it if it ended later."""
    contest = await contests.lock_contest_by_id(conn, contest_id)
    assert contest is not None and contest.frozen_at is not None
    if contest.rated_at is not None:
        return []
    rated = await rate_pending(conn, now)
    return rated.get(contest_id, [])


async def rate_pending(conn: Conn, now: datetime) -> dict[int, list[RatingChange]]:
    """Rate every frozen contest that is not rated yet, in the order they ended; each contest's changes by its id.

    Call inside a transaction. After a migration that sets the stored ratings aside, this rates every contest
    again with `core.rating`; `contests.rated_at` marks the done ones, so a second call finds nothing to do."""
    await contests.lock_ratings(conn)
    done: dict[int, list[RatingChange]] = {}
    for contest in await contests.unrated_frozen_contests(conn):
        locked = await contests.lock_contest_by_id(conn, contest.id)
        if locked is None or locked.rated_at is not None:
            continue
        done[contest.id] = await _rate(conn, contest.id, now)
    return done


async def _rate(conn: Conn, contest_id: int, now: datetime) -> list[RatingChange]:
    """Apply one contest's standings to its entrants' ratings and age every rated player who sat it out."""
    standings = await contests.frozen_standings(conn, contest_id)
    entrants = [s.user_id for s in standings]
    before = {
        uid: Rating(r.rating, r.rd, r.volatility) for uid, r in (await contests.ratings_of(conn, entrants)).items()
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
    if after:
        # A contest that ordered nobody is no rating period: only a rated one ages the players who missed it.
        absent = await contests.ratings_except(conn, entrants)
        aged = [(r.user_id, age(Rating(r.rating, r.rd, r.volatility)).rd) for r in absent]
        await contests.record_absences(conn, aged, now)
    await contests.record_ratings(conn, contest_id, changes, METHOD, now)
    return changes


async def rate_frozen_contest(pool: asyncpg.Pool, slug: str, *, now: datetime) -> list[RatingChange]:
    """Rate a frozen contest that is not rated yet (the freeze does it; this repairs one that stopped between the
    two); [] when it is rated already."""
    async with pool.acquire() as conn, conn.transaction():
        # The ratings' lock before the contest's row, as `rate_pending` takes them: the other order could deadlock.
        await contests.lock_ratings(conn)
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
