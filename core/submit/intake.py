"""Taking a submission: validate, persist and enqueue in one transaction, before anyone is told "accepted".

Kept as one module: the checks, the batch's rounds and the answer to a repeated client token read the same intake
and rows in one order; split, each part would pass the others' state back and forth.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from contract.names import DTYPES, DType, Mode
from core.errors import (
    BannedError,
    IdempotencyConflictError,
    InvalidSubmissionError,
    SubmissionNotFoundError,
    UnknownProblemError,
    UnsupportedDtypeError,
    UserFacingError,
)
from core.problems import check_open, check_slug, shown, unknown_problem
from core.ratelimit import refusal
from core.settings import MODES, RateLimit, RateLimitSettings
from core.store import jobs, ratelimits, submissions, users
from core.store.pool import Conn, generic_plans
from core.store.problems import ProblemVersion
from core.submit.distributed import check_world_size
from core.submit.uploads import Upload
from problems.registry import canonical_slug

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
    upload: Upload
    """The file, checked and decoded once where it came in (`core.submit.uploads.check_upload`)."""
    gpu_type: str
    dtype: DType = "float32"
    mode: Mode = "benchmark"
    client_token: str | None = None
    profile_case: int | None = None
    """Mode `profile`: the test case to profile, by index from 0; None lets the runner take the largest."""
    world_size: int = 1
    """The ranks to run on: 1 for a single-device problem, one of a distributed problem's world sizes; `gpu_type`
    is then the pool's rank pool (`contract.names.rank_pool`: `cpux2`)."""


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


def parse_mode(text: str) -> Mode:
    """The mode a front end's text names; InvalidSubmissionError lists the modes."""
    for mode in MODES:
        if text == mode:
            return mode
    raise InvalidSubmissionError(f"`{text}` is not a mode; choose one of {', '.join(MODES)}.")


def parse_dtype(text: str) -> DType:
    """The dtype a front end's text names; UnsupportedDtypeError lists the dtypes."""
    for dtype in DTYPES:
        if text == dtype:
            return dtype
    raise UnsupportedDtypeError(f"`{text}` is not a dtype; choose one of {', '.join(DTYPES)}.")


def validate_options(request: SubmitRequest) -> None:
    """Check the options that need no database (the upload was checked where it came in); raise a
    UserFacingError that says what to fix. Mode and dtype are typed from the edge on; they are read here once
    more, for a caller that built its request from text."""
    check_slug(request.problem_slug)
    parse_mode(request.mode)
    parse_dtype(request.dtype)
    if not _GPU_TYPE.match(request.gpu_type):
        raise InvalidSubmissionError(
            f"`{request.gpu_type}` is not a GPU type name (lower-case letters, digits, '.', '_' or '-')."
        )
    _check_profile_options(request)
    check_world_size(request.problem_slug, request.world_size, request.upload.language, request.mode)


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


@dataclass(frozen=True)
class _Checked:
    """A request past the checks, ready to store (index: its place in the batch)."""

    index: int
    request: SubmitRequest
    row: submissions.NewRow
    data_type: str
    problem: ProblemVersion
    in_contest: bool


# What taking one request of a batch ended in: its receipt, or the error its caller gets (a UserFacingError that says
# what to fix, or an internal failure of its own statement).
SubmitOutcome = SubmitReceipt | Exception


async def persist_many(conn: Conn, requests: Sequence[SubmitRequest], limits: RateLimitSettings) -> list[SubmitOutcome]:
    """Check and store each validated request; the outcomes are in the requests' order.

    The checks of all the requests are one statement; their submissions are stored by one statement a round, each
    round one request of each user (a user's requests take tokens of one bucket in turn), all of a round or none;
    then the places of the round's new jobs are read by one statement (`jobs.places_and_wake`). A request that fails
    the checks fails alone, and so does one whose row the store refuses: that round is stored again a request at a
    time. An error of the connection itself is raised, for every request of the batch."""
    async with generic_plans(conn):
        return await _persisted(conn, requests, limits)


async def _persisted(conn: Conn, requests: Sequence[SubmitRequest], limits: RateLimitSettings) -> list[SubmitOutcome]:
    outcomes: list[SubmitOutcome | None] = [None] * len(requests)
    intakes = await _intakes(conn, list(requests))
    ready: list[_Checked] = []
    for index, (request, intake) in enumerate(zip(requests, intakes, strict=True)):
        try:
            checked = await _checked(conn, index, request, intake, limits)
        except UserFacingError as error:
            outcomes[index] = error
            continue
        if isinstance(checked, SubmitReceipt):
            outcomes[index] = checked
        else:
            ready.append(checked)
    while ready:
        round_, ready = _one_a_user(ready)
        for checked, outcome in zip(round_, await _stored(conn, round_, limits), strict=True):
            outcomes[checked.index] = outcome
    assert all(outcome is not None for outcome in outcomes)
    return [outcome for outcome in outcomes if outcome is not None]


