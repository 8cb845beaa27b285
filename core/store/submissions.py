"""Submissions, their deduplicated source text, and the per-case results of each job that evaluated them.

Kept as one module: every query of the submissions and case-result tables, as the store keeps one module per group
of tables.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from contract.errors import ErrorCode
from contract.names import DType, Language, Mode, ScoreMetric, StoredStatus
from contract.wire import CaseTiming, ErrorInfo, TestOutcome
from core.store.pool import Conn
from core.store.problems import PROBLEM_COLUMNS, ProblemVersion, problem_version
from core.store.ratelimits import take_cte


@dataclass(frozen=True)
class NewSubmission:
    user_id: int
    problem_id: int
    problem_version: int
    source_sha256: bytes
    file_name: str
    language: str
    dtype: str
    mode: str
    gpu_type: str
    client_token: str | None
    profile_case: int | None
    world_size: int = 1


@dataclass(frozen=True)
class Intake:
    """What taking a submission needs to know, read in one round trip."""

    user_id: int | None
    display_name: str | None
    problem: ProblemVersion | None
    banned: bool
    earlier_id: int | None
    # A contest not yet started hides the problem (docs/contests.md): it reads as unknown until the start.
    hidden: bool = False
    # A running contest with its own limit on ranked runs, for this problem and target: (contest id, burst, per hour).
    contest_limit: tuple[int, int, float] | None = None
    # Some contest (not cancelled) holds the problem, at any version: only then can a ranked run count for one.
    in_contest: bool = False


@dataclass(frozen=True)
class Created:
    allowed: bool
    submission_id: int | None
    job_id: int | None


@dataclass(frozen=True)
class Submission:
    id: int
    user_id: int
    problem_id: int
    problem_version: int
    slug: str
    source_sha256: bytes
    file_name: str
    # The names are typed as the store's CHECK constraints keep them (tests/store/test_names_in_sql.py).
    language: Language
    dtype: DType
    mode: Mode
    gpu_type: str
    status: StoredStatus
    score: float | None
    mean_score: float | None
    score_metric: ScoreMetric | None
    device: str | None
    runner: str | None
    error_code: ErrorCode | None
    error_message: str | None
    error_log: str | None
    result_job_id: int | None
    invalidated: bool
    client_token: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    # The latest run's summary as the runner reported it (NULL/empty before a run, or when it timed nothing).
    method: str | None
    geomean_gflops: float | None
    mean_gflops: float | None
    geomean_gbps: float | None
    mean_gbps: float | None
    notes: list[str]
    phase_seconds: dict[str, float]
    # Mode `profile`: the test case asked for (None: the largest, which the runner picks).
    profile_case: int | None
    # What the solution printed in the latest run: contract.wire.PhaseOutput objects as JSON (V018).
    output: list[dict[str, Any]] = field(default_factory=list)
    # The timing protocol's version of the latest run (V024; None before it, or when it timed nothing).
    protocol: str | None = None
    # The ranks it ran on: 1, one device; N, a distributed problem on a slot of N ranks (V027).
    world_size: int = 1


@dataclass(frozen=True)
class Outcome:
    """What a finished job says about its submission: the verdict, and the run's summary as reported."""

    status: str
    score: float | None
    mean_score: float | None
    score_metric: str
    device: str
    runner: str
    error: ErrorInfo | None
    method: str | None = None
    geomean_gflops: float | None = None
    mean_gflops: float | None = None
    geomean_gbps: float | None = None
    mean_gbps: float | None = None
    notes: tuple[str, ...] = ()
    phase_seconds: Mapping[str, float] = field(default_factory=dict)
    output: tuple[dict[str, Any], ...] = ()
    protocol: str | None = None


@dataclass(frozen=True)
class CaseResult:
    """One row of `case_results`: a test verdict (kind `test`) or a timing (kind `benchmark`), every column."""

    kind: str
    idx: int
    name: str
    dims: tuple[int, ...]
    passed: bool | None
    message: str | None
    details: dict[str, Any] | None
    method: str | None
    runtime_median_us: float | None
    runtime_mean_us: float | None
    gflops: float | None
    gflops_mean: float | None
    gbps: float | None
    flops: int | None
    bytes: int | None
    samples: int | None
    cv: float | None
    converged: bool | None
    rse: float | None
    dropped_samples: int | None
    sm_clock_mhz: float | None
    temperature_c: float | None
    measured_seconds: float | None
    wall_clock_us: float | None
    host_waits: bool | None
    host_bound: bool | None
    judge_clock: bool | None
    host_part_us: float | None


