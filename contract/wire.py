"""Wire models shared by the runner, the worker, the core, the CLI and the bot. Imports pydantic only.

Everything that crosses a process or network boundary (job requests, progress events, results) is one of
these models, serialised as JSON.

Kept as one module: the models refer to one another (a result holds its timings, an event its result), and the
processes on both sides of each boundary import them from one place.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from contract.errors import ErrorCode
from contract.names import DType, Language, Method, Mode, ScoreMetric, SubmissionStatus

EventType = Literal["accepted", "compiling", "compiled", "test_case", "benchmark_case", "done"]

MAX_SOURCE_BYTES = 256 * 1024


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MeasureConfig(_Model):
    """How one test case is timed.

    `arena` (the GPU default): L2 flushed by a read before every sample, a spin kernel that hides host launch
    latency, events on the submission's stream, rotated input sets, and a stop on the relative standard error
    of the median. `seed`: the seed's loop, kept for comparison: stop once the CV of GFLOPS is under
    `target_cv`. `cpu`: the seed's loop with a monotonic clock (runs on CPU-only runners).
    """

    # An infinite budget or a NaN target would be accepted and then break the measurement loop far from here.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    method: Method = "arena"
    target_cv: float = Field(0.01, gt=0, le=1, description="seed and cpu: stop once the CV is under this")
    target_rse: float = Field(0.005, gt=0, le=1, description="arena: stop once the median's relative SE is under this")
    min_samples: int = Field(5, ge=1)
    max_samples: int = Field(1000, ge=1)
    min_time_s: float = Field(0.0, ge=0, description="arena: least summed measured time before stopping")
    max_seconds: float = Field(10.0, gt=0, description="wall-clock budget per case, warm-up excluded")
    warmup: bool = Field(True, description="the seed's warm-up: ten 5000x5000 matmuls before timing (GPU)")
    input_sets: int = Field(
        64, ge=1, le=64, description="input sets of a case: the most samples per batch, memory permitting"
    )


class JobRequest(_Model):
    """One submission to evaluate."""

    submission_id: str = Field(min_length=1, max_length=128)
    problem_slug: str = Field(min_length=1, max_length=64)
    problem_version: int | None = Field(
        None, description="the version the job was submitted for; a built-in problem at another version is refused"
    )
    problem_source: str | None = Field(None, description="module text for a problem that is not built in")
    language: Language
    file_name: str = Field(min_length=1, max_length=255)
    source: str = Field(max_length=MAX_SOURCE_BYTES)
    dtype: DType = "float32"
    mode: Mode = "benchmark"
    profile_case: int | None = Field(
        None, ge=0, description="mode `profile`: the test case to profile, by index; default the largest"
    )
    device_kind: Literal["auto", "gpu", "cpu"] = "auto"
    measure: MeasureConfig = MeasureConfig()
    seed: int | None = Field(None, description="input seed; drawn fresh per job when absent")
    # Absent from every client that predates distributed problems, so it defaults to today's one-device path.
    world_size: int = Field(
        1,
        ge=1,
        le=64,
        description="ranks to run on: 1, one device; N, a distributed problem on a slot of N ranks of the runner",
    )

    @model_serializer(mode="wrap")
    def _one_device_without_world_size(self, handler: SerializerFunctionWrapHandler):  # noqa: ANN202
        # A daemon that predates distributed problems forbids unknown fields: a one-device job leaves the field
        # out (its default), so old daemons still take new clients' jobs; only a distributed job sends it.
        # Unannotated on purpose: a return type would replace the model's serialization schema (the JobRequest
        # of the OpenAPI documents) with that type's.
        fields: dict[str, Any] = handler(self)
        if self.world_size == 1:
            fields.pop("world_size", None)
        return fields


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
    rse: float | None = Field(None, description="relative standard error of the median runtime (arena)")
    dropped_samples: int = Field(0, description="samples discarded: throttled clocks or launch latency exposed")
    sm_clock_mhz: float | None = Field(None, description="SM clock while this case was timed (NVML)")
    temperature_c: float | None = None
    measured_seconds: float | None = Field(None, description="sum of kept sample runtimes")
    wall_clock_us: float | None = Field(
        None, description="the judge's own clock's estimate of one call, for the wall-clock check (median of batches)"
    )
    host_waits: bool = Field(
        False,
        description="the call waits for the GPU inside (a synchronise, .item(), a blocking copy): its time includes "
        "the host's part of that wait",
    )
    host_bound: bool = Field(
        False,
        description="the judge's own clock saw each call take longer than its timing events (host work inside the "
        "call, or work kept from the events): the case was timed again with the host's part of each call included",
    )
    host_part_us: float | None = Field(
        None,
        description="the median host time inside each timed call, by the launcher's clock: what a covering spin hides "
        "from the events; a call whose host part is long is also measured with it included",
    )
    measurements: int = Field(
        1,
        description="how many times the case was measured before its timing stood: again while its clocks were "
        "unsettled or its host disturbed, once more with the host's part of each call included",
    )
    judge_clock: bool = Field(
        False,
        description="even the host-inclusive events fell short of the judge's own clock: the runtimes are the judge's "
        "clock's estimates of one call (the larger of the two clocks)",
    )
    rank_runtime_median_us: list[float] | None = Field(
        None,
        description="a distributed run: each rank's own median runtime, by rank; the case's runtimes are its slowest "
        "rank's per sample. None for one device",
    )


class StallReason(_Model):
    """One warp-stall reason of a kernel: Nsight Compute's cycles per issued instruction spent in it."""

    name: str = Field(description="ncu's reason, e.g. long_scoreboard (waiting on an L1TEX load)")
    cycles_per_issue: float
    share: float = Field(description="fraction of all stall cycles per issue, 0 to 1")


