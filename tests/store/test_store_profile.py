"""Mode `profile` in the core and the store: its case reaches the runner and survives restarts and reruns, its
bucket is its own and the strictest, its report is stored per job, and it never enters a leaderboard."""

from __future__ import annotations

import base64

import asyncpg
import pytest

from contract.wire import JobRequest, KernelProfile, ProfileArtifact, ProfileReport, SubmissionResult
from core.browse import user_stats
from core.dispatch import Dispatcher, RunnerPool
from core.errors import RateLimitedError
from core.leaderboard import get_leaderboard, get_rank, list_boards
from core.moderation import ban_user, rerun_submission, unban_user
from core.results import load_result, record_result
from core.settings import MODES, RateLimitSettings, Settings
from core.store import jobs, leaderboard, profiles
from core.store.pool import create_pool
from core.submit.intake import submit
from core.submit.local import LocalSubmission, run_local_submission
from core.submit.uploads import check_upload
from tests.store.store_helpers import (
    MOD,
    ROOMY,
    VECTOR_ADD,
    ScriptedRunner,
    add_problems,
    finish,
    request,
    result_for,
    submission,
)


def _report(case_index: int = 2, artifacts: tuple[tuple[str, str], ...] = ()) -> ProfileReport:
    kernel = KernelProfile(
        name="add_kernel", signature="add_kernel(const float *, int)", duration_us=41.5, grid=(8, 1, 1)
    )
    return ProfileReport(
        case_index=case_index,
        case_name="n=16777216",
        kernels=[kernel],
        kernel_count=1,
        artifacts=[ProfileArtifact(name=name, data_b64=data) for name, data in artifacts],
    )


def _profiled(spec: jobs.JobSpec | JobRequest, score: float | None = 900.0, **report: object) -> SubmissionResult:
    """A passed profile run that also timed its case: a score it would rank with, were it ranked."""
    return result_for(spec, score).model_copy(update={"profile": _report(**report)})  # type: ignore[arg-type]


async def _dispatch_once(pool: asyncpg.Pool, settings: Settings) -> list[JobRequest]:
    """Run every queued job once on a scripted h100 runner; the requests it was sent."""
    sent: list[JobRequest] = []

    async def profiles_it(_key: str, req: JobRequest) -> SubmissionResult:
        sent.append(req)
        return _profiled(req)

    dispatcher = Dispatcher(pool, RunnerPool([ScriptedRunner("h100-box", profiles_it)]), settings.dispatch)
    while await dispatcher.dispatch_ready():
        await dispatcher.wait_idle()
    return sent


async def test_the_profile_case_reaches_the_runner_after_a_restart_and_again_on_a_rerun(
    pool: asyncpg.Pool, db_dsn: str, settings: Settings
):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="profile", profile_case=2), ROOMY)
    largest = await submit(pool, request("bob", mode="profile"), ROOMY)
    await pool.close()  # the process stops with both jobs queued

    async with create_pool(db_dsn, min_size=1, max_size=4) as restarted:
        sent = await _dispatch_once(restarted, settings)
        assert [(r.submission_id, r.mode, r.profile_case) for r in sent] == [
            (str(receipt.submission_id), "profile", 2),
            (str(largest.submission_id), "profile", None),  # the runner picks the largest case
        ]
        await rerun_submission(restarted, MOD, receipt.submission_id, "profiler upgraded")
        rerun = await _dispatch_once(restarted, settings)
        assert [(r.submission_id, r.profile_case) for r in rerun] == [(str(receipt.submission_id), 2)]


class OwnedScriptedRunner(ScriptedRunner):
    async def aclose(self) -> None:
        pass


async def test_a_local_profile_submission_carries_its_case_to_the_runner(pool: asyncpg.Pool, settings: Settings):
    sent: list[JobRequest] = []

    async def profiles_it(_key: str, req: JobRequest) -> SubmissionResult:
        sent.append(req)
        return _profiled(req, case_index=4)

    local = LocalSubmission(
        VECTOR_ADD,
        check_upload("solution.py", b"def solution(a, b, c, n):\n    pass\n"),
        mode="profile",
        profile_case=4,
    )
    runner = OwnedScriptedRunner("local", profiles_it)
    submission_id, result = await run_local_submission(pool, settings, local, runner)
    assert [(r.mode, r.profile_case) for r in sent] == [("profile", 4)]
    assert result.profile is not None and result.profile.case_index == 4
    assert (await submission(pool, submission_id)).profile_case == 4


async def test_profile_submissions_have_their_own_bucket_two_at_once(pool: asyncpg.Pool):
    await add_problems(pool)
    limits = RateLimitSettings()
    for _ in range(2):
        await submit(pool, request("alice", mode="profile"), limits)
    with pytest.raises(RateLimitedError, match=r"your profile submissions for now \(2 at once, 6 an hour\)") as refused:
        await submit(pool, request("alice", mode="profile"), limits)
    # The wait is at most one token's interval (10 minutes), shorter by whatever time the test itself took.
    assert 0 < refused.value.retry_after_s <= 3600 / limits.profile_per_hour
    # The other modes' buckets are untouched.
    await submit(pool, request("alice", mode="ranked"), limits)
    await submit(pool, request("alice", mode="benchmark"), limits)


def test_every_mode_has_a_bucket_and_profiles_by_default_the_strictest():
    limits = RateLimitSettings()
    buckets = {mode: limits.for_mode(mode) for mode in MODES}
    profile = buckets.pop("profile")
    assert (profile.burst, profile.per_hour) == (2, 6.0)
    assert all(profile.burst < b.burst and profile.per_hour < b.per_hour for b in buckets.values())