# Every field of `Submission`, read from `submissions s` and its problem `p` (a SELECT's list or a RETURNING's).
SUBMISSION_COLUMNS = """s.id, s.user_id, s.problem_id, s.problem_version, p.slug, s.source_sha256, s.file_name,
           s.language, s.dtype, s.mode, s.gpu_type, s.status, s.score, s.mean_score, s.score_metric, s.device,
           s.runner, s.error_code, s.error_message, s.error_log, s.result_job_id, s.invalidated, s.client_token,
           s.created_at, s.started_at, s.finished_at, s.method, s.geomean_gflops, s.mean_gflops, s.geomean_gbps,
           s.mean_gbps, s.notes, s.phase_seconds, s.profile_case, s.output, s.protocol, s.world_size"""
_SELECT = f"""
    SELECT {SUBMISSION_COLUMNS}
    FROM submissions s JOIN problems p ON p.id = s.problem_id
"""


def source_hash(body: str) -> bytes:
    return hashlib.sha256(body.encode("utf-8")).digest()


async def get_source(conn: Conn, sha256: bytes) -> str | None:
    value: str | None = await conn.fetchval("SELECT body FROM sources WHERE sha256 = $1", sha256)
    return value


@dataclass(frozen=True)
class IntakeKey:
    """What an intake is read for: the user, the problem's slug, the submission's token and its target."""

    external_id: str
    slug: str
    client_token: str | None
    gpu_type: str = ""
    dtype: str = ""


_INTAKE = f"""
    SELECT u.id AS user_id, u.display_name,
           EXISTS (SELECT 1 FROM bans b WHERE b.user_id = u.id AND b.lifted_at IS NULL) AS banned,
           (SELECT s.id FROM submissions s WHERE s.user_id = u.id AND s.client_token = t.client_token) AS earlier_id,
           EXISTS (SELECT 1 FROM contest_problems cp JOIN contests c ON c.id = cp.contest_id
                   WHERE cp.problem_id = p.id AND NOT cp.public_before AND c.cancelled_at IS NULL
                     AND c.starts_at > now()) AS hidden,
           EXISTS (SELECT 1 FROM contest_problems cp JOIN contests c ON c.id = cp.contest_id
                   WHERE cp.problem_id = p.id AND c.cancelled_at IS NULL) AS in_contest,
           limited.id AS contest_id, limited.ranked_burst, limited.ranked_per_hour,
           {PROBLEM_COLUMNS}
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
         WITH ORDINALITY AS t(external_id, slug, client_token, gpu_type, dtype, i)
    LEFT JOIN users u ON u.external_id = t.external_id
    LEFT JOIN problems p ON p.slug = t.slug
    LEFT JOIN problem_versions v ON v.problem_id = p.id AND v.version = p.current_version
    LEFT JOIN LATERAL (
        SELECT c.id, c.ranked_burst, c.ranked_per_hour FROM contests c
        JOIN contest_problems cp ON cp.contest_id = c.id AND cp.problem_id = p.id
                                 AND cp.problem_version = p.current_version
        JOIN contest_targets ct ON ct.contest_id = c.id AND ct.gpu_type = t.gpu_type AND ct.dtype = t.dtype
        WHERE c.ranked_burst IS NOT NULL AND c.cancelled_at IS NULL AND c.starts_at <= now() AND now() < c.ends_at
        ORDER BY c.id LIMIT 1
    ) AS limited ON true
    ORDER BY t.i
"""


async def intake_many(conn: Conn, keys: Sequence[IntakeKey]) -> list[Intake]:
    """What submitting needs to know, for each key, in one round trip: the user (if known), whether they are banned,
    their submission with this token, the problem at its current version, whether a contest hides it, and the limit
    of a running contest that counts a ranked run on it at (`gpu_type`, `dtype`)."""
    values = [(k.external_id, k.slug, k.client_token, k.gpu_type, k.dtype) for k in keys]
    rows = await conn.fetch(_INTAKE, *(list(column) for column in zip(*values, strict=True)))
    return [_intake_of(row) for row in rows]