class KernelProfile(_Model):
    """What Nsight Compute measured for one kernel the call launched (summed over its launches)."""

    name: str = Field(description="the kernel's function name, without its parameter list")
    signature: str = Field("", description="the demangled name with its parameters")
    launches: int = 1
    duration_us: float = Field(description="gpu__time_duration summed over the launches")
    sm_throughput_pct: float | None = None
    memory_throughput_pct: float | None = None
    dram_throughput_pct: float | None = None
    achieved_occupancy_pct: float | None = None
    theoretical_occupancy_pct: float | None = None
    registers_per_thread: int | None = None
    shared_memory_per_block_bytes: int | None = Field(None, description="static plus dynamic")
    block: tuple[int, int, int] | None = None
    grid: tuple[int, int, int] | None = None
    stalls: list[StallReason] = Field(default_factory=list, description="the top reasons, largest first")
    dram_bytes_read: int | None = None
    dram_bytes_written: int | None = None
    flops: int | None = Field(
        None,
        description="FP adds, multiplies and 2 per FMA the SASS counters saw, plus the tensor cores' math ops "
        "(tensor_flops) where the profiler counts them",
    )
    tensor_flops: int | None = Field(
        None, description="math ops the tensor cores ran (2 per multiply-add); None where they cannot be counted"
    )
    tensor_instructions: int | None = Field(
        None, description="matrix instructions on the tensor pipe (HMMA, IMMA, DMMA, GMMA), not its HFMA2.MMA moves"
    )

    @property
    def dram_bytes(self) -> int | None:
        if self.dram_bytes_read is None or self.dram_bytes_written is None:
            return None
        return self.dram_bytes_read + self.dram_bytes_written


class ProfileArtifact(_Model):
    """A file that comes with a profile: the full text report, the .ncu-rep, the PTX and SASS."""

    name: str = Field(min_length=1, max_length=64)
    data_b64: str = Field(description="the file's bytes, base64")


class ProfileReport(_Model):
    """Mode `profile`: one test case run once under Nsight Compute, after the usual correctness check."""

    case_index: int
    case_name: str
    tool: str = Field("", description="the profiler's name and version")
    kernels: list[KernelProfile] = Field(default_factory=list, description="the top kernels by duration")
    kernel_count: int = Field(0, description="every kernel launch profiled, beyond the ones listed")
    formula_flops: int = Field(0, description="the problem's FLOP count for the case")
    formula_bytes: int = Field(0, description="the problem's byte count for the case")
    notes: list[str] = Field(default_factory=list)
    artifacts: list[ProfileArtifact] = Field(default_factory=list)

    @property
    def duration_us(self) -> float:
        return sum(k.duration_us for k in self.kernels)

    @property
    def measured_flops(self) -> int | None:
        counted = [k.flops for k in self.kernels]
        return None if not counted or any(f is None for f in counted) else sum(f for f in counted if f is not None)

    @property
    def measured_dram_bytes(self) -> int | None:
        counted = [k.dram_bytes for k in self.kernels]
        return None if not counted or any(b is None for b in counted) else sum(b for b in counted if b is not None)


