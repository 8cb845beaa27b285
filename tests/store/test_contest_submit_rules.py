"""What a contest changes at submit time, on the store's own clock: a hidden problem cannot be submitted to before
the start, and a contest's own limit on ranked runs applies to the runs it counts, apart from practice."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core.contests import ContestDraft, create_contest
from core.errors import RateLimitedError, UnknownProblemError
from core.problems import ProblemSpec, sync_problem
from core.quota import describe_quota, user_quota
from core.ratelimit import remaining
from core.settings import RateLimitSettings
from core.submit.intake import submit
from tests.store.store_helpers import GPUS, MOD, ROOMY, VECTOR_ADD, add_problems, request

SECRET = ProblemSpec("secret_sum", "Secret sum", 1, ("float32",), source="def reference(a): return a\n")
START_IN = timedelta(seconds=1.5)


async def _contest(pool: asyncpg.Pool, problems: tuple[str, ...], limit: tuple[int, float] | None = None) -> None:
    now = datetime.now(UTC)
    draft = ContestDraft(
        "sprint", "Sprint", now + START_IN, now + timedelta(minutes=10), problems, (("h100", "float32"),),
        ranked_limit=limit,
    )  # fmt: skip
    await create_contest(pool, MOD, draft, now=now, gpus=GPUS)


async def test_a_hidden_problem_reads_as_unknown_at_submit_until_its_contest_starts(pool: asyncpg.Pool) -> None:
    await sync_problem(pool, SECRET)
    await _contest(pool, ("secret_sum",))
    with pytest.raises(UnknownProblemError) as refused:
        await submit(pool, request("alice", slug="secret_sum"), ROOMY)
    assert str(refused.value) == "There is no problem called `secret_sum`."  # no hint that would name it
    await asyncio.sleep(START_IN.total_seconds() + 0.2)
    receipt = await submit(pool, request("alice", slug="secret_sum"), ROOMY)
    assert receipt.submission_id > 0


async def test_a_contests_own_limit_applies_to_the_ranked_runs_it_counts_and_not_to_practice(
    pool: asyncpg.Pool,
) -> None:
    await add_problems(pool, VECTOR_ADD)
    limits = RateLimitSettings(ranked_burst=5, ranked_per_hour=60)
    await _contest(pool, ("vector_add",), limit=(1, 2.0))
    await asyncio.sleep(START_IN.total_seconds() + 0.2)
    await submit(pool, request("alice"), limits)  # counted by the contest: its bucket of one
    with pytest.raises(RateLimitedError, match=r"ranked submissions in this contest for now \(1 at once, 2 an hour\)"):
        await submit(pool, request("alice"), limits)
    # Practice is untouched: another target is not the contest's, and its ranked bucket is full.
    await submit(pool, request("alice", gpu="a100"), limits)
    user_id = await pool.fetchval("SELECT id FROM users WHERE external_id = 'discord:alice'")
    assert await remaining(pool, user_id, "ranked", limits) == 4
    await submit(pool, request("alice", mode="test"), limits)  # other modes keep their own buckets
    # `/quota` lists the contest's bucket after the modes'.
    quotas = {q.mode: q for q in await user_quota(pool, "discord:alice", limits)}
    assert describe_quota(quotas["ranked in sprint"]).startswith("0 of 1 left · next in ")
    assert quotas["ranked"].left == 4