def _intake_of(row: Mapping[str, Any]) -> Intake:
    problem = problem_version(row) if row["problem_id"] is not None else None
    limit = (row["contest_id"], row["ranked_burst"], row["ranked_per_hour"]) if row["contest_id"] else None
    return Intake(
        row["user_id"],
        row["display_name"],
        problem,
        row["banned"],
        row["earlier_id"],
        row["hidden"],
        limit,
        bool(row["in_contest"]),
    )


@dataclass(frozen=True)
class NewRow:
    """A submission to store, with its source and the rate-limit bucket it takes its token from."""

    submission: NewSubmission
    source: str
    bucket: str  # the user's bucket of the mode, or a running contest's own (`contest:<id>`)
    burst: int
    per_hour: float


# The submit statement, for several submissions of as many users: a rate-limit token each, the sources (once per
# content), the submissions and their queued jobs, all or nothing. One round trip and one commit on the busiest
# path, however many submissions arrived together (core.submit.batch). Each part writes its rows in the order of
# their keys (the users' ids, the sources' hashes; the jobs, and the waiting users' rows their trigger counts, follow
# the submissions), so that two batches with users in common lock their rows in one order: in the order they came,
# two batches could each hold a row the other waits for, until PostgreSQL broke the deadlock a second later.
_CREATE = f"""
WITH req AS (
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bytea[], $5::text[], $6::text[], $7::text[],
                         $8::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::text[], $14::float8[],
                         $15::float8[], $16::int[])
        WITH ORDINALITY AS t(user_id, problem_id, problem_version, sha256, file_name, language, dtype, mode, gpu_type,
                             client_token, profile_case, body, bucket, burst, per_hour, world_size, i)
), bucket AS ({take_cte("req")}
), ok AS (
    SELECT req.* FROM req JOIN bucket ON bucket.user_id = req.user_id
), source AS (
    INSERT INTO sources (sha256, body, size_bytes) SELECT sha256, body, octet_length(body) FROM ok ORDER BY sha256
    ON CONFLICT (sha256) DO NOTHING
), submission AS (
    INSERT INTO submissions (user_id, problem_id, problem_version, source_sha256, file_name, language, dtype,
                             mode, gpu_type, client_token, profile_case, world_size)
    SELECT user_id, problem_id, problem_version, sha256, file_name, language, dtype, mode, gpu_type, client_token,
           profile_case, world_size
    FROM ok ORDER BY user_id
    ON CONFLICT (user_id, client_token) DO NOTHING
    RETURNING id, user_id, gpu_type
), job AS (
    INSERT INTO jobs (submission_id, gpu_type) SELECT id, gpu_type FROM submission ORDER BY id
    RETURNING id, submission_id
)
SELECT bucket.user_id IS NOT NULL AS allowed, submission.id AS submission_id, job.id AS job_id
FROM req LEFT JOIN bucket ON bucket.user_id = req.user_id
LEFT JOIN submission ON submission.user_id = req.user_id LEFT JOIN job ON job.submission_id = submission.id
ORDER BY req.i
"""


def _columns(s: NewSubmission) -> tuple[Any, ...]:
    return (
        s.user_id, s.problem_id, s.problem_version, s.source_sha256, s.file_name, s.language, s.dtype, s.mode,
        s.gpu_type, s.client_token, s.profile_case,
    )  # fmt: skip


async def create_many(conn: Conn, rows: Sequence[NewRow]) -> list[Created]:
    """Take a rate-limit token and store the source, the submission and its queued job, for each row, in one
    statement; the rows' users must differ (a user's bucket takes one token a statement).

    A row's `Created.allowed` is False when its bucket was empty (nothing of it stored); its `submission_id` is None
    when this user already sent its `client_token` (a concurrent retry committed first): the token it took is to
    be given back (`ratelimits.refund`). The caller then tells the dispatchers (`jobs.places_and_wake`).
    """
    users = [row.submission.user_id for row in rows]
    if len(set(users)) != len(users):
        raise ValueError("create_many takes one submission a user; store a user's others in a later statement")
    columns = [
        (*_columns(row.submission), row.source, row.bucket, float(row.burst), row.per_hour, row.submission.world_size)
        for row in rows
    ]
    found = await conn.fetch(_CREATE, *(list(column) for column in zip(*columns, strict=True)))
    return [Created(r["allowed"], r["submission_id"], r["job_id"]) for r in found]