class FigureChange(_Model):
    """One figure of two profiles, A's and B's, and how it moved from A to B."""

    a: float | None = Field(None, description="A's figure; None where A's profile lacks it")
    b: float | None = Field(None, description="B's figure; None where B's profile lacks it")
    change: float | None = Field(None, description="b - a; None unless both are known")
    change_pct: float | None = Field(None, description="the change as a percentage of a; None where a is 0 or unknown")


class StallChange(_Model):
    """One warp-stall reason among the top ones of either side: its share of the stall cycles on each side."""

    name: str
    a_share: float | None = Field(None, description="0 to 1; None where it is not among A's top reasons")
    b_share: float | None = Field(None, description="0 to 1; None where it is not among B's top reasons")


ProfileSideName = Literal["both", "a", "b"]


class KernelDiff(_Model):
    """One kernel of a profile diff: its figures on both sides where both profiles ran a kernel of this name, else
    the one side's figures alone (`side`), with no change."""

    name: str
    side: ProfileSideName = Field(description="both: matched by name; a or b: only that profile ran it")
    launches_a: int | None = None
    launches_b: int | None = None
    duration_us: FigureChange
    sm_throughput_pct: FigureChange
    memory_throughput_pct: FigureChange
    achieved_occupancy_pct: FigureChange
    registers_per_thread: FigureChange
    shared_memory_per_block_bytes: FigureChange
    dram_bytes_read: FigureChange
    dram_bytes_written: FigureChange
    flops: FigureChange = Field(description="the FLOPs the counters saw (tensor cores included where counted)")
    stalls: list[StallChange] = Field(
        default_factory=list, description="the top stall reasons of either side, by the larger share first"
    )


class ProfileTotals(_Model):
    """The two profiles' totals over the kernels they list."""

    duration_us: FigureChange
    measured_flops: FigureChange
    measured_dram_bytes: FigureChange
    speedup: float | None = Field(None, description="A's total duration over B's: above 1, B is faster")


class ProfiledRun(_Model):
    """One side of a profile diff: the run and the case it profiled."""

    submission_id: int
    owner: str = Field(description="the author's display name")
    file_name: str
    language: Language
    dtype: DType
    problem_version: int
    device: str = Field(description="the GPU the runner reported")
    case_index: int
    case_name: str
    tool: str = Field("", description="the profiler's name and version")
    created_at: datetime


BChoice = Literal["given", "own_fastest", "leader"]


class ProfileDiff(_Model):
    """Two profiles of one problem on one GPU type, kernel by kernel: what changed from A to B."""

    problem: str = Field(description="the problem's slug")
    gpu_type: str
    a: ProfiledRun
    b: ProfiledRun
    b_chosen: BChoice = Field(
        description="given: the caller named B; own_fastest: the caller's fastest other profile of the problem, GPU "
        "type, dtype and case; leader: the profile of a board leader's revealed code"
    )
    kernels: list[KernelDiff] = Field(
        default_factory=list, description="matched kernels first (A's order), then A's alone, then B's alone"
    )
    totals: ProfileTotals
    notes: list[str] = Field(default_factory=list, description="what differs beyond the figures (case, dtype, device)")


# What a solution printed is kept up to this many bytes per phase and stream; the rest is counted, not kept.
OUTPUT_KEEP_BYTES = 8 * 1024


class PhaseOutput(_Model):
    """What the solution wrote to its stdout and stderr during one phase (`load`: importing it; `test`: the
    correctness calls; `benchmark`: the timed calls), each stream's first `OUTPUT_KEEP_BYTES` and the count of
    bytes cut after them."""

    phase: str = Field(description="load, test or benchmark")
    stdout: str = ""
    stderr: str = ""
    stdout_cut_bytes: int = Field(0, ge=0)
    stderr_cut_bytes: int = Field(0, ge=0)

    @property
    def cut_bytes(self) -> int:
        return self.stdout_cut_bytes + self.stderr_cut_bytes

    @property
    def empty(self) -> bool:
        return not (self.stdout or self.stderr or self.cut_bytes)


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
    notes: list[str] = Field(
        default_factory=list, description="static tripwires in the source, for reviewers; never part of a verdict"
    )
    profile: ProfileReport | None = Field(None, description="mode `profile`: what Nsight Compute measured")
    protocol: str | None = Field(
        None,
        description="the timing protocol's version that timed this run (runner.protocol: a digest of the judge's "
        "timing code and the service's settings); None for runs recorded before versions existed",
    )
    output: list[PhaseOutput] = Field(
        default_factory=list, description="what the solution printed, per phase that printed anything"
    )
    world_size: int = Field(1, ge=1, description="the ranks the job ran on: 1 for one device")

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