async def _intakes(conn: Conn, requests: Sequence[SubmitRequest]) -> list[submissions.Intake]:
    """Each request's intake; a former slug (`matmul`) names the renamed problem, and a store not yet synced still
    has it under the old one, so a renamed slug not found is read again as sent."""
    intakes = await submissions.intake_many(conn, [_intake_key(r, canonical_slug(r.problem_slug)) for r in requests])
    again = [
        i
        for i, (r, intake) in enumerate(zip(requests, intakes, strict=True))
        if intake.problem is None and canonical_slug(r.problem_slug) != r.problem_slug
    ]
    if again:
        found = await submissions.intake_many(conn, [_intake_key(requests[i], requests[i].problem_slug) for i in again])
        for i, intake in zip(again, found, strict=True):
            intakes[i] = intake
    return intakes


def _intake_key(request: SubmitRequest, slug: str) -> submissions.IntakeKey:
    return submissions.IntakeKey(request.user_external_id, slug, request.client_token, request.gpu_type, request.dtype)


async def _checked(
    conn: Conn,
    index: int,
    request: SubmitRequest,
    intake: submissions.Intake,
    limits: RateLimitSettings,
) -> _Checked | SubmitReceipt:
    """The request ready to store, or the receipt of the earlier submission with its token; raises the
    UserFacingError that refuses it."""
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
        earlier = await submissions.get_submission(conn, intake.earlier_id)
        return await _duplicate(conn, user_id, earlier, request, data_type, problem, intake.in_contest)
    new = submissions.NewSubmission(
        user_id=user_id,
        problem_id=problem.problem_id,
        problem_version=problem.version,
        source_sha256=submissions.source_hash(request.upload.source),
        file_name=request.upload.file_name,
        language=request.upload.language,
        dtype=request.dtype,
        mode=request.mode,
        gpu_type=request.gpu_type,
        client_token=request.client_token,
        profile_case=request.profile_case,
        world_size=request.world_size,
    )
    bucket, limit = _bucket(request.mode, intake, limits)
    row = submissions.NewRow(new, request.upload.source, bucket, limit.burst, limit.per_hour)
    return _Checked(index, request, row, data_type, problem, intake.in_contest)


def _one_a_user(ready: list[_Checked]) -> tuple[list[_Checked], list[_Checked]]:
    """The first request of each user, and the rest (in order), for a later round."""
    seen: set[int] = set()
    first, rest = [], []
    for checked in ready:
        user_id = checked.row.submission.user_id
        (rest if user_id in seen else first).append(checked)
        seen.add(user_id)
    return first, rest


async def _stored(conn: Conn, round_: list[_Checked], limits: RateLimitSettings) -> list[SubmitOutcome]:
    try:
        created = await submissions.create_many(conn, [checked.row for checked in round_])
    except asyncpg.PostgresError:
        if len(round_) == 1:
            raise
        # The statement stored none of them; one row the store refused must not fail the others.
        log.warning("a round of %d submissions failed together; storing each alone", len(round_), exc_info=True)
        return [outcome for checked in round_ for outcome in await _stored_alone(conn, checked, limits)]
    new = [(c, made, made.job_id) for c, made in zip(round_, created, strict=True) if made.job_id is not None]
    places = await jobs.places_and_wake(conn, [(job_id, c.request.gpu_type) for c, _, job_id in new])
    receipts = {c.index: _receipt(c, made, place) for (c, made, _), place in zip(new, places, strict=True)}
    return [
        receipts.get(checked.index) or await _not_stored(conn, checked, made, limits)
        for checked, made in zip(round_, created, strict=True)
    ]


async def _stored_alone(conn: Conn, checked: _Checked, limits: RateLimitSettings) -> list[SubmitOutcome]:
    try:
        return await _stored(conn, [checked], limits)
    except asyncpg.PostgresError as error:
        return [error]


def _receipt(checked: _Checked, created: submissions.Created, place: int) -> SubmitReceipt:
    assert created.submission_id is not None and created.job_id is not None
    # Place 0: a dispatcher took the job between the two statements; it is the next to run, not a repeat (0).
    return SubmitReceipt(
        created.submission_id,
        created.job_id,
        checked.row.submission.user_id,
        max(place, 1),
        False,
        checked.data_type,
        checked.problem.problem_id,
        checked.problem.version,
        checked.in_contest,
    )


