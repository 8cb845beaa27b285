"""What a user may still submit in each mode, and when each bucket refills: `/quota` and `arena quota`.

Each mode is a token bucket (`core.store.ratelimits`): `burst` submissions at once, refilled continuously at
`per_hour` an hour. A user who never submitted has every bucket full.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from core.ratelimit import describe_wait
from core.settings import MODES, RateLimitSettings
from core.store import contests, ratelimits, users


@dataclass(frozen=True)
class ModeQuota:
    mode: str
    available: float  # tokens now, fractional while a bucket refills
    burst: int
    per_hour: float

    @property
    def left(self) -> int:
        """Whole submissions that may be sent now."""
        return math.floor(self.available + 1e-9)

    @property
    def next_in_s(self) -> float | None:
        """Seconds until one more submission is allowed; None when the bucket is full."""
        if self.full:
            return None
        return (math.floor(self.available + 1e-9) + 1 - self.available) * 3600.0 / self.per_hour

    @property
    def full_in_s(self) -> float:
        """Seconds until the bucket is full again (0 when it is)."""
        return max(0.0, (self.burst - self.available) * 3600.0 / self.per_hour)

    @property
    def full(self) -> bool:
        return self.available >= self.burst - 1e-9


async def user_quota(
    pool: asyncpg.Pool, external_id: str, limits: RateLimitSettings, *, now: datetime | None = None
) -> list[ModeQuota]:
    """Every mode's bucket for the user behind `external_id`, in the order modes are listed, then the bucket of each
    running contest with its own ranked limit (`ranked in <slug>`)."""
    user = await users.find_user(pool, external_id)

    async def available(bucket: str, burst: int, per_hour: float) -> float:
        return float(burst) if user is None else await ratelimits.peek(pool, user.id, bucket, burst, per_hour)

    quotas = []
    for mode in MODES:
        limit = limits.for_mode(mode)
        quotas.append(ModeQuota(mode, await available(mode, limit.burst, limit.per_hour), limit.burst, limit.per_hour))
    for contest in await contests.running_limited_contests(pool, now or datetime.now(UTC)):
        assert contest.ranked_burst is not None and contest.ranked_per_hour is not None
        burst, per_hour = contest.ranked_burst, contest.ranked_per_hour
        bucket = await available(f"contest:{contest.id}", burst, per_hour)
        quotas.append(ModeQuota(f"ranked in {contest.slug}", bucket, burst, per_hour))
    return quotas


def describe_quota(quota: ModeQuota) -> str:
    """'1 of 3 left · next in 12 minutes · full in 52 minutes': the same words in the CLI and in Discord."""
    text = f"{quota.left} of {quota.burst} left"
    if quota.full:
        return f"{text} · full"
    assert quota.next_in_s is not None
    text += f" · next in {describe_wait(quota.next_in_s)}"
    if quota.burst - quota.left > 1:
        text += f" · full in {describe_wait(quota.full_in_s)}"
    return text


def describe_rate(quota: ModeQuota) -> str:
    return f"{quota.burst} at once, {quota.per_hour:g} an hour"