# -- runner HTTP API (DESIGN §3) ------------------------------------------------------------------------------

# A job in one runner daemon's own queue; the service's job states are `contract.names.JobState`.
RunnerJobState = Literal["queued", "running", "done", "cancelled"]


class JobAccepted(_Model):
    """The answer to `POST /v1/jobs`. A repeated submission id answers with the job it already has."""

    job_id: str
    submission_id: str
    state: RunnerJobState
    queue_position: int | None = Field(None, description="1 = next to start; null once running or finished")
    created: bool = Field(True, description="false when this submission id was already known (idempotent repeat)")


class JobStatus(_Model):
    """The answer to `GET /v1/jobs/{id}`; `result` is set once the job is done."""

    job_id: str
    submission_id: str
    state: RunnerJobState
    queue_position: int | None = None
    created_at: float = Field(description="Unix time")
    started_at: float | None = None
    finished_at: float | None = None
    last_seq: int = Field(0, description="number of the newest event; resume streaming with ?after=last_seq")
    result: SubmissionResult | None = None


class MeasuredPeaks(_Model):
    """Rates measured on one GPU by `runner.judge.peak_probe`: what the physical floor divides by."""

    device: str = Field(description="the GPU's name as torch reports it")
    bandwidth_gbps: float = Field(gt=0, description="the best of a streaming copy and a streaming read, GB/s")
    ceiling_gflops: dict[str, float] = Field(
        description="by dtype: the best dense matmul rate of any unit (TF32 tensor cores for float32), GFLOPS"
    )
    torch: str
    measured_at: float = Field(description="Unix time of the measurement")


class GpuInfo(_Model):
    index: int
    name: str
    uuid: str
    capability: str
    memory_mib: int | None = None
    gpu_type: str | None = Field(
        None,
        description="the GPU registry's board key of this device (`h100`; a slug of the name for a model without "
        "an entry); None from a daemon that predates it",
    )
    peaks: MeasuredPeaks | None = Field(None, description="rates measured on this GPU as its slot started")


class LinkTopology(_Model):
    """How a host's GPUs are linked, from `nvidia-smi topo -m` (runner/host/topology.py)."""

    links: Literal["nvlink", "pcie", "mixed"] = Field(
        description="nvlink: every pair of GPUs over NVLink; pcie: none; mixed: some pairs"
    )
    pairs: dict[str, str] = Field(
        default_factory=dict, description="each pair's connection as nvidia-smi names it, e.g. 0-1: NV18"
    )
    matrix: str = Field("", max_length=16384, description="the matrix as nvidia-smi printed it, without its legend")


class HealthInfo(_Model):
    """The answer to `GET /v1/health`."""

    status: Literal["ok", "degraded"] = Field(description="degraded: the sandbox lacks namespaces")
    name: str
    device: Literal["gpu", "cpu"]
    gpu_count: int
    gpus: list[GpuInfo] = Field(default_factory=list)
    gpu_type: str | None = Field(
        None,
        description="the board key of what this runner's jobs run on: `cpu`, or its slots' GPU type; None when "
        "its slots hold GPUs of several models, or from a daemon that predates it",
    )
    driver: str | None = None
    torch: str | None = None
    triton: str | None = None
    nvcc: str | None = None
    slots: int
    free_slots: int
    rank_slots: list[int] = Field(
        default_factory=list, description="the rank counts of its multi-rank slots (RUNNER_RANK_SLOTS), beside `slots`"
    )
    topology: LinkTopology | None = Field(None, description="how its GPUs are linked; None with fewer than two")
    queue_depth: int
    max_queue: int
    sandbox: Literal["full", "network", "none"]
    profiling: bool = Field(False, description="whether mode `profile` can run here (ncu, and counters allowed)")
    profiling_note: str | None = Field(None, description="why not, when it cannot")
    torch_loaded: bool = Field(description="whether the daemon process itself imported torch (it must not)")


# -- the fleet: what a runner tells the core's API service when it joins its pool (api/, core/fleet/) ---


class GpuHardware(_Model):
    """One GPU as the runner found it (nvidia-smi), for the pool check and `/mod runners`."""

    index: int
    name: str
    uuid: str
    gpu_type: str = Field(description="the GPU registry's board key of this device (runner/gpus.py)")
    memory_mib: int | None = None
    max_sm_clock_mhz: float | None = None
    power_limit_w: float | None = None