async def get_submission(conn: Conn, submission_id: int, *, lock: bool = False) -> Submission | None:
    """The submission; `lock` holds its row until the transaction ends (moderation, result recording)."""
    suffix = " WHERE s.id = $1" + (" FOR UPDATE OF s" if lock else "")
    row = await conn.fetchrow(_SELECT + suffix, submission_id)
    return Submission(**row) if row else None


async def find_by_token(conn: Conn, user_id: int, client_token: str) -> Submission | None:
    row = await conn.fetchrow(_SELECT + " WHERE s.user_id = $1 AND s.client_token = $2", user_id, client_token)
    return Submission(**row) if row else None


async def history(conn: Conn, user_id: int, problem_id: int | None = None, limit: int = 20) -> list[Submission]:
    """The user's submissions, newest first, optionally for one problem."""
    rows = await conn.fetch(
        _SELECT + " WHERE s.user_id = $1 AND ($2::bigint IS NULL OR s.problem_id = $2)"
        " ORDER BY s.created_at DESC, s.id DESC LIMIT $3",
        user_id,
        problem_id,
        limit,
    )
    return [Submission(**r) for r in rows]


async def set_status(conn: Conn, submission_id: int, status: str) -> None:
    """Move a submission to `queued` or `running`, clearing the verdict of any earlier run when requeued."""
    await conn.execute(
        """
        UPDATE submissions SET status = $2,
            started_at = CASE WHEN $2 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
            score = CASE WHEN $2 = 'queued' THEN NULL ELSE score END,
            mean_score = CASE WHEN $2 = 'queued' THEN NULL ELSE mean_score END
        WHERE id = $1
        """,
        submission_id,
        status,
    )


# The columns a finished job's outcome sets on its submission, in the order of `outcome_args`.
_OUTCOME_COLUMNS = (
    "status", "score", "mean_score", "score_metric", "device", "runner", "error_code", "error_message", "error_log",
    "result_job_id", "method", "geomean_gflops", "mean_gflops", "geomean_gbps", "mean_gbps", "notes",
    "phase_seconds", "output", "protocol",
)  # fmt: skip


OUTCOME_ARGS = len(_OUTCOME_COLUMNS)


def outcome_sets(first: int) -> str:
    """The SET list of an outcome's columns, their values parameters $first.. in `outcome_args`' order."""
    sets = [f"{column} = ${first + i}" for i, column in enumerate(_OUTCOME_COLUMNS)]
    return ", ".join(sets) + ", finished_at = now()"


def outcome_args(job_id: int, outcome: Outcome) -> tuple[Any, ...]:
    """The values of `outcome_sets`' parameters: the outcome of job `job_id`."""
    error = outcome.error
    return (
        outcome.status,
        outcome.score,
        outcome.mean_score,
        outcome.score_metric,
        outcome.device,
        outcome.runner,
        error.code if error else None,
        error.message if error else None,
        error.log if error else None,
        job_id,
        outcome.method,
        outcome.geomean_gflops,
        outcome.mean_gflops,
        outcome.geomean_gbps,
        outcome.mean_gbps,
        list(outcome.notes),
        dict(outcome.phase_seconds),
        list(outcome.output),
        outcome.protocol,
    )


async def record_outcome(conn: Conn, submission_id: int, job_id: int, outcome: Outcome) -> None:
    """Store a finished job's verdict, score and summary as the submission's current result."""
    await conn.execute(
        f"UPDATE submissions SET {outcome_sets(2)} WHERE id = $1", submission_id, *outcome_args(job_id, outcome)
    )


