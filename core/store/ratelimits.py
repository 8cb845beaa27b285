"""Token buckets per (user, mode) in Postgres, so limits survive restarts and hold across bot processes.

A bucket holds up to `burst` tokens and refills continuously at `per_hour` tokens an hour; a submission takes
one. Taking happens inside the submit statement (`take_cte`, used by `core.store.submissions.create_many`), so the
row lock serialises one user's concurrent submits and a refused or rolled-back submit takes nothing.
"""

from __future__ import annotations

from core.store.pool import Conn

# `now()` is the transaction's start, so two overlapping transactions may see time run backwards: elapsed time
# is clamped at zero. `{burst}` and `{per_hour}` name a parameter ($n) or a column, filled in by `take_cte` and `_PEEK`.
_AVAILABLE = (
    "LEAST({burst}::float8, r.tokens"
    " + GREATEST(0, EXTRACT(EPOCH FROM now() - r.updated_at)::float8) * {per_hour}::float8 / 3600.0)"
)

_TAKE = """
    INSERT INTO rate_limits AS r (user_id, mode, tokens, updated_at)
    SELECT q.user_id, q.bucket, q.burst - 1, now() FROM {requests} q ORDER BY q.user_id, q.bucket
    ON CONFLICT (user_id, mode) DO UPDATE
        SET tokens = ({wanted}) - 1, updated_at = GREATEST(r.updated_at, now())
        WHERE ({wanted}) >= 1
    RETURNING r.user_id, r.mode
"""


def take_cte(requests: str) -> str:
    """The body of a CTE that takes one token for each row of `requests` and returns (user_id, mode) of the buckets
    that had one; a bucket that was empty returns nothing.

    `requests` names a CTE with columns user_id, bucket, burst and per_hour (float8), at most one row per (user_id,
    bucket): PostgreSQL refuses to update one row twice in a statement. Nothing else is formatted in. The buckets
    are taken in the order of their keys, so that two such statements lock the rows they share in one order and
    never wait for each other in a circle.
    """
    # The bucket's own request, read again for its row: in DO UPDATE only the row and `excluded` are in scope.
    available = _AVAILABLE.format(burst="q.burst", per_hour="q.per_hour")
    wanted = f"SELECT {available} FROM {requests} q WHERE q.user_id = r.user_id AND q.bucket = r.mode"
    return _TAKE.format(requests=requests, wanted=wanted)


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
