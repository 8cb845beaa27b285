"""Recording what happened to a job, each change in one transaction and fenced by the job's lease.

A change made under a lease that is no longer current (another dispatcher took the job over) is refused, so
a job's result is stored exactly once however many dispatchers raced for it.

Kept as one module: every way a job ends (a result, a podium check, a requeue, a failure) is recorded here under
the same lease fence and lock order, and the result's quick path falls back on its long one; split, the two could
drift apart unseen.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import logging
import math

import asyncpg

from contract.names import SubmissionStatus
from contract.wire import (
    CaseTiming,
    ErrorInfo,
    PhaseOutput,
    ProfileArtifact,
    ProfileReport,
    SubmissionResult,
    TestOutcome,
)
from core.podium_checks import check_limit, runs_agree
from core.store import jobs, leaderboard, podium_checks, profiles, ratelimits, submissions
from core.store.jobs import Lease
from core.store.pool import Conn

log = logging.getLogger(__name__)

# Runner error codes that say the system failed, not the submission: the job ends in `error`, not `done`.
SYSTEM_ERROR_CODES = frozenset(
    {"internal", "no_gpu", "bad_request", "unknown_problem", "unsupported_dtype", "host_busy"}
)


def job_state_for(result: SubmissionResult) -> str:
    """`done` when the runner judged the submission (passed, failed, or its own fault), else `error`."""
    if result.status == "error" and result.error is not None and result.error.code in SYSTEM_ERROR_CODES:
        return "error"
    return "done"


def _score(result: SubmissionResult) -> float | None:
    score = result.score
    if result.status != "passed" or score is None or not math.isfinite(score) or score <= 0:
        return None
    return score


def _mismatch(sub: submissions.Submission, result: SubmissionResult) -> str | None:
    """Why `result` cannot be this submission's (a runner bug or a forged result), or None when it fits."""
    expected = (sub.slug, sub.problem_version, sub.dtype, sub.mode, sub.language)
    got = (result.problem_slug, result.problem_version, result.dtype, result.mode, result.language)
    if expected != got:
        return f"the runner answered for {got} but the job was {expected}"
    return None


def result_method(result: SubmissionResult) -> str | None:
    """How the run was timed, as its timings say (the runner chose it); None when it timed nothing."""
    return result.timings[0].method if result.timings else None


def stored_output(output: list[PhaseOutput]) -> tuple[dict[str, object], ...]:
    """What the solution printed, as the store keeps it: PostgreSQL's jsonb refuses the NUL character, which a
    solution may well print, so each becomes U+FFFD (as an undecodable byte already has)."""
    return tuple(
        {k: v.replace("\x00", "\ufffd") if isinstance(v, str) else v for k, v in o.model_dump(mode="json").items()}
        for o in output
    )


def _fitting_outcome(result: SubmissionResult, runner: str) -> submissions.Outcome:
    """What the result says of its submission, when it is the submission's (`_mismatch` finds nothing)."""
    mean = result.mean_gflops if result.score_metric == "gflops" else result.mean_gbps
    return submissions.Outcome(
        result.status, _score(result), mean, result.score_metric, result.device, runner, result.error,
        **_summary(result),
    )  # fmt: skip


def _summary(result: SubmissionResult) -> dict[str, object]:
    return {
        "method": result_method(result),
        "geomean_gflops": result.geomean_gflops,
        "mean_gflops": result.mean_gflops,
        "geomean_gbps": result.geomean_gbps,
        "mean_gbps": result.mean_gbps,
        "notes": tuple(result.notes),
        "phase_seconds": dict(result.phase_seconds),
        "output": stored_output(result.output),
        "protocol": result.protocol,
    }


def _outcome(sub: submissions.Submission, result: SubmissionResult, runner: str) -> submissions.Outcome:
    problem = _mismatch(sub, result)
    if problem is not None:
        log.error("submission %d: %s; recording an error", sub.id, problem)
        error = ErrorInfo(code="internal", message="The runner returned a result for another job; ask a moderator.")
        return submissions.Outcome(
            "error", None, None, result.score_metric, result.device, runner, error, **_summary(result)
        )
    return _fitting_outcome(result, runner)


async def refresh_board(conn: Conn, sub: submissions.Submission) -> None:
    """Recompute the submitter's leaderboard rows for the submission's boards, every method's (ranked only)."""
    if sub.mode == "ranked":
        group = leaderboard.BoardGroup(sub.problem_id, sub.problem_version, sub.gpu_type, sub.dtype)
        await leaderboard.refresh_user(conn, group, sub.user_id)


