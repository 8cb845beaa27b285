"""`/quota` and `arena quota`: each mode's submissions left, the next refill and the full bucket, and the user's queued
jobs with their places and start estimates, from Postgres."""

from __future__ import annotations

import asyncpg
import pytest

from core.quota import ModeQuota, describe_queue, describe_quota, queue_lines, user_queue, user_quota
from core.settings import MODES, RateLimitSettings
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request

# One ranked token an hour: no pause of a busy machine between a submit and the read refills one.
TIGHT = RateLimitSettings(ranked_burst=3, ranked_per_hour=1, test_burst=5, test_per_hour=60)


async def test_a_user_who_never_submitted_has_every_bucket_full(pool: asyncpg.Pool) -> None:
    quotas = await user_quota(pool, "discord:nobody", TIGHT)
    assert [q.mode for q in quotas] == list(MODES)
    ranked = next(q for q in quotas if q.mode == "ranked")
    assert ranked.left == 3 and ranked.full and ranked.next_in_s is None and ranked.full_in_s == 0
    assert describe_quota(ranked) == "3 of 3 left · full"


async def test_submissions_take_from_their_own_modes_bucket_and_say_when_it_refills(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await submit(pool, request("alice"), TIGHT)
    await submit(pool, request("alice"), TIGHT)
    quotas = {q.mode: q for q in await user_quota(pool, "discord:alice", TIGHT)}
    ranked = quotas["ranked"]
    assert ranked.left == 1 and not ranked.full
    # Whatever time the test took, the next token is less than one interval away and the bucket is full one token
    # after it.
    assert ranked.next_in_s is not None and 0 < ranked.next_in_s <= 3600 / TIGHT.ranked_per_hour
    assert ranked.full_in_s == pytest.approx(ranked.next_in_s + 3600 / TIGHT.ranked_per_hour)
    assert describe_quota(ranked).startswith("1 of 3 left · next in ")
    assert " · full in " in describe_quota(ranked)
    assert quotas["test"].full and quotas["test"].left == 5


@pytest.mark.parametrize(
    ("available", "expected"),
    [
        (0.0, "0 of 2 left · next in 10 minutes · full in 20 minutes"),
        (1.5, "1 of 2 left · next in 5 minutes"),
        (2.0, "2 of 2 left · full"),
    ],
)
def test_the_quota_reads_the_same_words_everywhere(available: float, expected: str) -> None:
    assert describe_quota(ModeQuota("profile", available, burst=2, per_hour=6)) == expected


async def test_the_queue_lists_the_users_next_jobs_with_their_fair_places_and_start_estimates(
    pool: asyncpg.Pool,
) -> None:
    await add_problems(pool)
    assert describe_queue(await user_queue(pool, "discord:alice")) == "nothing queued"
    # One finished job of 20 s on h100: the estimate's median.
    past = await submit(pool, request("past"), ROOMY)
    await pool.execute(
        "UPDATE jobs SET state = 'done', started_at = now() - interval '20 seconds', finished_at = now() WHERE id = $1",
        past.job_id,
    )
    for _ in range(3):
        await submit(pool, request("heavy"), ROOMY)
    ranked = [await submit(pool, request("alice"), ROOMY) for _ in range(2)]
    test = await submit(pool, request("alice", mode="test"), ROOMY)
    queue = await user_queue(pool, "discord:alice", shown=2)
    assert queue.queued == 3
    # The test run goes first of all (its mode first); the ranked run after heavy's first, whose job is older.
    assert [(run.job.job_id, run.estimate.position) for run in queue.first] == [(test.job_id, 1), (ranked[0].job_id, 3)]
    assert describe_queue(queue) == "3 queued · next job starts in about 20 seconds"
    assert queue_lines(queue) == [
        f"#{test.submission_id} vector_add · test on h100 · position 1 · starts in about 20 seconds",
        f"#{ranked[0].submission_id} vector_add · ranked on h100 · position 3 · starts in about 60 seconds",
        "… and 1 more",
    ]