async def _not_stored(
    conn: Conn, checked: _Checked, created: submissions.Created, limits: RateLimitSettings
) -> SubmitOutcome:
    """The outcome of a request its round did not store: refused by its rate limit, or a repeat of its token."""
    request, row = checked.request, checked.row
    user_id = row.submission.user_id
    if not created.allowed:
        limit = RateLimit(burst=row.burst, per_hour=row.per_hour)
        return await refusal(conn, user_id, request.mode, limits, bucket=row.bucket, limit=limit)
    # A retry with the same token committed between our intake and our insert: hand back its submission, and return
    # the rate-limit token this attempt took.
    await ratelimits.refund(conn, user_id, row.bucket, row.burst)
    assert request.client_token is not None
    earlier = await submissions.find_by_token(conn, user_id, request.client_token)
    assert earlier is not None, "ON CONFLICT waited for the other insert to commit"
    try:
        return await _duplicate(conn, user_id, earlier, request, checked.data_type, checked.problem, checked.in_contest)
    except IdempotencyConflictError as error:
        return error


def differences(earlier: submissions.Submission, request: SubmitRequest, problem_id: int) -> list[str]:
    """What a request under an earlier submission's client token sends otherwise than that submission did."""
    sent = {
        "problem": (earlier.problem_id, problem_id),
        "source": (bytes(earlier.source_sha256), submissions.source_hash(request.upload.source)),
        "file name": (earlier.file_name, request.upload.file_name),
        "dtype": (earlier.dtype, request.dtype),
        "mode": (earlier.mode, request.mode),
        "gpu": (earlier.gpu_type, request.gpu_type),
        "profile_case": (earlier.profile_case, request.profile_case),
        "world_size": (earlier.world_size, request.world_size),
    }
    return [name for name, (before, now) in sent.items() if before != now]


async def _duplicate(
    conn: Conn,
    user_id: int,
    earlier: submissions.Submission | None,
    request: SubmitRequest,
    data_type: str,
    problem: ProblemVersion,
    in_contest: bool,
) -> SubmitReceipt:
    """The receipt of the earlier submission a repeated client token names; IdempotencyConflictError when the
    request is not that submission again (the IETF idempotency-key draft's 409: a reused key with another body)."""
    assert earlier is not None, "a client token names a stored submission"
    changed = differences(earlier, request, problem.problem_id)
    if changed:
        raise IdempotencyConflictError(
            f"This idempotency key already names submission #{earlier.id}, which was sent with another "
            f"{', '.join(changed)}. Send a new key for a new submission, or the same request to read #{earlier.id} "
            "again."
        )
    history = await jobs.jobs_of(conn, earlier.id)
    return SubmitReceipt(
        earlier.id,
        history[-1].id,
        user_id,
        queue_position=0,
        duplicate=True,
        data_type=data_type,
        problem_id=problem.problem_id,
        problem_version=earlier.problem_version,
        in_contest=in_contest,
    )


async def submit(pool: asyncpg.Pool, request: SubmitRequest, limits: RateLimitSettings) -> SubmitReceipt:
    """Validate, then store the submission and its queued job atomically, before the caller answers anyone.

    The checks (problem open, dtype, ban, an earlier submission with this token) read the store first; then
    one statement, and so one transaction, takes a rate-limit token and writes the source, the submission and
    its queued job: all of them or none; a third reads the job's place and wakes the dispatchers. Three round
    trips, each of bounded cost however long the queue. `core.submit.batch` takes concurrent requests through the
    same statements together.

    Raises a UserFacingError (bad file, unknown or disabled problem, dtype, ban, rate limit) and stores nothing.
    The receipt's queue position is the job's place in the fair order on its GPU type, 1 for the next to run,
    at most jobs.PLACE_CAP (0 for a repeat).
    """
    validate_options(request)
    async with pool.acquire() as conn:
        [outcome] = await persist_many(conn, [request], limits)
    return receipt_or_raise(request, outcome)


def receipt_or_raise(request: SubmitRequest, outcome: SubmitOutcome) -> SubmitReceipt:
    """The request's receipt, logged; or its error, raised."""
    if isinstance(outcome, Exception):
        raise outcome
    log.info(
        "submission %d (job %d) by user %d: %s %s %s on %s, queue position %d%s",
        outcome.submission_id,
        outcome.job_id,
        outcome.user_id,
        request.problem_slug,
        request.dtype,
        request.mode,
        request.gpu_type,
        outcome.queue_position,
        " (duplicate token)" if outcome.duplicate else "",
    )
    return outcome


async def get_submission(conn: Conn, submission_id: int) -> submissions.Submission:
    found = await submissions.get_submission(conn, submission_id)
    if found is None:
        raise SubmissionNotFoundError(f"There is no submission #{submission_id}; check the number and retry.")
    return found