def _stored_profile(job_id: int, report: ProfileReport) -> profiles.StoredProfile:
    """The report as the store keeps it: its JSON, and its files as bytes.

    A file that is not base64 is left out, and a note in the report says so: one bad file must not cost the
    job its whole result, as an error raised here inside the recording transaction would.
    """
    kept: list[profiles.StoredArtifact] = []
    notes = list(report.notes)
    for artifact in report.artifacts:
        try:
            kept.append(profiles.StoredArtifact(artifact.name, base64.b64decode(artifact.data_b64, validate=True)))
        except binascii.Error:
            log.error("job %d: profile file %r is not base64; not stored", job_id, artifact.name)
            notes.append(f"The file `{artifact.name}` came from the runner unreadable and was not kept.")
    body = report.model_dump(mode="json", exclude={"artifacts"})
    body["notes"] = notes
    return profiles.StoredProfile(body, tuple(kept))


# Error codes that are the service's failing, not the submission's: they cost the user no quota.
SERVICE_FAULTS = frozenset({"internal", "host_busy"})


async def record_result(
    pool: asyncpg.Pool, lease: Lease, result: SubmissionResult, runner: str, *, started_s: float | None = None
) -> bool:
    """Store a finished job: per-case rows, its profile, the submission's verdict and score, and its leaderboard
    rows (ranked submissions only: a profile never enters a board). `started_s`: how long ago the runner started a
    job that was not marked running (`mark_running`); its start and its run are stored with the result.

    Returns False, storing nothing, when `lease` no longer holds the job.
    """
    if lease.podium_check:
        return await _record_check(pool, lease, result, runner)
    note = f"{result.status}: {result.error.code}" if result.error else result.status
    fitting = jobs.FittingResult(
        state=job_state_for(result),  # type: ignore[arg-type]
        note=note,
        answers_for=(result.problem_slug, result.problem_version, result.dtype, result.mode, result.language),
        outcome=_fitting_outcome(result, runner),
        # The runner broke or its host was too busy to judge: the user's run taught them nothing.
        give_back=result.error is not None and result.error.code in SERVICE_FAULTS,
        tests=result.tests,
        timings=result.timings,
        started_s=started_s,
    )
    # A ranked result refreshes its boards and a profile stores its report: more statements, so a transaction.
    # Anything else is one statement (`finish_with_result`), its own transaction.
    more = result.mode == "ranked" or result.profile is not None
    async with pool.acquire() as conn:
        if not more:
            sub = await jobs.finish_with_result(conn, lease, fitting)
            if sub is not None:
                _log_recorded(lease, sub, fitting)
                return True
        async with conn.transaction():
            sub = await jobs.finish_with_result(conn, lease, fitting) if more else None
            if sub is None:
                # The lease is lost, or the result answers for another job: the long way tells which.
                recorded = await _record_the_long_way(conn, lease, result, runner, fitting)
                if recorded is None:
                    return False
                sub, fitting = recorded
            if result.profile is not None:
                stored = _stored_profile(lease.job_id, result.profile)
                await profiles.insert_profile(conn, lease.job_id, stored.report, stored.artifacts)
            await refresh_board(conn, sub)
    _log_recorded(lease, sub, fitting)
    return True


def _log_recorded(lease: Lease, sub: submissions.Submission, fitting: jobs.FittingResult) -> None:
    # Debug: a line per job is too many at a fleet's rate (core.dispatch.job_run says the same of its own).
    log.debug(
        "job %d of submission %d %s: %s, score %s",
        lease.job_id,
        sub.id,
        fitting.state,
        fitting.outcome.status,
        fitting.outcome.score,
    )


async def _record_the_long_way(
    conn: asyncpg.Connection, lease: Lease, result: SubmissionResult, runner: str, fitting: jobs.FittingResult
) -> tuple[submissions.Submission, jobs.FittingResult] | None:
    """Inside the caller's transaction: the result stored a statement at a time, whichever job it answers for (one
    that is not the submission's is an error of the service); None when the lease no longer holds the job."""
    if fitting.started_s is not None:
        await jobs.set_running(conn, lease, fitting.started_s)  # False when running already (or lost: seen next)
    # Lock order everywhere: the job row, then its submission's row.
    sub = await jobs.finish_with_submission(conn, lease, fitting.state, fitting.note)
    if sub is None:
        return None
    outcome = _outcome(sub, result, runner)
    await submissions.record_outcome(conn, sub.id, lease.job_id, outcome)
    if fitting.give_back:
        await ratelimits.give_back(conn, sub.user_id, sub.mode)
    await submissions.insert_case_results(conn, lease.job_id, result.tests, result.timings)
    return sub, dataclasses.replace(fitting, outcome=outcome)


CHECK_SLOWER_NOTE = (
    "A second run of this podium entry, on runner {runner}, read it {ratio:.0%} slower than its first run: past the "
    "canary threshold, so the slower run is the one on the board."
)