def test_the_profile_bucket_is_set_from_its_own_variables(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ARENA_RATE_PROFILE_BURST", "1")
    monkeypatch.setenv("ARENA_RATE_PROFILE_PER_HOUR", "0.5")
    assert RateLimitSettings().for_mode("profile").model_dump() == {"burst": 1, "per_hour": 0.5}


async def test_a_passed_profile_submission_with_a_score_and_a_profile_is_on_no_board(pool: asyncpg.Pool):
    await add_problems(pool)
    ranked = await submit(pool, request("bob"), ROOMY)
    await finish(pool, ranked, 10.0)
    profiled = await submit(pool, request("alice", mode="profile"), ROOMY)
    lease = await jobs.claim_job(pool, profiled.job_id, "test-owner", 30.0, "test-runner")
    spec = await jobs.job_spec(pool, profiled.job_id)
    assert lease is not None and spec is not None
    assert await record_result(pool, lease, _profiled(spec, 900.0), "test-runner")
    sub = await submission(pool, profiled.submission_id)
    assert (sub.status, sub.score, sub.method) == ("passed", 900.0, "cpu")  # as eligible as a result can be

    async def boards_hold_only_bob() -> None:
        rows = await pool.fetch("SELECT DISTINCT user_id FROM leaderboard_entries")
        assert [r["user_id"] for r in rows] == [(await submission(pool, ranked.submission_id)).user_id]
        page = await get_leaderboard(pool, "vector_add", "h100")
        assert [r.display_name for r in page.rows] == ["bob"]
        for method in (None, "cpu", "arena", "seed"):
            assert await get_rank(pool, "vector_add", "h100", "float32", "discord:alice", method=method) is None
        _, boards = await list_boards(pool, "vector_add")
        assert [(b.gpu_type, b.entries) for b in boards] == [("h100", 1)]
        assert (await user_stats(pool, "discord:alice", "alice", ROOMY)).standings == []

    await boards_hold_only_bob()
    # Every other path that recomputes boards leaves it off too: a ban and unban, a rebuild, a rerun.
    await ban_user(pool, MOD, "discord:alice", "test")
    await unban_user(pool, MOD, "discord:alice")
    await boards_hold_only_bob()
    async with pool.acquire() as conn, conn.transaction():
        await leaderboard.rebuild(conn)
    await boards_hold_only_bob()
    rerun = await rerun_submission(pool, MOD, profiled.submission_id, "again")
    await finish(pool, rerun, 950.0)
    await boards_hold_only_bob()


async def test_a_rerun_stores_its_own_profile_and_the_earlier_one_stays(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="profile", profile_case=1), ROOMY)
    first = await jobs.claim_job(pool, receipt.job_id, "test-owner", 30.0, "test-runner")
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert first is not None and spec is not None
    await record_result(pool, first, _profiled(spec, case_index=1), "test-runner")
    job_id = await rerun_submission(pool, MOD, receipt.submission_id, "new driver")
    second = await jobs.claim_job(pool, job_id, "test-owner", 30.0, "test-runner")
    assert second is not None
    rerun = _profiled(spec).model_copy(update={"profile": _report(1).model_copy(update={"tool": "ncu 2026.1"})})
    await record_result(pool, second, rerun, "test-runner")

    latest = await load_result(pool, await submission(pool, receipt.submission_id))
    assert latest.profile is not None and latest.profile.tool == "ncu 2026.1"
    earlier = await profiles.get_profile(pool, receipt.job_id)
    assert earlier is not None and earlier.report["tool"] == ""


async def test_the_figures_can_be_read_without_the_files(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="profile"), ROOMY)
    lease = await jobs.claim_job(pool, receipt.job_id, "test-owner", 30.0, "test-runner")
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert lease is not None and spec is not None
    files = (("report.txt", base64.b64encode(b"Section: GPU Speed Of Light").decode()),)
    await record_result(pool, lease, _profiled(spec, artifacts=files), "test-runner")

    whole = await profiles.get_profile(pool, receipt.job_id)
    figures = await profiles.get_profile(pool, receipt.job_id, with_artifacts=False)
    assert whole is not None and figures is not None
    assert whole.artifacts == (profiles.StoredArtifact("report.txt", b"Section: GPU Speed Of Light"),)
    assert figures.artifacts == () and figures.report == whole.report
    assert await profiles.get_profile(pool, receipt.job_id + 1000) is None


async def test_a_file_that_is_not_base64_is_left_out_and_the_report_says_so(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="profile"), ROOMY)
    lease = await jobs.claim_job(pool, receipt.job_id, "test-owner", 30.0, "test-runner")
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert lease is not None and spec is not None
    good = base64.b64encode(b"\x00\x01binary").decode()
    reported = _profiled(spec, artifacts=(("kernel.sass", "not base64 at all!"), ("profile.ncu-rep", good)))
    assert await record_result(pool, lease, reported, "test-runner")

    stored = (await load_result(pool, await submission(pool, receipt.submission_id))).profile
    assert stored is not None
    assert [(a.name, a.data_b64) for a in stored.artifacts] == [("profile.ncu-rep", good)]
    assert stored.notes == ["The file `kernel.sass` came from the runner unreadable and was not kept."]


async def test_the_store_refuses_a_profile_case_on_a_submission_of_another_mode(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="ranked"), ROOMY)
    with pytest.raises(asyncpg.CheckViolationError, match="submissions_profile_case_mode"):
        await pool.execute("UPDATE submissions SET profile_case = 0 WHERE id = $1", receipt.submission_id)
    profiled = await submit(pool, request("alice", mode="profile"), ROOMY)
    with pytest.raises(asyncpg.CheckViolationError):
        await pool.execute("UPDATE submissions SET profile_case = -1 WHERE id = $1", profiled.submission_id)
