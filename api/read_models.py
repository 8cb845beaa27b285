"""Wire models of the public API's read routes: problems, leaderboards, contests, ratings and the caller's quota.

The OpenAPI document is generated from these (api.app.openapi_document, through `MODELS`), and tests check every
answer of the read routes against it. Times are UTC (ISO 8601); scores are in the problem's unit (GFLOPS or GB/s).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.names import Language, ScoreMetric
from contract.wire import ProfileDiff


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- problems ---------------------------------------------------------------------------------------------------


class ProblemSummary(_Wire):
    """A problem as the list shows it."""

    slug: str
    title: str
    category: str = Field(description="the first tag (`general` when there is none)")
    difficulty: str = Field(description="`easy`, `medium`, `hard` (`unrated` when it cannot be described)")
    version: int = Field(description="the current version: boards and submissions are per version")
    dtypes: list[str] = Field(description="the dtype keys it takes (`float32`, `float16`, `bfloat16`)")
    data_types: dict[str, str] = Field(description="what each dtype key reads as, where it differs from the key")
    score_metric: ScoreMetric = Field(description="what ranks: GFLOPS or GB/s")
    enabled: bool = Field(description="whether it takes submissions now")
    aliases: list[str] = Field(default_factory=list, description="former slugs that still work")


class ProblemList(_Wire):
    """GET /v1/problems: every problem that is listed now (a contest hides its problems until its start)."""

    problems: list[ProblemSummary]


class ParameterInfo(_Wire):
    """One parameter of `solution(...)`, in the order it is passed."""

    name: str
    role: Literal["input", "output", "scalar", "array"]
    element_type: str = Field(description="a buffer's element type in this dtype, or a scalar's C type")
    summary: str = Field(description="what it is, in a line (as `arena show` prints it)")


class CheckInfo(_Wire):
    """How outputs are checked against the reference: |out - ref| <= atol * rms(ref) + rtol * |ref|, elementwise,
    or exactly (integer outputs)."""

    exact: bool
    atol: float | None = Field(None, description="absolute tolerance, scaled by the RMS of the reference")
    rtol: float | None = Field(None, description="relative tolerance")
    summary: str


class CaseShape(_Wire):
    """One test case: its dimensions, each buffer's shape, its work and its minimum memory traffic."""

    name: str
    dims: list[int]
    shapes: dict[str, list[int]] = Field(description="each buffer's shape, by parameter name (empty: not stated)")
    gflop: float = Field(description="floating-point work, GFLOP (the FLOP formula)")
    megabytes: float = Field(description="minimum memory traffic, MB (the byte formula)")


class Starter(_Wire):
    """Starter code generated from the signature."""

    language: Language
    file_name: str
    text: str


class ProblemDetail(_Wire):
    """GET /v1/problems/{slug}: a problem's full interface in one dtype, enough to write a solution offline."""

    slug: str
    title: str
    version: int
    description: str
    category: str
    tags: list[str]
    difficulty: str
    dtypes: list[str]
    aliases: list[str]
    enabled: bool
    score_metric: ScoreMetric
    ranked_by: str = Field(description="what the boards rank, in words")
    dtype: str = Field(description="the dtype this interface is for (`?dtype=`; default: the first)")
    data_type: str = Field(description="what `dtype` reads as for this problem (e.g. `uint32` for a finite field)")
    cuda_signature: str = Field(description='the `extern "C" void solution(...)` line')
    python_signature: str = Field(description="the `def solution(...)` line")
    parameters: list[ParameterInfo]
    flops_formula: str
    bytes_formula: str
    check: CheckInfo
    gpu_cases: list[CaseShape] = Field(description="the cases timed on GPUs (empty when only runners know them)")
    cpu_cases: list[CaseShape] = Field(description="the cases of CPU runners (empty when only runners know them)")
    starters: list[Starter]


# -- leaderboards -----------------------------------------------------------------------------------------------


class BoardKey(_Wire):
    """One board of a problem: a GPU type, a dtype and the timing method that ranked it."""

    gpu_type: str
    dtype: str
    method: str
    entries: int


class BoardEntry(_Wire):
    rank: int
    user: str = Field(description="the display name")
    user_id: int
    submission_id: int
    language: str
    score: float = Field(description="geometric mean over the cases, in `unit`")
    submitted_at: datetime
    protocol: str | None = Field(
        None, description="the timing protocol's version that timed the entry (None: recorded before versions)"
    )
    older_protocol: bool = Field(
        False, description="timed under another protocol than the current one: it is due to be re-judged"
    )


