"""Taking a submission: validate, persist and enqueue in one transaction, before anyone is told "accepted"."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import asyncpg

from core.errors import (
    BannedError,
    InvalidSubmissionError,
    SubmissionNotFoundError,
    UnknownProblemError,
    UnsupportedDtypeError,
)
from core.problems import check_open, check_slug, shown, unknown_problem
from core.ratelimit import refusal
from core.settings import MODES, RateLimit, RateLimitSettings
from core.store import jobs, ratelimits, submissions, users
from core.store.pool import Conn
from core.store.problems import ProblemVersion
from core.uploads import Upload, check_upload
from problems.registry import canonical_slug
from runner.names import DTYPES

log = logging.getLogger(__name__)

_GPU_TYPE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
# The store's column is a 4-byte integer. The real range depends on the problem and the device (a module stored
# in the database has cases only a runner can generate), so the runner checks that.
_MAX_CASE_INDEX = 2**31 - 1


@dataclass(frozen=True)
class SubmitRequest:
    """One submission as a caller (a Discord command, the CLI) hands it over.

    `client_token` is the caller's idempotency key, e.g. the Discord interaction id: submitting again with the
    same token returns the first submission instead of storing a second.
    """

    user_external_id: str
    user_name: str
    problem_slug: str
    file_name: str
    data: bytes
    gpu_type: str
    dtype: str = "float32"
    mode: str = "benchmark"
    client_token: str | None = None
    profile_case: int | None = None
    """Mode `profile`: the test case to profile, by index from 0; None lets the runner take the largest."""


@dataclass(frozen=True)
class SubmitReceipt:
    submission_id: int
    job_id: int
    user_id: int
    queue_position: int
    duplicate: bool
    # What the submission's dtype reads as for its problem: `uint32` for poly-multiply-ff's float32.
    data_type: str = ""
    # The problem version it was stored at, and whether some contest holds the problem (what a ranked run may count
    # for): read with the checks, so that the receipt's rank and contest line need no second look-up of either.
    problem_id: int = 0
    problem_version: int = 0
    in_contest: bool = False


def validate_options(request: SubmitRequest) -> Upload:
    """Check everything that needs no database; raise a UserFacingError that says what to fix."""
    check_slug(request.problem_slug)
    if request.mode not in MODES:
        raise InvalidSubmissionError(f"`{request.mode}` is not a mode; choose one of {', '.join(MODES)}.")
    if request.dtype not in DTYPES:
        raise UnsupportedDtypeError(f"`{request.dtype}` is not a dtype; choose one of {', '.join(DTYPES)}.")
    if not _GPU_TYPE.match(request.gpu_type):
        raise InvalidSubmissionError(
            f"`{request.gpu_type}` is not a GPU type name (lower-case letters, digits, '.', '_' or '-')."
        )
    _check_profile_options(request)
    return check_upload(request.file_name, request.data)


def _check_profile_options(request: SubmitRequest) -> None:
    case = request.profile_case
    if case is not None and request.mode != "profile":
        raise InvalidSubmissionError(
            f"A profile case only applies to mode `profile`; submit with mode `profile` to profile case {case}, "
            f"or leave the case out for mode `{request.mode}`."
        )
    if case is not None and not 0 <= case <= _MAX_CASE_INDEX:
        raise InvalidSubmissionError(
            f"`{case}` is not a test case index; cases are numbered from 0, in the order the problem lists them."
        )
    if request.mode == "profile" and request.gpu_type == "cpu":
        # Refused here rather than by the runner: the submission would take a profile token and wait in the queue
        # only to be told `profiler_unavailable`.
        raise InvalidSubmissionError(
            "Profiling needs Nsight Compute on a GPU, and `cpu` runners have none; choose a GPU type, or use mode "
            "`benchmark` on the CPU."
        )


def _bucket(mode: str, intake: submissions.Intake, limits: RateLimitSettings) -> tuple[str, RateLimit]:
    """The rate-limit bucket a submission takes its token from, and that bucket's limit: a running contest's own
    (`contest:<id>`) for a ranked run it counts, else the mode's."""
    if mode == "ranked" and intake.contest_limit is not None:
        contest_id, burst, per_hour = intake.contest_limit
        return f"contest:{contest_id}", RateLimit(burst=burst, per_hour=per_hour)
    return mode, limits.for_mode(mode)


