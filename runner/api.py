"""Wire models shared by the runner, the worker, the CLI and the bot. Imports pydantic only.

Everything that crosses a process or network boundary (job requests, progress events, results) is one of
these models, serialised as JSON.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DType = Literal["float32", "float16", "bfloat16"]
Language = Literal["cuda", "python", "triton"]
Mode = Literal["test", "benchmark", "ranked"]
Method = Literal["seed", "cpu"]
ScoreMetric = Literal["gflops", "gbps"]
SubmissionStatus = Literal["passed", "failed", "error"]
EventType = Literal["accepted", "compiling", "compiled", "test_case", "benchmark_case", "done"]
ErrorCode = Literal[
    "bad_request",
    "unknown_problem",
    "unsupported_dtype",
    "syntax_error",
    "import_error",
    "missing_solution",
    "compile_error",
    "no_gpu",
    "runtime_error",
    "wrong_answer",
    "crashed",
    "timeout",
    "internal",
]

MAX_SOURCE_BYTES = 256 * 1024


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MeasureConfig(_Model):
    """How one test case is timed. The seed's rule: stop once the CV of GFLOPS is under `target_cv`."""

    method: Method = "seed"
    target_cv: float = Field(0.01, gt=0, le=1)
    min_samples: int = Field(5, ge=1)
    max_samples: int = Field(1000, ge=1)
    max_seconds: float = Field(10.0, gt=0, description="wall-clock budget per case, warm-up excluded")
    warmup: bool = Field(True, description="the seed's warm-up: ten 5000x5000 matmuls before timing (GPU)")


class JobRequest(_Model):
    """One submission to evaluate."""

    submission_id: str = Field(min_length=1, max_length=128)
    problem_slug: str = Field(min_length=1, max_length=64)
    problem_version: int = 1
    problem_source: str | None = Field(None, description="module text for a problem that is not built in")
    language: Language
    file_name: str = Field(min_length=1, max_length=255)
    source: str = Field(max_length=MAX_SOURCE_BYTES)
    dtype: DType = "float32"
    mode: Mode = "benchmark"
    device_kind: Literal["auto", "gpu", "cpu"] = "auto"
    measure: MeasureConfig = MeasureConfig()
    seed: int | None = Field(None, description="input seed; drawn fresh per job when absent")


class ErrorInfo(_Model):
    """Why a submission did not produce a result. `message` says what to fix; `log` holds tool output."""

    code: ErrorCode
    message: str
    log: str | None = None


class TestOutcome(_Model):
    """The verdict on one test case."""

    index: int
    name: str
    dims: list[int]
    passed: bool
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class CaseTiming(_Model):
    """The timing of one test case. Runtimes are in microseconds; rates use the median runtime."""

    index: int
    name: str
    dims: list[int]
    method: Method
    runtime_median_us: float
    runtime_mean_us: float
    gflops: float
    gflops_mean: float = Field(description="mean of per-sample GFLOPS, the seed's headline figure")
    gbps: float
    flops: int
    bytes: int
    samples: int
    cv: float = Field(description="coefficient of variation of per-sample GFLOPS")
    converged: bool


class SubmissionResult(_Model):
    """The outcome of one job."""

    submission_id: str
    problem_slug: str
    problem_version: int
    dtype: DType
    language: Language
    mode: Mode
    status: SubmissionStatus
    device: str
    tests: list[TestOutcome] = Field(default_factory=list)
    timings: list[CaseTiming] = Field(default_factory=list)
    score_metric: ScoreMetric = "gflops"
    geomean_gflops: float | None = None
    mean_gflops: float | None = None
    geomean_gbps: float | None = None
    mean_gbps: float | None = None
    error: ErrorInfo | None = None
    phase_seconds: dict[str, float] = Field(default_factory=dict)

    @property
    def score(self) -> float | None:
        """The ranking figure: geometric-mean GFLOPS, or GB/s for problems scored on bandwidth."""
        return self.geomean_gflops if self.score_metric == "gflops" else self.geomean_gbps


class JobEvent(_Model):
    """One numbered progress event. Payload fields are set according to `type`."""

    seq: int
    type: EventType
    message: str = ""
    phase: str | None = None
    index: int | None = None
    count: int | None = None
    test: TestOutcome | None = None
    timing: CaseTiming | None = None
    result: SubmissionResult | None = None


def geometric_mean(values: list[float]) -> float | None:
    """The geometric mean of positive finite values; None when empty or when any value is not positive."""
    if not values or any(not math.isfinite(v) or v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def arithmetic_mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
