"""What a user may still submit in each mode, and when each bucket refills, and where their queued jobs stand:
`/quota` and `arena quota`.

Each mode is a token bucket (`core.store.ratelimits`): `burst` submissions at once, refilled continuously at
`per_hour` an hour. A user who never submitted has every bucket full. Each queued job has its place in the fair
queue and a start estimate from the latest jobs of its GPU type (`core.store.jobs.start_estimate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from core.progress import describe_place
from core.ratelimit import describe_wait
from core.settings import MODES, RateLimitSettings
from core.store import contests, jobs, ratelimits, users


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


# How many of a user's queued jobs `/quota` places: each place reads its GPU type's whole queue once.
QUEUE_SHOWN = 3


@dataclass(frozen=True)
class QueuedRun:
    job: jobs.QueuedJob
    estimate: jobs.QueueEstimate


@dataclass(frozen=True)
class UserQueue:
    queued: int  # every job the user has queued
    first: list[QueuedRun]  # the first few of them to go out, the soonest first

    @property
    def next_start_in_s(self) -> float | None:
        """When the user's next job should start; None with nothing queued or nothing to go by."""
        return self.first[0].estimate.start_in_s if self.first else None


async def user_queue(pool: asyncpg.Pool, external_id: str, *, shown: int = QUEUE_SHOWN) -> UserQueue:
    """The user's queued jobs: how many, and the first `shown` with their places and start estimates."""
    user = await users.find_user(pool, external_id)
    if user is None:
        return UserQueue(0, [])
    total, first = await jobs.queued_jobs_of(pool, user.id, shown)
    runs = [QueuedRun(job, await jobs.start_estimate(pool, job.job_id)) for job in first]
    # A job dispatched since the list was read has place 0: it is no longer queued.
    runs = [run for run in runs if run.estimate.position > 0]

    def soonest(run: QueuedRun) -> tuple[float, int]:
        start = run.estimate.start_in_s
        return (start if start is not None else float("inf"), run.estimate.position)

    return UserQueue(total, sorted(runs, key=soonest))


def describe_start_in(start_in_s: float | None, position: int = 0) -> str:
    """'starts in about 40 seconds', or 'no estimate yet' before any job of its GPU type finished; 'in over' for a
    place at the count's cap (jobs.PLACE_CAP)."""
    if start_in_s is None:
        return "no estimate yet"
    if start_in_s < 10:
        return "starts in a few seconds"
    return f"starts in {'over' if position >= jobs.PLACE_CAP else 'about'} {describe_wait(start_in_s)}"


def describe_queued_run(run: QueuedRun) -> str:
    """'#12 vector_add · ranked on h100 · position 4 · starts in about 40 seconds': the same words everywhere."""
    job = run.job
    return (
        f"#{job.submission_id} {job.slug} · {job.mode} on {job.gpu_type} · position "
        f"{describe_place(run.estimate.position)} · {describe_start_in(run.estimate.start_in_s, run.estimate.position)}"
    )


def describe_queue(queue: UserQueue) -> str:
    """'3 queued · next job starts in about 40 seconds', or 'nothing queued'; no estimate before any job of the
    GPU type finished."""
    if not queue.queued:
        return "nothing queued"
    if queue.next_start_in_s is None:
        return f"{queue.queued} queued · no start estimate yet"
    return f"{queue.queued} queued · next job {describe_start_in(queue.next_start_in_s)}"


def queue_lines(queue: UserQueue) -> list[str]:
    """A line per placed job, then '… and 4 more' for the rest."""
    lines = [describe_queued_run(run) for run in queue.first]
    if queue.queued > len(queue.first):
        lines.append(f"… and {queue.queued - len(queue.first)} more")
    return lines