async def _record_check(pool: asyncpg.Pool, lease: Lease, result: SubmissionResult, runner: str) -> bool:
    """Store a podium check (core/podium_checks.py): its case rows under its own job and its verdict. The first run
    stays the submission's result unless the check read it slower than the canary threshold allows; then the
    slower run, the check, goes on the board (the honest time is the larger one)."""
    state = job_state_for(result)
    async with pool.acquire() as conn, conn.transaction():
        if not await jobs.finish(conn, lease, state, f"podium check: {result.status}"):
            return False
        await submissions.insert_case_results(conn, lease.job_id, result.tests, result.timings)
        check = await podium_checks.check_of_job(conn, lease.job_id)
        if check is None:
            log.error("job %d is a podium check of no contest; its result is kept in its case rows only", lease.job_id)
            return True
        score = _score(result)
        sub = await submissions.get_submission(conn, check.submission_id, lock=True)
        assert sub is not None
        if score is None or _mismatch(sub, result) is not None:
            verdict = "failed"
        elif runs_agree(check.first_score, score, check_limit(sub.gpu_type)):
            verdict = "agreed"
        else:
            verdict = "disagreed"
            if score < check.first_score:
                outcome = _outcome(sub, result, runner)
                note = CHECK_SLOWER_NOTE.format(runner=runner, ratio=check.first_score / score - 1)
                outcome = dataclasses.replace(outcome, notes=(*outcome.notes, note))
                await submissions.record_outcome(conn, sub.id, lease.job_id, outcome)
                await refresh_board(conn, sub)
        await podium_checks.set_verdict(conn, lease.job_id, runner, score, verdict)
    log.info(
        "podium check job %d of submission %d on %s: %s (first %.4g on %s, check %s)",
        lease.job_id,
        check.submission_id,
        runner,
        verdict,
        check.first_score,
        check.first_runner,
        score,
    )
    return True


async def mark_running(pool: asyncpg.Pool, lease: Lease, started_s: float = 0.0) -> bool:
    """The runner started `started_s` seconds ago: job and submission move to `running`. False when already
    running or lost."""
    return await jobs.set_running(pool, lease, started_s)


async def requeue_or_fail(
    pool: asyncpg.Pool, lease: Lease, reason: str, *, max_attempts: int, backoff_s: float
) -> str | None:
    """Put the job back in the queue, or mark it `failed` once it has used `max_attempts` dispatches.

    `reason` goes to the log and the job's history, never to the user: it may carry a runner's internals.
    Returns the job's new state, or None when the lease was lost (someone else holds the job now).
    """
    async with pool.acquire() as conn, conn.transaction():
        if lease.attempts < max_attempts:
            if not await jobs.requeue(conn, lease, reason, backoff_s * lease.attempts):
                return None
            if not lease.podium_check:  # a check leaves its submission's verdict alone
                await submissions.set_status(conn, lease.submission_id, "queued")
            log.warning("job %d requeued after attempt %d: %s", lease.job_id, lease.attempts, reason)
            return "queued"
        message = (
            f"The `{lease.gpu_type}` runner could not finish this job in {lease.attempts} attempts. "
            "Resubmit it, or ask a moderator to rerun it."
        )
        if not await _fail(conn, lease, reason, message):
            return None
    log.error("job %d failed after %d attempts: %s", lease.job_id, lease.attempts, reason)
    return "failed"


async def requeue_unreached(pool: asyncpg.Pool, lease: Lease, reason: str) -> bool:
    """The runner never got the job (it did not answer): back to the queue at once, this dispatch not counted.
    False when the lease was lost."""
    async with pool.acquire() as conn, conn.transaction():
        if not await jobs.requeue(conn, lease, reason, 0.0, refund=True):
            return False
        if not lease.podium_check:
            await submissions.set_status(conn, lease.submission_id, "queued")
    log.info("job %d back in the queue, attempt not counted: %s", lease.job_id, reason)
    return True


def _duration(seconds: float) -> str:
    if seconds >= 90:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:.0f} seconds"


async def fail_unreachable(pool: asyncpg.Pool, lease: Lease, waited_s: float) -> bool:
    """End a job that waited `waited_s` for a runner of its GPU type that never answered. False when the lease
    was lost."""
    message = (
        f"No `{lease.gpu_type}` runner answered for {_duration(waited_s)}, so this job was stopped. "
        "Resubmit it when the runner is back; a moderator can check it with `/mod runners`."
    )
    reason = f"no {lease.gpu_type} runner answered for {waited_s:.0f} s"
    async with pool.acquire() as conn, conn.transaction():
        if not await _fail(conn, lease, reason, message):
            return False
    log.error("job %d failed: %s", lease.job_id, reason)
    return True