# Every column of `case_results` in one order, shared by the insert and the read so that they cannot drift.
_CASE_COLUMNS = (
    "kind", "idx", "name", "dims", "passed", "message", "details", "method", "runtime_median_us", "runtime_mean_us",
    "gflops", "gflops_mean", "gbps", "flops", "bytes", "samples", "cv", "converged", "rse", "dropped_samples",
    "sm_clock_mhz", "temperature_c", "measured_seconds", "wall_clock_us", "host_waits", "host_bound", "judge_clock",
    "host_part_us",
)  # fmt: skip
_TIMING_FIELDS = _CASE_COLUMNS[7:]


def _test_row(job_id: int, t: TestOutcome) -> tuple[Any, ...]:
    return (job_id, "test", t.index, t.name, t.dims, t.passed, t.message, t.details, *([None] * len(_TIMING_FIELDS)))


def _timing_row(job_id: int, t: CaseTiming) -> tuple[Any, ...]:
    return (job_id, "benchmark", t.index, t.name, t.dims, None, None, None, *(getattr(t, f) for f in _TIMING_FIELDS))


async def insert_case_results(conn: Conn, job_id: int, tests: list[TestOutcome], timings: list[CaseTiming]) -> None:
    rows = [_test_row(job_id, t) for t in tests] + [_timing_row(job_id, t) for t in timings]
    if not rows:
        return
    placeholders = ", ".join(f"${i}" for i in range(1, len(_CASE_COLUMNS) + 2))
    await conn.executemany(
        f"INSERT INTO case_results (job_id, {', '.join(_CASE_COLUMNS)}) VALUES ({placeholders})",
        rows,
    )


# The type of each of `_CASE_COLUMNS` as a statement's array parameter takes it (`case_rows_sql`): `dims` travels as
# the text of its array and `details` as the text of its JSON (an array of arrays or of jsonb would not unnest by
# row), each cast back in the statement (tests/store/test_store_results.py checks these against the table).
CASE_TYPES = (
    "text", "int4", "text", "text", "bool", "text", "text", "text", "float8", "float8",
    "float8", "float8", "float8", "int8", "int8", "int4", "float8", "bool", "float8", "int4",
    "float8", "float8", "float8", "float8", "bool", "bool", "bool", "float8",
)  # fmt: skip
_CASE_CASTS = {"dims": "::int8[]", "details": "::jsonb"}


def case_rows_sql(first: int, job_id: str, source: str) -> str:
    """An INSERT of case rows from `case_arrays`' parameters $first.., one array per column, for each row of the
    FROM item `source` and its job id `job_id`: the job's every case in one statement, whatever their number."""
    arrays = ", ".join(f"${first + i}::{t}[]" for i, t in enumerate(CASE_TYPES))
    values = ", ".join(f"c.{column}{_CASE_CASTS.get(column, '')}" for column in _CASE_COLUMNS)
    return (
        f"INSERT INTO case_results (job_id, {', '.join(_CASE_COLUMNS)}) SELECT {job_id}, {values} "
        f"FROM {source} CROSS JOIN unnest({arrays}) AS c({', '.join(_CASE_COLUMNS)})"
    )


def _array_text(values: Sequence[int]) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def case_arrays(tests: list[TestOutcome], timings: list[CaseTiming]) -> list[list[Any]]:
    """The values of `case_rows_sql`' parameters: the job's case rows, one list per column."""
    rows = [_test_row(0, t)[1:] for t in tests] + [_timing_row(0, t)[1:] for t in timings]
    columns: list[list[Any]] = [list(column) for column in zip(*rows, strict=True)] or [[] for _ in _CASE_COLUMNS]
    dims, details = _CASE_COLUMNS.index("dims"), _CASE_COLUMNS.index("details")
    columns[dims] = [_array_text(d) for d in columns[dims]]
    columns[details] = [None if d is None else json.dumps(d) for d in columns[details]]
    return columns


async def case_results(conn: Conn, job_id: int) -> list[CaseResult]:
    """Every case row of a job, tests first, each kind by index."""
    rows = await conn.fetch(
        f"SELECT {', '.join(_CASE_COLUMNS)} FROM case_results WHERE job_id = $1 ORDER BY kind DESC, idx",
        job_id,
    )
    return [CaseResult(**{**dict(r), "dims": tuple(r["dims"])}) for r in rows]
