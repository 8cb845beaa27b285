"""Token buckets per (user, mode) in Postgres, so limits survive restarts and hold across bot processes.

A bucket holds up to `burst` tokens and refills continuously at `per_hour` tokens an hour; a submission takes
one. Taking happens inside the submit statement (`take_cte`, used by `core.store.submissions.create`), so the row
lock serialises one user's concurrent submits and a refused or rolled-back submit takes nothing.
"""

from __future__ import annotations

from core.store.pool import Conn

# `now()` is the transaction's start, so two overlapping transactions may see time run backwards: elapsed time
# is clamped at zero. `{burst}` and `{per_hour}` are parameter placeholders ($n), filled in by `take_cte`.
_AVAILABLE = (
    "LEAST({burst}::float8, r.tokens"
    " + GREATEST(0, EXTRACT(EPOCH FROM now() - r.updated_at)::float8) * {per_hour}::float8 / 3600.0)"
)

_TAKE = """
    INSERT INTO rate_limits AS r (user_id, mode, tokens, updated_at) VALUES ({user}, {mode}, {burst}::float8 - 1, now())
    ON CONFLICT (user_id, mode) DO UPDATE
        SET tokens = {available} - 1, updated_at = GREATEST(r.updated_at, now())
        WHERE {available} >= 1
    RETURNING tokens
"""


def take_cte(*, user: str, mode: str, burst: str, per_hour: str) -> str:
    """The body of a CTE that takes one token and returns the tokens left, or no row when the bucket is empty.

    The arguments name the statement's parameters ("$1", ...); nothing else is formatted in.
    """
    available = _AVAILABLE.format(burst=burst, per_hour=per_hour)
    return _TAKE.format(user=user, mode=mode, burst=burst, available=available)


_PEEK = (
    "SELECT "
    + _AVAILABLE.format(burst="$3", per_hour="$4")
    + " FROM rate_limits r WHERE r.user_id = $1 AND r.mode = $2"
)


async def peek(conn: Conn, user_id: int, mode: str, burst: int, per_hour: float) -> float:
    """Tokens available now, without taking one."""
    value = await conn.fetchval(_PEEK, user_id, mode, float(burst), per_hour)
    return float(burst) if value is None else float(value)


async def refund(conn: Conn, user_id: int, mode: str, burst: int) -> None:
    """Give back a token taken by a submit that turned out to repeat an earlier one."""
    await conn.execute(
        "UPDATE rate_limits SET tokens = LEAST($3::float8, tokens + 1) WHERE user_id = $1 AND mode = $2",
        user_id,
        mode,
        float(burst),
    )


async def give_back(conn: Conn, user_id: int, bucket: str) -> None:
    """Return the token a submission took, when the service failed it (a lost runner, every attempt used). The
    bucket may then hold more than its burst; every read caps it (`_AVAILABLE`), so nothing is gained beyond full."""
    await conn.execute("UPDATE rate_limits SET tokens = tokens + 1 WHERE user_id = $1 AND mode = $2", user_id, bucket)


def retry_after_s(available: float, per_hour: float) -> float:
    """Seconds until a whole token is back."""
    return max(0.0, (1.0 - available) * 3600.0 / per_hour)
