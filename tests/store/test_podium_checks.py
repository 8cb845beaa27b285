"""A contest's podium is run a second time before its board freezes (core/podium_checks.py), against a real store.

The runners are named in the claims and the results, as a dispatcher names them; a second runner of the pool is
a fleet runner registered in the store. Time is injected as in test_contests.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg

from core.contests import ContestDraft, contest_board, create_contest, freeze_if_due
from core.results import record_result
from core.store import fleet, jobs, submissions
from core.store.jobs import AVOID_RUNNER_S
from core.submit.intake import SubmitReceipt, submit
from tests.store.store_helpers import GPUS, MOD, ROOMY, VECTOR_ADD, add_problems, request, result_for

START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(minutes=1)
AFTER = END + timedelta(seconds=5)


async def make_contest(pool: asyncpg.Pool) -> None:
    draft = ContestDraft("spring", "Spring sprint", START, END, ("vector_add",), (("h100", "float32"),), "public")
    await create_contest(pool, MOD, draft, now=START - timedelta(hours=1), gpus=GPUS)


async def judge(pool: asyncpg.Pool, job_id: int, score: float | None, runner: str, status: str = "passed") -> None:
    """Claim `job_id` for `runner` and record its result with `score`, as a dispatcher does."""
    lease = await jobs.claim_job(pool, job_id, "test-owner", 30.0, runner)
    assert lease is not None, f"job {job_id} was not queued"
    assert await jobs.set_running(pool, lease)
    spec = await jobs.job_spec(pool, job_id)
    assert spec is not None
    assert await record_result(pool, lease, result_for(spec, score, status), runner)


async def entry(pool: asyncpg.Pool, user: str, score: float, runner: str = "gpu-a") -> SubmitReceipt:
    receipt = await submit(pool, request(user), ROOMY)
    await pool.execute(
        "UPDATE submissions SET created_at = $2 WHERE id = $1", receipt.submission_id, START + timedelta(seconds=5)
    )
    await judge(pool, receipt.job_id, score, runner)
    return receipt


async def score_of(pool: asyncpg.Pool, receipt: SubmitReceipt) -> tuple[str, float | None]:
    sub = await submissions.get_submission(pool, receipt.submission_id)
    assert sub is not None
    return sub.status, sub.score


async def check_jobs(pool: asyncpg.Pool) -> dict[int, int]:
    """The queued podium checks: submission id -> job id."""
    rows = await pool.fetch("SELECT submission_id, id FROM jobs WHERE podium_check AND state = 'queued'")
    return {r["submission_id"]: r["id"] for r in rows}


async def four_entrants(pool: asyncpg.Pool) -> dict[str, SubmitReceipt]:
    await add_problems(pool, VECTOR_ADD)
    await make_contest(pool)
    return {
        user: await entry(pool, user, score)
        for user, score in (("alice", 100), ("bob", 90), ("carol", 80), ("dave", 70))
    }


async def test_the_board_freezes_only_after_its_podium_ran_again_and_agreeing_runs_keep_their_scores(
    pool: asyncpg.Pool,
):
    runs = await four_entrants(pool)
    report = await freeze_if_due(pool, AFTER)
    assert report.frozen == []
    (waiting,) = report.waiting
    assert waiting.podium_checks and len(waiting.pending_jobs) == 3  # the podium, not dave
    checks = await check_jobs(pool)
    assert set(checks) == {runs[u].submission_id for u in ("alice", "bob", "carol")}
    # Still waiting while the checks run; a check leaves its submission's verdict alone, running or done.
    assert (await freeze_if_due(pool, AFTER)).frozen == []
    for user, score in (("alice", 104.0), ("bob", 85.0), ("carol", 80.5)):
        await judge(pool, checks[runs[user].submission_id], score, "gpu-a")
        assert await score_of(pool, runs[user]) == ("passed", {"alice": 100, "bob": 90, "carol": 80}[user])
    (frozen,) = (await freeze_if_due(pool, AFTER)).frozen
    assert [line.display_name for line in frozen.board.podium] == ["alice", "bob", "carol"]
    assert [c.verdict for c in frozen.podium.checks] == ["agreed"] * 3
    assert frozen.podium.same_runner  # no other runner in the pool: the checks ran where the runs had
    # The check's case rows are its own: the first run's job is still the submission's result.
    sub = await submissions.get_submission(pool, runs["alice"].submission_id)
    assert sub is not None and sub.result_job_id == runs["alice"].job_id


async def test_a_check_that_reads_slower_puts_the_slower_run_on_the_board_and_checks_the_new_podium(
    pool: asyncpg.Pool,
):
    runs = await four_entrants(pool)
    await freeze_if_due(pool, AFTER)
    checks = await check_jobs(pool)
    await judge(pool, checks[runs["alice"].submission_id], 40.0, "gpu-a")  # 2.5x slower: past the 10 % threshold
    await judge(pool, checks[runs["bob"].submission_id], 200.0, "gpu-a")  # faster: the slower first run stands
    await judge(pool, checks[runs["carol"].submission_id], 79.0, "gpu-a")
    assert await score_of(pool, runs["alice"]) == ("passed", 40.0)
    assert await score_of(pool, runs["bob"]) == ("passed", 90.0)
    alice = await submissions.get_submission(pool, runs["alice"].submission_id)
    assert alice is not None and any("slower run is the one on the board" in n for n in alice.notes)
    # Alice fell off the podium and dave came on: his run is checked before the freeze.
    report = await freeze_if_due(pool, AFTER)
    assert report.frozen == [] and report.waiting[0].podium_checks
    assert set(await check_jobs(pool)) == {runs["dave"].submission_id}
    await judge(pool, (await check_jobs(pool))[runs["dave"].submission_id], 71.0, "gpu-a")
    (frozen,) = (await freeze_if_due(pool, AFTER)).frozen
    assert [line.display_name for line in frozen.board.podium] == ["bob", "carol", "dave"]
    assert sorted(c.verdict for c in frozen.podium.disagreed) == ["disagreed", "disagreed"]
    board = await contest_board(pool, "spring")
    assert [line.display_name for line in board.lines][-1] == "alice"


async def test_a_failed_check_leaves_the_first_run_standing_and_the_freeze_goes_on(pool: asyncpg.Pool):
    runs = await four_entrants(pool)
    await freeze_if_due(pool, AFTER)
    checks = await check_jobs(pool)
    for user in ("alice", "bob", "carol"):
        await judge(
            pool, checks[runs[user].submission_id], None, "gpu-a", status="error" if user == "bob" else "passed"
        )
    (frozen,) = (await freeze_if_due(pool, AFTER)).frozen
    assert [line.display_name for line in frozen.board.podium] == ["alice", "bob", "carol"]
    assert len(frozen.podium.failed) == 3 and await score_of(pool, runs["bob"]) == ("passed", 90.0)


async def test_a_check_waits_for_another_runner_of_the_pool_then_takes_any(pool: asyncpg.Pool):
    runs = await four_entrants(pool)  # every first run timed on gpu-a
    async with pool.acquire() as conn:
        token = await fleet.insert_join_token(conn, "h100", b"t" * 32, "tok", "test", None)
        other = await fleet.insert_runner(conn, "gpu-b", "h100", token.id, "secret")
        await fleet.register(conn, other, "http://127.0.0.1:1", 1, {})
    await freeze_if_due(pool, AFTER)
    checks = await check_jobs(pool)
    async with pool.acquire() as conn:
        assert await jobs.claim_next(conn, "h100", "owner", 30.0, "gpu-a") is None  # the first runs' runner
        lease = await jobs.claim_next(conn, "h100", "owner", 30.0, "gpu-b")
        assert lease is not None and lease.podium_check and lease.job_id in checks.values()
        # After AVOID_RUNNER_S without another runner free, any runner of the pool takes a check.
        await conn.execute(
            "UPDATE jobs SET created_at = now() - make_interval(secs => $1) WHERE podium_check AND state = 'queued'",
            AVOID_RUNNER_S + 1,
        )
        late = await jobs.claim_next(conn, "h100", "owner", 30.0, "gpu-a")
        assert late is not None and late.podium_check
    assert await score_of(pool, runs["alice"]) == ("passed", 100.0)
