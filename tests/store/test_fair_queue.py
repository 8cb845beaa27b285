"""The fair queue (core.store.jobs.claim_next): re-runs first, then a reserving contest's runs while it is short of
its share, then the modes in priority order, and within a mode the users take turns, each user's jobs oldest first;
the queue position agrees with that order."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from core.contests import ContestDraft, create_contest, edit_contest
from core.errors import InvalidOptionError
from core.progress import describe_place, describe_start
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import GPUS, MOD, ROOMY, add_problems, request

LEASE_S = 60.0


async def _queue(pool: asyncpg.Pool, user: str, count: int = 1, *, mode: str = "ranked") -> list[int]:
    """Job ids of `count` new h100 submissions of `mode` by `user`, in the order they were queued."""
    return [(await submit(pool, request(user, mode=mode), ROOMY)).job_id for _ in range(count)]


async def _user_of(pool: asyncpg.Pool, job_id: int) -> str:
    name: str = await pool.fetchval(
        "SELECT u.external_id FROM jobs j JOIN users u ON u.id = j.user_id WHERE j.id = $1", job_id
    )
    return name.removeprefix("discord:")


async def _claim(pool: asyncpg.Pool, **kw: object) -> jobs.Lease:
    lease = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1", **kw)  # type: ignore[arg-type]
    assert lease is not None, "the queue still holds jobs"
    return lease


async def _mode_of(pool: asyncpg.Pool, job_id: int) -> str:
    mode: str = await pool.fetchval("SELECT mode FROM jobs WHERE id = $1", job_id)
    return mode


async def test_a_light_users_job_is_not_stuck_behind_a_heavy_users_queue(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _queue(pool, "heavy", 50)
    # The heavy user has been served before the light user shows up.
    assert await _user_of(pool, (await _claim(pool)).job_id) == "heavy"
    (light,) = await _queue(pool, "light")
    assert await jobs.queue_position(pool, light) == 1
    claimed = [(await _claim(pool)).job_id for _ in range(2)]
    assert light in claimed


async def test_users_with_queued_jobs_take_turns(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    for user in ("ann", "bob", "cid"):
        await _queue(pool, user, 3)
    order = [await _user_of(pool, (await _claim(pool)).job_id) for _ in range(9)]
    assert order == ["ann", "bob", "cid"] * 3


async def test_each_users_jobs_go_oldest_first(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    queued = await _queue(pool, "solo", 5)
    assert [await jobs.queue_position(pool, job_id) for job_id in queued] == [1, 2, 3, 4, 5]
    assert [(await _claim(pool)).job_id for _ in queued] == queued
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1") is None


async def test_a_requeued_job_goes_before_newer_jobs(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (lost,) = await _queue(pool, "ann")
    lease = await _claim(pool)
    assert lease.job_id == lost
    # Newer work arrives, from a user never served and from the same user, while the runner is lost.
    newer = await _queue(pool, "bob", 2) + await _queue(pool, "ann", 1)
    assert await jobs.requeue(pool, lease, "runner lost", 0.0)
    assert await jobs.queue_position(pool, lost) == 1
    assert await jobs.queue_position(pool, newer[0]) == 2
    again = await _claim(pool)
    assert (again.job_id, again.attempts) == (lost, 2)


async def test_a_requeued_job_waits_out_its_backoff_without_blocking_the_queue(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (lost,) = await _queue(pool, "ann")
    assert await jobs.requeue(pool, await _claim(pool), "runner lost", 3600.0)
    (other,) = await _queue(pool, "bob")
    assert (await _claim(pool)).job_id == other
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1") is None
    job = await jobs.get_job(pool, lost)
    assert job is not None and job.state == "queued"


async def test_concurrent_claimers_never_take_the_same_job(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    queued = set()
    for user in ("ann", "bob", "cid", "dan"):
        queued.update(await _queue(pool, user, 5))

    async def claim_all(owner: str) -> list[int]:
        # Each claimer has its own connection, as two dispatchers do.
        async with pool.acquire() as conn:
            taken = []
            while (lease := await jobs.claim_next(conn, "h100", owner, LEASE_S, f"runner-{owner}")) is not None:
                taken.append(lease.job_id)
                await asyncio.sleep(0)
            return taken

    first, second = await asyncio.gather(claim_all("d1"), claim_all("d2"))
    assert not set(first) & set(second)
    assert sorted(first + second) == sorted(queued)


async def test_the_position_follows_the_turns(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    heavy = await _queue(pool, "heavy", 4)
    (light,) = await _queue(pool, "light")
    # Never served, both; the heavy user's first job is the older, so their turn comes first.
    assert await jobs.queue_position(pool, light) == 2
    assert await jobs.queue_position(pool, heavy[3]) == 5
    assert (await jobs.start_estimate(pool, light)).position == 2
    # Serving the heavy user once puts the light user's turn first.
    assert (await _claim(pool)).job_id == heavy[0]
    assert await jobs.queue_position(pool, light) == 1
    assert await jobs.queue_position(pool, heavy[1]) == 2
    assert (await _claim(pool)).job_id == light
    assert await jobs.queue_position(pool, light) == 0


async def test_the_job_row_carries_its_submissions_user_and_mode(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (job_id,) = await _queue(pool, "ann", mode="profile")
    row = await pool.fetchrow(
        "SELECT j.user_id = s.user_id AS same_user, j.mode FROM jobs j JOIN submissions s ON s.id = j.submission_id "
        "WHERE j.id = $1",
        job_id,
    )
    assert row["same_user"] and row["mode"] == "profile"


async def test_modes_go_in_priority_order_and_users_take_turns_within_a_mode(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    # Queued least urgent first, so that the order claimed is the modes' order, not the queue's.
    await _queue(pool, "ann", 2, mode="ranked")
    await _queue(pool, "bob", 1, mode="ranked")
    await _queue(pool, "ann", 1, mode="profile")
    await _queue(pool, "bob", 1, mode="benchmark")
    await _queue(pool, "ann", 2, mode="test")
    await _queue(pool, "bob", 1, mode="test")
    claimed = [(await _claim(pool)).job_id for _ in range(8)]
    order = [(await _mode_of(pool, job_id), await _user_of(pool, job_id)) for job_id in claimed]
    assert [mode for mode, _ in order] == ["test"] * 3 + ["benchmark", "profile"] + ["ranked"] * 3
    assert jobs.MODE_PRIORITY == ("test", "benchmark", "profile", "ranked")
    # Within the test mode the two users take turns. Ann was served after bob (her profile run), so bob's ranked
    # run goes before hers, though hers are older.
    assert [user for mode, user in order if mode == "test"] == ["ann", "bob", "ann"]
    assert [user for mode, user in order if mode == "ranked"] == ["bob", "ann", "ann"]


async def test_the_position_is_the_order_the_claims_take(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    # One mode per user, so that serving one mode does not move a user's turn in another.
    served = await _queue(pool, "heavy", 4)
    assert (await _claim(pool)).job_id == served[0]  # heavy has had a turn
    queued = served[1:] + await _queue(pool, "light", 2) + await _queue(pool, "tester", 2, mode="test")
    queued += await _queue(pool, "prof", 1, mode="profile")
    queued += await _queue(pool, "bench", 1, mode="benchmark")
    assert await jobs.requeue(pool, await _claim(pool), "runner lost", 0.0)  # the tester's first test run
    positions = {job_id: await jobs.queue_position(pool, job_id) for job_id in queued}
    claimed = [(await _claim(pool)).job_id for _ in positions]
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1") is None
    assert sorted(positions, key=positions.__getitem__) == claimed
    assert sorted(positions.values()) == list(range(1, len(positions) + 1))


async def test_a_quarantined_runner_gets_no_ranked_job(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (ranked,) = await _queue(pool, "ann")
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1", ranked=False) is None
    assert await jobs.requeue(pool, await _claim(pool), "runner lost", 0.0)
    (test,) = await _queue(pool, "bob", mode="test")
    # The ranked re-run waiting at the head of the queue is passed over too.
    assert (await _claim(pool, ranked=False)).job_id == test
    assert await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1", ranked=False) is None
    assert (await _claim(pool)).job_id == ranked


async def _running_contest(pool: asyncpg.Pool, share: float | None) -> None:
    """A contest on vector_add at h100/float32 that started a moment ago and runs for an hour."""
    now = datetime.now(UTC)
    draft = ContestDraft("sprint", "Sprint", now, now + timedelta(hours=1), ("vector_add",), (("h100", "float32"),))
    await create_contest(pool, MOD, ContestDraft(**{**draft.__dict__, "reserve_share": share}), now=now, gpus=GPUS)


async def test_a_contest_short_of_its_reserved_share_has_its_oldest_run_go_first(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _running_contest(pool, 0.5)
    practice = await _queue(pool, "ann", 3, mode="test")
    # A ranked float16 run is on no target of the contest: practice. The float32 ones are the contest's.
    off_target = (await submit(pool, request("cid", dtype="float16"), ROOMY)).job_id
    entries = await _queue(pool, "bob", 2) + await _queue(pool, "dan", 1)
    # Two slots of h100: half of them is one run. None in flight, so the contest's oldest run goes before the tests.
    assert (await _claim(pool, capacity=2)).job_id == entries[0]
    # One in flight: the share is met, and the test runs go first again.
    assert (await _claim(pool, capacity=2)).job_id == practice[0]
    # Without a slot count no share applies; a quarantined runner never takes a contest's run.
    assert (await _claim(pool)).job_id == practice[1]
    assert (await _claim(pool, ranked=False, capacity=2)).job_id == practice[2]
    # Four slots: two runs may be in flight. The contest's oldest goes, not the round robin's (dan waits longer).
    assert (await _claim(pool, capacity=4)).job_id == entries[1]
    # The share met, the round robin resumes: cid and dan were never served, and cid's run is the older.
    assert [(await _claim(pool, capacity=4)).job_id for _ in range(2)] == [off_target, entries[2]]


async def test_a_contest_without_a_share_or_not_running_reserves_nothing(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _running_contest(pool, None)
    (test,) = await _queue(pool, "ann", mode="test")
    await _queue(pool, "bob")
    assert (await _claim(pool, capacity=8)).job_id == test


async def test_moderators_set_and_clear_the_reserved_share_while_the_contest_runs(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _running_contest(pool, 0.25)
    now = datetime.now(UTC)
    edited = await edit_contest(pool, MOD, "sprint", now=now, gpus=GPUS, reserve_share=0.5)
    assert edited.contest.reserve_share == 0.5
    cleared = await edit_contest(pool, MOD, "sprint", now=now, gpus=GPUS, reserve_share=0)
    assert cleared.contest.reserve_share is None
    with pytest.raises(InvalidOptionError, match="more than 0 and at most 1"):
        await edit_contest(pool, MOD, "sprint", now=now, gpus=GPUS, reserve_share=1.5)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_the_position_is_the_claim_order_for_users_with_several_jobs_each(pool: asyncpg.Pool, seed: int) -> None:
    rng = random.Random(seed)
    await add_problems(pool)
    # One mode per user, as above, so that a claim in one mode does not move a user's turn in another.
    mode_of = {f"u{i}": rng.choice(["benchmark", "ranked"]) for i in range(6)}
    # Some users are served before the rest queue (their turns move), then everyone queues a few jobs, interleaved.
    for user in rng.sample(sorted(mode_of), 2):
        await _queue(pool, user, 1, mode=mode_of[user])
        await _claim(pool)
    queued: list[int] = []
    for _ in range(16):
        user = rng.choice(sorted(mode_of))
        queued += await _queue(pool, user, 1, mode=mode_of[user])
    positions = {job_id: await jobs.queue_position(pool, job_id) for job_id in queued}
    claimed = [(await _claim(pool)).job_id for _ in positions]
    assert sorted(positions, key=positions.__getitem__) == claimed
    assert sorted(positions.values()) == list(range(1, len(positions) + 1))


async def test_a_place_past_the_cap_is_given_as_the_cap_and_shown_with_a_plus(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (first,) = await _queue(pool, "first")
    # PLACE_CAP + 5 users with a queued job each, made in one statement (the triggers keep queue_waiters).
    await pool.execute(
        """
        WITH u AS (
            INSERT INTO users (external_id, display_name)
            SELECT 'discord:crowd' || i, 'crowd' || i FROM generate_series(1, $1) AS i RETURNING id
        ), s AS (
            INSERT INTO submissions (user_id, problem_id, problem_version, source_sha256, file_name, language, dtype,
                                     mode, gpu_type)
            SELECT u.id, f.problem_id, f.problem_version, f.source_sha256, f.file_name, f.language, f.dtype, f.mode,
                   f.gpu_type
            FROM u, (SELECT * FROM submissions WHERE id = (SELECT submission_id FROM jobs WHERE id = $2)) AS f
            RETURNING id, gpu_type
        )
        INSERT INTO jobs (submission_id, gpu_type) SELECT id, gpu_type FROM s
        """,
        jobs.PLACE_CAP + 5,
        first,
    )
    (last,) = await _queue(pool, "last")
    assert await jobs.queue_position(pool, first) == 1
    assert await jobs.queue_position(pool, last) == jobs.PLACE_CAP
    assert describe_place(await jobs.queue_position(pool, last)) == f"{jobs.PLACE_CAP:,}+"
    assert describe_place(7) == "7"
    estimate = jobs.QueueEstimate(jobs.PLACE_CAP, 2, 60.0)
    assert "over" in describe_start(estimate.start_in_s, estimate.position)