async def _persist(conn: Conn, request: SubmitRequest, upload: Upload, limits: RateLimitSettings) -> SubmitReceipt:
    user, token = request.user_external_id, request.client_token
    # A former slug (`matmul`) names the renamed problem; a store not yet synced still has it under the old one.
    renamed = canonical_slug(request.problem_slug)
    target = (request.gpu_type, request.dtype)
    intake = await submissions.intake(conn, user, renamed, token, *target)
    if intake.problem is None and renamed != request.problem_slug:
        intake = await submissions.intake(conn, user, request.problem_slug, token, *target)
    if intake.hidden:
        # As if it did not exist, with no "did you mean" that would name it: a contest reveals it at its start.
        raise UnknownProblemError(f"There is no problem called `{shown(request.problem_slug)}`.")
    if intake.problem is None:
        raise await unknown_problem(conn, request.problem_slug)
    problem = check_open(intake.problem, request.dtype)
    if intake.banned:
        raise BannedError("You are banned from submitting. Ask a moderator if you think this is a mistake.")
    user_id = intake.user_id
    if user_id is None or intake.display_name != request.user_name:
        user_id = (await users.ensure_user(conn, request.user_external_id, request.user_name)).id
    data_type = problem.data_type(request.dtype)
    if intake.earlier_id is not None:
        return await _duplicate(conn, user_id, intake.earlier_id, data_type, problem, intake.in_contest)
    new = submissions.NewSubmission(
        user_id=user_id,
        problem_id=problem.problem_id,
        problem_version=problem.version,
        source_sha256=submissions.source_hash(upload.source),
        file_name=upload.file_name,
        language=upload.language,
        dtype=request.dtype,
        mode=request.mode,
        gpu_type=request.gpu_type,
        client_token=request.client_token,
        profile_case=request.profile_case,
    )
    bucket, limit = _bucket(request.mode, intake, limits)
    created = await submissions.create(conn, new, upload.source, limit.burst, limit.per_hour, bucket)
    if not created.allowed:
        raise await refusal(conn, user_id, request.mode, limits, bucket=bucket, limit=limit)
    if created.submission_id is None or created.job_id is None:
        # A retry with the same token committed between our intake and our insert: hand back its submission,
        # and return the rate-limit token this attempt took.
        await ratelimits.refund(conn, user_id, bucket, limit.burst)
        return await _read_duplicate(conn, user_id, request, data_type, problem, intake.in_contest)
    place = await jobs.place_and_wake(conn, created.job_id, request.gpu_type)
    # Place 0: a dispatcher took the job between the two statements; it is the next to run, not a repeat (0).
    return SubmitReceipt(
        created.submission_id,
        created.job_id,
        user_id,
        max(place, 1),
        False,
        data_type,
        problem.problem_id,
        problem.version,
        intake.in_contest,
    )


async def _duplicate(
    conn: Conn, user_id: int, submission_id: int, data_type: str, problem: ProblemVersion, in_contest: bool
) -> SubmitReceipt:
    history = await jobs.jobs_of(conn, submission_id)
    earlier = await submissions.get_submission(conn, submission_id)
    version = earlier.problem_version if earlier is not None else problem.version
    return SubmitReceipt(
        submission_id,
        history[-1].id,
        user_id,
        queue_position=0,
        duplicate=True,
        data_type=data_type,
        problem_id=problem.problem_id,
        problem_version=version,
        in_contest=in_contest,
    )


async def submit(pool: asyncpg.Pool, request: SubmitRequest, limits: RateLimitSettings) -> SubmitReceipt:
    """Validate, then store the submission and its queued job atomically, before the caller answers anyone.

    The checks (problem open, dtype, ban, an earlier submission with this token) read the store first; then
    one statement, and so one transaction, takes a rate-limit token and writes the source, the submission and
    its queued job: all of them or none; a third reads the job's place and wakes the dispatchers. Three round
    trips, each of bounded cost however long the queue, which is what lets a small server take a thousand
    submissions a second.

    Raises a UserFacingError (bad file, unknown or disabled problem, dtype, ban, rate limit) and stores nothing.
    The receipt's queue position is the job's place in the fair order on its GPU type, 1 for the next to run,
    at most jobs.PLACE_CAP (0 for a repeat).
    """
    upload = validate_options(request)
    async with pool.acquire() as conn:
        receipt = await _persist(conn, request, upload, limits)
    log.info(
        "submission %d (job %d) by user %d: %s %s %s on %s, queue position %d%s",
        receipt.submission_id,
        receipt.job_id,
        receipt.user_id,
        request.problem_slug,
        request.dtype,
        request.mode,
        request.gpu_type,
        receipt.queue_position,
        " (duplicate token)" if receipt.duplicate else "",
    )
    return receipt


async def _read_duplicate(
    conn: Conn, user_id: int, request: SubmitRequest, data_type: str, problem: ProblemVersion, in_contest: bool
) -> SubmitReceipt:
    assert request.client_token is not None
    earlier = await submissions.find_by_token(conn, user_id, request.client_token)
    assert earlier is not None, "ON CONFLICT waited for the other insert to commit"
    return await _duplicate(conn, user_id, earlier.id, data_type, problem, in_contest)


async def get_submission(conn: Conn, submission_id: int) -> submissions.Submission:
    found = await submissions.get_submission(conn, submission_id)
    if found is None:
        raise SubmissionNotFoundError(f"There is no submission #{submission_id}; check the number and retry.")
    return found
