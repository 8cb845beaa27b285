"""Wire models of the public API's submission routes: submit, follow, read a result, list, read the code.

The OpenAPI document is generated from these (api.app.openapi_document), and the CLI reads the answers back with
them (arena.server_client): one definition for both sides. A result is the runner's `SubmissionResult`, as the
store rebuilds it, so that `arena submit --server` prints the same tables as a local run.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from contract.names import (
    CasePhase,
    DType,
    JobState,
    Language,
    Method,
    Mode,
    ScoreMetric,
    StoredStatus,
    SubmissionEventType,
)
from contract.wire import CaseTiming, SubmissionResult
from core.contests.entry import ContestEntries
from core.store.submissions import Submission
from core.submit.events import CaseProgress, SubmissionEvent


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SubmissionAccepted(_Wire):
    """202 to POST /v1/submissions: stored with its queued job before this answer; follow `events`."""

    id: int = Field(description="the submission's id")
    problem: str = Field(description="the problem's slug")
    file_name: str
    language: Language
    dtype: DType
    data_type: str = Field(description="what `dtype` reads as for this problem (e.g. uint32 for a finite field)")
    mode: Mode
    gpu_type: str = Field(description="the GPU pool it runs on")
    queue_position: int = Field(ge=0, description="its place in the queue of its pool (1: next); 0 once it left")
    start_in_s: float | None = Field(None, description="when it should start, from the pool's latest jobs")
    duplicate: bool = Field(description="an earlier submission with the same idempotency key, answered again")
    events: str = Field(description="the path of its events (Server-Sent Events)")
    result: str = Field(description="the path of its result")
    contests: ContestEntries | None = Field(
        None,
        description="a ranked run on a problem that a contest holds: what it will count for, or why none (`line`); "
        "absent otherwise",
    )


class SubmissionSummary(_Wire):
    """One submission as its owner's list shows it."""

    id: int
    problem: str
    problem_version: int
    file_name: str
    language: Language
    dtype: DType
    mode: Mode
    gpu_type: str
    status: StoredStatus
    score: float | None = Field(None, description="the ranking figure (geometric-mean GFLOPS or GB/s)")
    score_metric: ScoreMetric | None = None
    method: Method | None = Field(None, description="the timing method its runner used")
    error_code: str | None = None
    error_message: str | None = None
    created_at: datetime
    finished_at: datetime | None = None

    @classmethod
    def of(cls, sub: Submission) -> SubmissionSummary:
        return cls(
            id=sub.id,
            problem=sub.slug,
            problem_version=sub.problem_version,
            file_name=sub.file_name,
            language=sub.language,
            dtype=sub.dtype,
            mode=sub.mode,
            gpu_type=sub.gpu_type,
            status=sub.status,
            score=sub.score,
            score_metric=sub.score_metric,
            method=sub.method,
            error_code=sub.error_code,
            error_message=sub.error_message,
            created_at=sub.created_at,
            finished_at=sub.finished_at,
        )


class SubmissionView(SubmissionSummary):
    """GET /v1/submissions/{id}: the submission and, once its run ended, its result."""

    owner: str = Field(description="its author's display name")
    result: SubmissionResult | None = Field(None, description="None while it is queued or running")
    contests: ContestEntries | None = Field(
        None,
        description="a ranked run on a problem that a contest holds: the contests it counts for, or why it counts "
        "for none (`line`, one line for people); absent otherwise",
    )


class SubmissionCancelled(_Wire):
    """DELETE /v1/submissions/{id}: the submission was withdrawn before it finished, and will not run again."""

    id: int
    cancelled: bool = Field(description="always true: a submission that had finished is refused with 409")
    status: StoredStatus = Field(description="the submission's status now (`failed`, error code `cancelled`)")


class SubmissionPage(_Wire):
    """GET /v1/submissions: the caller's submissions, newest first."""

    items: list[SubmissionSummary]
    next_before: int | None = Field(
        None, description="pass as `before` for the next (older) page; absent on the last page"
    )


class SubmissionCode(_Wire):
    """GET /v1/submissions/{id}/code: the source, for its author, and for others once the reveal rules allow."""

    id: int
    owner: str
    file_name: str
    language: Language
    source: str


class CaseProgressView(_Wire):
    """With a `case` event: one test case as its runner reported it, live (the stored result has them all)."""

    phase: CasePhase = Field(description="test: verified; benchmark: timed; profile: run under Nsight Compute")
    index: int = Field(ge=0, description="the case's index, from 0")
    count: int = Field(ge=1, description="how many cases this phase has")
    name: str = Field(description="the case's name, e.g. `n=1000` (empty for a profile's step)")
    passed: bool | None = Field(None, description="phase test: whether the case passed")
    message: str | None = Field(None, description="phase test: the verdict's message; phase profile: the step")
    timing: CaseTiming | None = Field(None, description="phase benchmark: the case's timing")

    @classmethod
    def of(cls, case: CaseProgress) -> CaseProgressView:
        return cls(
            phase=case.phase,
            index=case.index,
            count=case.count,
            name=case.name,
            passed=case.passed,
            message=case.message,
            timing=case.timing,
        )


class SubmissionEventView(_Wire):
    """One event of a submission, the `data` of a Server-Sent Event (the SSE `id` is `id` here, when kept) and
    one line of `arena submit --stream`."""

    id: int | None = Field(None, description="kept events only: resume after it with Last-Event-ID")
    type: SubmissionEventType
    submission_id: int
    state: JobState = Field(description="the job's state after this event")
    attempt: int = Field(ge=1)
    at: datetime | None = None
    position: int | None = Field(None, description="its place in the queue (1: next), while it waits")
    start_in_s: float | None = None
    runner: str | None = Field(None, description="the runner that took this attempt")
    result: SubmissionResult | None = Field(None, description="with `result`: the stored result")
    case: CaseProgressView | None = Field(None, description="with `case`: the case that just finished")

    @classmethod
    def of(cls, event: SubmissionEvent) -> SubmissionEventView:
        return cls(
            id=event.id,
            type=event.type,
            submission_id=event.submission_id,
            state=event.state,
            attempt=event.attempt,
            at=event.at,
            position=event.position,
            start_in_s=event.start_in_s,
            runner=event.runner,
            result=event.result,
            case=None if event.case is None else CaseProgressView.of(event.case),
        )


MODELS: list[type[BaseModel]] = [
    SubmissionAccepted,
    SubmissionSummary,
    SubmissionView,
    SubmissionPage,
    SubmissionCode,
    SubmissionCancelled,
    CaseProgressView,
    SubmissionEventView,
]
