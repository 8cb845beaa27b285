"""Per-user submission limits for each mode, kept in Postgres (see `core.store.ratelimits`)."""

from __future__ import annotations

import math

from core.errors import RateLimitedError
from core.settings import RateLimit, RateLimitSettings
from core.store import ratelimits
from core.store.pool import Conn


def describe_wait(seconds: float) -> str:
    """'40 seconds', '12 minutes', '2 hours': how long until the next submission is allowed."""
    if seconds < 90:
        count, unit = max(1, math.ceil(seconds)), "second"
    elif seconds < 90 * 60:
        count, unit = math.ceil(seconds / 60), "minute"
    else:
        return f"{seconds / 3600:.1f} hours"
    return f"{count} {unit}" if count == 1 else f"{count} {unit}s"


async def refusal(
    conn: Conn,
    user_id: int,
    mode: str,
    limits: RateLimitSettings,
    *,
    bucket: str | None = None,
    limit: RateLimit | None = None,
) -> RateLimitedError:
    """The error for a user whose bucket is empty, saying when to try again. `bucket` and `limit` name a
    contest's own bucket (`contest:<id>`) where one applied; by default, the mode's."""
    limit = limit or limits.for_mode(mode)
    bucket = bucket or mode
    wait = ratelimits.retry_after_s(
        await ratelimits.peek(conn, user_id, bucket, limit.burst, limit.per_hour), limit.per_hour
    )
    what = f"{mode} submissions" if bucket == mode else f"{mode} submissions in this contest"
    return RateLimitedError(
        f"You have used your {what} for now ({limit.burst} at once, {limit.per_hour:g} an hour). "
        f"Try again in {describe_wait(wait)}.",
        retry_after_s=wait,
    )


async def remaining(conn: Conn, user_id: int, mode: str, limits: RateLimitSettings) -> int:
    """Whole submissions the user may still send in `mode` right now."""
    limit = limits.for_mode(mode)
    return math.floor(await ratelimits.peek(conn, user_id, mode, limit.burst, limit.per_hour))