class Leaderboard(_Wire):
    """GET /v1/leaderboards/{slug}: one page of one board, and the boards the problem has (fullest first)."""

    problem: str
    problem_title: str
    version: int
    gpu_type: str | None = Field(description="None when the problem has no board yet and no GPU type was asked for")
    dtype: str
    language: str = Field(description="`any`, or the language the board was filtered to")
    method: str | None = Field(description="the timing method that ranked it (None: no board yet)")
    world_size: int = Field(
        1,
        ge=1,
        description="the ranks each entry ran on: 1 for a one-device problem; a distributed problem has a board per "
        "world size, under its rank pool (`gpu_type` `cpux2`: 2 ranks)",
    )
    unit: Literal["GFLOPS", "GB/s"]
    page: int = Field(ge=1)
    page_size: int
    has_next: bool
    entries: list[BoardEntry]
    caller: BoardEntry | None = Field(description="the caller's own row on this board, wherever it ranks")
    boards: list[BoardKey]
    protocol: str = Field(description="the current timing protocol's version; entries timed under another are marked")


# -- contests ---------------------------------------------------------------------------------------------------


ContestState = Literal["upcoming", "running", "ended", "frozen", "cancelled"]


class ContestTarget(_Wire):
    gpu_type: str
    dtype: str


class ContestProblemRef(_Wire):
    slug: str
    title: str
    version: int


class ContestSummary(_Wire):
    slug: str
    title: str
    state: ContestState
    starts_at: datetime
    ends_at: datetime
    visibility: Literal["public", "invite_only"]
    scoring: str
    problems: list[ContestProblemRef] = Field(description="the problems shown now (hidden ones before the start)")
    hidden_problems: int = Field(description="how many more problems are revealed at the start")
    targets: list[ContestTarget]


class ContestList(_Wire):
    """GET /v1/contests: every contest, the latest start first."""

    contests: list[ContestSummary]


class ContestColumn(_Wire):
    problem: str
    gpu_type: str
    dtype: str
    entrants: int


class ContestCell(_Wire):
    """An entrant's rank in one column; `submission_id` and `score` are None for a penalty rank (no run)."""

    rank: int
    submission_id: int | None
    score: float | None


class ContestLine(_Wire):
    place: int
    user: str
    user_id: int
    total: int = Field(description="the sum of the ranks over the columns (lower is better)")
    cells: list[ContestCell] = Field(description="one per column, in the columns' order")


class ContestBoard(_Wire):
    phase: Literal["contest", "upsolve"]
    frozen: bool
    columns: list[ContestColumn]
    lines: list[ContestLine]


class ContestDetail(_Wire):
    """GET /v1/contests/{slug}: the contest and its board (`?phase=contest|upsolve`); no board before the start."""

    contest: ContestSummary
    board: ContestBoard | None


# -- ratings ----------------------------------------------------------------------------------------------------


class RatingEntry(_Wire):
    place: int
    user: str
    user_id: int
    rating: float
    rd: float = Field(description="the rating's deviation")
    conservative: float = Field(description="rating - 2·RD: what orders the table")
    contests: int


class RatingTable(_Wire):
    """GET /v1/ratings: the rating table, paged, best first; banned players are left out."""

    page: int = Field(ge=1)
    page_size: int
    has_next: bool
    total: int
    entries: list[RatingEntry]


# -- quota ------------------------------------------------------------------------------------------------------


class ModeQuotaInfo(_Wire):
    """One rate-limit bucket: a mode's, or a running contest's own ranked limit (`ranked in <slug>`)."""

    mode: str
    left: int = Field(description="whole submissions that may be sent now")
    burst: int
    per_hour: float
    next_in_s: float | None = Field(description="seconds until one more is allowed (None: the bucket is full)")
    full_in_s: float = Field(description="seconds until the bucket is full again")


class QueuedJob(_Wire):
    submission_id: int
    problem: str
    mode: str
    gpu_type: str
    place: int = Field(ge=1, description="the place in its pool's fair queue (1: next)")
    start_in_s: float | None = Field(description="when it should start (None before any job of its pool finished)")


class Quota(_Wire):
    """GET /v1/me/quota: what `/quota` shows the caller: each bucket, and where their queued jobs stand. The buckets
    are the ones their Discord runs draw on too."""

    user: str
    buckets: list[ModeQuotaInfo]
    queued_total: int = Field(description="every job the caller has queued")
    queued: list[QueuedJob] = Field(description="the first few of them to go out, the soonest first")


MODELS: list[type[BaseModel]] = [
    ProblemList,
    ProblemDetail,
    Leaderboard,
    ContestList,
    ContestDetail,
    RatingTable,
    Quota,
    ProfileDiff,  # GET /v1/profiles/diff (api.public_profiles)
]