class RunnerHardware(_Model):
    """What a runner serves with: its devices and the versions of everything that builds and times a job."""

    device: Literal["gpu", "cpu"]
    gpu_type: str | None = Field(description="the board key its slots serve; None when they mix models")
    gpus: list[GpuHardware] = Field(default_factory=list)
    slots: int = Field(ge=1, le=64)
    rank_slots: list[int] = Field(default_factory=list, description="the rank counts of its multi-rank slots")
    topology: LinkTopology | None = Field(None, description="how its GPUs are linked (nvidia-smi topo -m)")
    driver: str | None = None
    cuda: str | None = None
    nvcc: str | None = None
    ncu: str | None = None
    torch: str | None = None
    triton: str | None = None
    python: str | None = None
    sandbox: Literal["full", "network", "none"]


class RunnerJoinRequest(_Model):
    """`POST /v1/runners/join`: a bootstrap token for a pool, exchanged for a credential of the runner's own."""

    token: str = Field(min_length=16, max_length=200)
    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class RunnerJoined(_Model):
    """The answer to a join: who the runner is now, the secret it signs and checks with, and its pool's rhythm."""

    runner_id: int
    secret: str = Field(
        description="this runner's own HMAC key: it signs its calls to the API with it, and checks "
        "the dispatchers' calls to it with it"
    )
    gpu_type: str = Field(description="the pool it joined")
    heartbeat_s: float = Field(gt=0, description="send a heartbeat this often")
    heartbeat_timeout_s: float = Field(gt=0, description="a runner not heard from for this long leaves its pool")


class RunnerRegistration(_Model):
    """`PUT /v1/runners/{id}`: where dispatchers reach the runner, and its hardware."""

    url: str = Field(pattern=r"^https?://", max_length=500)
    hardware: RunnerHardware


class RunnerHeartbeat(_Model):
    """`POST /v1/runners/{id}/heartbeat`."""

    state: Literal["active", "draining"] = "active"
    busy_slots: int = Field(0, ge=0)
    queue_depth: int = Field(0, ge=0)


class RunnerStanding(_Model):
    """What the core makes of a runner: the answer to registration and to every heartbeat."""

    runner_id: int
    state: Literal["joined", "active", "draining", "left", "revoked", "refused"]
    gpu_type: str
    quarantined: bool = False
    note: str | None = Field(None, description="why it is refused, revoked, left or quarantined")
    canary: Literal["ok", "drifted", "needs_confirmation", "no_baseline"] | None = Field(
        None, description="in the answer to a canary report: the verdict; needs_confirmation asks for a second one"
    )


class ValidateRequest(_Model):
    """`POST /v1/problems/validate`: the admission self-test of a problem module."""

    problem_source: str = Field(min_length=1, max_length=MAX_SOURCE_BYTES)
    dtype: DType = "float32"
    device_kind: Literal["auto", "gpu", "cpu"] = "auto"


class ValidateCheck(_Model):
    """One admission check: the reference must pass, each obviously wrong output must fail."""

    case: str
    check: Literal["reference", "zeros", "constant", "copy_input", "flops"]
    expect: Literal["pass", "fail"]
    ok: bool = Field(description="the verdict matched the expectation")
    message: str


class ValidateReport(_Model):
    ok: bool
    slug: str | None = None
    title: str | None = None
    version: int | None = None
    device: str = "unknown"
    checks: list[ValidateCheck] = Field(default_factory=list)
    error: ErrorInfo | None = None


# -- canaries: a fixed set of reference kernels every runner times, so the core can tell when its timing drifts --


class CanaryTiming(_Model):
    """One reference kernel's measurement on one slot (runner/daemon/canary_kernels.py)."""

    name: str = Field(min_length=1, max_length=64, description="the kernel's name within its set, e.g. `add_fp32_2^24`")
    median_us: float = Field(gt=0, description="the median of the samples, in microseconds")
    rse: float = Field(ge=0, description="the relative standard error of that median (0.01 = 1 %)")
    samples: int = Field(ge=1)


class CanaryReport(_Model):
    """What one slot's canary run measured. Reports are compared only within one `set_version` and `gpu_type`."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    device: Literal["gpu", "cpu"]
    gpu_type: str = Field(min_length=1, max_length=64, description="the board key of the slot's device (`cpu`)")
    set_version: int = Field(ge=1, description="changes whenever the kernel set or how it is timed changes")
    timings: list[CanaryTiming] = Field(min_length=1)
    sm_clock_mhz: float | None = Field(None, gt=0, description="the SM clock read while the GPU ran a canary")
    measured_at: datetime