async def _fail(conn: asyncpg.Connection, lease: Lease, reason: str, message: str) -> bool:
    """Inside the caller's transaction: the job `failed` for `reason` (the log's), the user told `message`. The
    failure is the service's, never the user's: the submission's rate-limit token goes back to its user."""
    if not await jobs.finish(conn, lease, "failed", reason):
        return False
    if lease.podium_check:
        # The first run stands; the freeze says that its check failed.
        await podium_checks.set_verdict(conn, lease.job_id, lease.runner, None, "failed")
        return True
    sub = await submissions.get_submission(conn, lease.submission_id, lock=True)
    assert sub is not None
    await ratelimits.give_back(conn, sub.user_id, sub.mode)
    error = ErrorInfo(code="internal", message=message)
    outcome = submissions.Outcome("error", None, None, "gflops", "unknown", lease.runner or "none", error)
    await submissions.record_outcome(conn, sub.id, lease.job_id, outcome)
    await refresh_board(conn, sub)
    return True


# -- reading a result back -------------------------------------------------------------------------------------


def _test(case: submissions.CaseResult) -> TestOutcome:
    return TestOutcome(
        index=case.idx,
        name=case.name,
        dims=list(case.dims),
        passed=bool(case.passed),
        message=case.message or "",
        details=case.details or {},
    )


# What a runner reports of a case that the store does not keep: how many measurements it took (a diagnostic of the
# run, in its live events and `--no-store` output), and a distributed run's per-rank medians (no distributed job
# reaches the store yet: `arena submit` refuses them and the dispatcher sends world size 1 only).
NOT_STORED = ("index", "dims", "measurements", "rank_runtime_median_us")


def _timing(case: submissions.CaseResult) -> CaseTiming:
    # Every column is read as stored; those added later default as the model does for rows written before them.
    fields = {f: getattr(case, f) for f in CaseTiming.model_fields if f not in NOT_STORED}
    fields["dropped_samples"] = case.dropped_samples or 0
    fields["host_waits"] = bool(case.host_waits)
    fields["host_bound"] = bool(case.host_bound)
    fields["judge_clock"] = bool(case.judge_clock)
    return CaseTiming(index=case.idx, dims=list(case.dims), **fields)


def _profile(stored: profiles.StoredProfile) -> ProfileReport:
    artifacts = [
        ProfileArtifact(name=a.name, data_b64=base64.b64encode(a.data).decode("ascii")) for a in stored.artifacts
    ]
    return ProfileReport.model_validate({**stored.report, "artifacts": artifacts})


def stored_result(
    sub: submissions.Submission, cases: list[submissions.CaseResult], profile: ProfileReport | None = None
) -> SubmissionResult:
    """The SubmissionResult of the submission's latest run, rebuilt from the store exactly as it was recorded.

    `cases` are the rows of that run's job (`submissions.case_results(conn, sub.result_job_id)`), `profile` its
    profile. The verdict is the store's: when the store overruled the runner (a result for another job), the
    status and error say so.
    """
    error = None
    if sub.error_code is not None:
        error = ErrorInfo(code=sub.error_code, message=sub.error_message or "", log=sub.error_log)
    status: SubmissionStatus = "passed" if sub.status == "passed" else "failed" if sub.status == "failed" else "error"
    return SubmissionResult(
        submission_id=str(sub.id),
        problem_slug=sub.slug,
        problem_version=sub.problem_version,
        dtype=sub.dtype,
        language=sub.language,
        mode=sub.mode,
        status=status,
        device=sub.device or "unknown",
        tests=[_test(c) for c in cases if c.kind == "test"],
        timings=[_timing(c) for c in cases if c.kind == "benchmark"],
        score_metric=sub.score_metric or "gflops",
        geomean_gflops=sub.geomean_gflops,
        mean_gflops=sub.mean_gflops,
        geomean_gbps=sub.geomean_gbps,
        mean_gbps=sub.mean_gbps,
        error=error,
        phase_seconds=sub.phase_seconds,
        notes=sub.notes,
        profile=profile,
        output=[PhaseOutput.model_validate(o) for o in sub.output],
        protocol=sub.protocol,
        world_size=sub.world_size,
    )


async def load_result(conn: Conn, sub: submissions.Submission) -> SubmissionResult:
    """`stored_result` of `sub`, reading its latest job's case rows and profile."""
    if sub.result_job_id is None:
        return stored_result(sub, [])
    cases = await submissions.case_results(conn, sub.result_job_id)
    stored = await profiles.get_profile(conn, sub.result_job_id)
    return stored_result(sub, cases, _profile(stored) if stored is not None else None)
