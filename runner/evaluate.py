"""The evaluation pipeline for one submission: load, verify every test case, then benchmark.

This runs inside a worker process (`runner.worker`), never in the daemon or the CLI process.
"""

from __future__ import annotations

import logging
import platform
import secrets
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from problems.base import DeviceKind, Problem, TestCase
from problems.registry import UnknownProblemError, get_problem, load_problem_source
from problems.verification import describe_mismatch
from runner.api import (
    CaseTiming,
    ErrorInfo,
    JobEvent,
    JobRequest,
    MeasureConfig,
    SubmissionResult,
    TestOutcome,
    arithmetic_mean,
    geometric_mean,
)
from runner.compile import compile_cuda, cuda_arch
from runner.errors import (
    ImplausibleTimeError,
    NoGpuError,
    SolutionRuntimeError,
    SubmissionError,
    UnknownProblemCodeError,
    UnsupportedDtypeError,
    WrongAnswerError,
)
from runner.hardware import implausible_time, physical_floor_s, spec_for
from runner.loader import Solution, load_cuda_solution, load_python_solution
from runner.measure import measure_case
from runner.measure.gpu import ArenaEventTimer, reset_persisting_l2
from runner.measure.measurement import SampleTimer
from runner.measure.timers import MonotonicTimer, SeedEventTimer, seed_warmup

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

EventSink = Callable[[JobEvent], None]


@dataclass
class EventStream:
    """Numbers events and hands them to a sink."""

    sink: EventSink
    seq: int = 0

    def emit(self, type_: Any, **payload: Any) -> None:
        self.seq += 1
        self.sink(JobEvent(seq=self.seq, type=type_, **payload))


@dataclass
class Evaluation:
    """State of one job as it moves through its phases."""

    request: JobRequest
    workdir: Path
    events: EventStream
    problem: Problem = field(init=False)
    device: str = field(init=False)
    device_kind: DeviceKind = field(init=False)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    tests: list[TestOutcome] = field(default_factory=list)
    timings: list[CaseTiming] = field(default_factory=list)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.phase_seconds[name] = round(self.phase_seconds.get(name, 0.0) + time.perf_counter() - start, 4)

    def result(self, status: Any, error: ErrorInfo | None = None) -> SubmissionResult:
        req = self.request
        gflops = [t.gflops for t in self.timings]
        gbps = [t.gbps for t in self.timings]
        problem = getattr(self, "problem", None)
        return SubmissionResult(
            submission_id=req.submission_id,
            problem_slug=req.problem_slug,
            problem_version=req.problem_version,
            dtype=req.dtype,
            language=req.language,
            mode=req.mode,
            status=status,
            device=getattr(self, "device", "unknown"),
            tests=self.tests,
            timings=self.timings,
            score_metric=problem.score_metric if problem else "gflops",
            geomean_gflops=geometric_mean(gflops),
            mean_gflops=arithmetic_mean(gflops),
            geomean_gbps=geometric_mean(gbps),
            mean_gbps=arithmetic_mean(gbps),
            error=error,
            phase_seconds=self.phase_seconds,
        )


def evaluate(request: JobRequest, workdir: Path, sink: EventSink) -> SubmissionResult:
    """Run one job to completion and return its result; the `done` event carries the same result."""
    ev = Evaluation(request, workdir, EventStream(sink))
    try:
        result = _run(ev)
    except SubmissionError as exc:
        result = ev.result("failed" if isinstance(exc, WrongAnswerError) else "error", exc.info())
    ev.events.emit("done", message=result.status, result=result)
    return result


def resolve_problem(request: JobRequest) -> Problem:
    if request.problem_source is not None:
        problem = load_problem_source(request.problem_source, module_name=f"arena_problem_{request.problem_slug}")
    else:
        try:
            problem = get_problem(request.problem_slug)
        except UnknownProblemError as exc:
            raise UnknownProblemCodeError(str(exc)) from exc
    if request.dtype not in problem.dtypes:
        raise UnsupportedDtypeError(
            f"{problem.slug} does not support {request.dtype}; choose one of {', '.join(problem.dtypes)}."
        )
    return problem


def _run(ev: Evaluation) -> SubmissionResult:
    import torch

    req = ev.request
    ev.problem = resolve_problem(req)
    has_gpu = torch.cuda.is_available() and req.device_kind != "cpu"
    if req.device_kind == "gpu" and not torch.cuda.is_available():
        raise NoGpuError("This runner has no CUDA GPU, and the job asked for one.")
    ev.device_kind = "gpu" if has_gpu else "cpu"
    ev.device = torch.cuda.get_device_name() if has_gpu else f"CPU ({platform.machine()})"
    ev.events.emit("accepted", message=ev.device)

    with ev.phase("compile"):
        solution = _load(ev)
    cases = ev.problem.generate_test_cases(req.dtype, ev.device_kind)
    # A ranked run always draws a fresh secret seed: no caller, not even the bot, can replay known inputs.
    seed = req.seed if req.seed is not None and req.mode != "ranked" else secrets.randbits(62)

    with ev.phase("test"):
        for index, case in enumerate(cases):
            outcome = _run_test(ev, solution, case, index, seed)
            ev.tests.append(outcome)
            ev.events.emit("test_case", index=index, count=len(cases), test=outcome, message=outcome.message)
            if not outcome.passed:
                raise WrongAnswerError(f"Wrong answer on case {case['name']}: {outcome.message}")
    if req.mode == "test":
        return ev.result("passed")

    with ev.phase("benchmark"):
        timer = _timer(_measure_config(ev))
        for index, case in enumerate(cases):
            timing = _run_benchmark(ev, solution, timer, case, index, seed)
            ev.timings.append(timing)
            ev.events.emit("benchmark_case", index=index, count=len(cases), timing=timing)
    return ev.result("passed")


def _load(ev: Evaluation) -> Solution:
    import torch

    req = ev.request
    src_dir = ev.workdir / "src"
    src_dir.mkdir(parents=True, exist_ok=True)
    if req.language == "cuda":
        ev.events.emit("compiling", phase="nvcc")
        capability = torch.cuda.get_device_capability() if ev.device_kind == "gpu" else None
        built = compile_cuda(req.source, ev.workdir / "build", cuda_arch(capability))
        ev.events.emit("compiled", message=f"{built.seconds:.2f} s", phase="nvcc")
        # Loading needs no GPU, so a missing `solution` symbol is reported even on a CPU runner.
        solution = load_cuda_solution(built.path, ev.problem, req.dtype)
        if ev.device_kind != "gpu":
            raise NoGpuError(
                "The CUDA source compiled, but this runner has no GPU to run it on. "
                "Submit to a GPU runner, or send a .py solution to run on the CPU."
            )
        return solution
    if req.language == "triton" and ev.device_kind != "gpu":
        raise NoGpuError(
            "Triton kernels need a GPU, and this runner has none. Submit a plain PyTorch .py for CPU runs."
        )
    ev.events.emit("compiling", phase="import")
    path = src_dir / "submission.py"
    path.write_text(req.source, encoding="utf-8")
    solution = load_python_solution(path)
    ev.events.emit("compiled", phase="import")
    return solution


def _device(ev: Evaluation) -> str:
    return "cuda" if ev.device_kind == "gpu" else "cpu"


def _make_case(
    ev: Evaluation, case: TestCase, index: int, seed: int
) -> tuple[tuple[torch.Tensor, ...], tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]:
    """Fresh inputs for a case, the reference outputs, and NaN-poisoned output buffers."""
    import torch

    from problems.inputs import torch_dtype

    gen = torch.Generator(device=_device(ev)).manual_seed(seed + index)
    inputs = tuple(t.contiguous() for t in case["create_inputs"](gen))
    expected = ev.problem.reference_outputs(inputs)
    out_dtype = torch_dtype(ev.problem.output_dtype(ev.request.dtype))
    outputs = tuple(torch.full(e.shape, float("nan"), dtype=out_dtype, device=_device(ev)) for e in expected)
    return inputs, expected, outputs


def _call_solution(ev: Evaluation, solution: Solution, call: Callable[[], object], case_name: str) -> None:
    import torch

    try:
        call()
        if ev.device_kind == "gpu":
            torch.cuda.synchronize()
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        tb = traceback.format_exc() if solution.language != "cuda" else None
        raise SolutionRuntimeError(f"The solution failed on case {case_name}: {first}", log=tb) from exc


def _verify(ev: Evaluation, expected: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor]) -> tuple[bool, dict]:
    for expected_out, actual in zip(expected, outputs, strict=True):
        passed, details = ev.problem.verify_result(expected_out, actual, ev.request.dtype)
        if not passed:
            return False, details
    return True, details


def _run_test(ev: Evaluation, solution: Solution, case: TestCase, index: int, seed: int) -> TestOutcome:
    inputs, expected, outputs = _make_case(ev, case, index, seed)
    extras = ev.problem.get_extra_params(case)
    _call_solution(ev, solution, solution.bind(inputs, outputs, extras), case["name"])
    passed, details = _verify(ev, expected, outputs)
    message = "passed" if passed else describe_mismatch(details)
    return TestOutcome(
        index=index, name=case["name"], dims=list(case["dims"]), passed=passed, message=message, details=details
    )


# Input sets rotated during timing share this much memory, so large cases keep at least one set.
INPUT_POOL_BYTES = 2 * 1024**3


def _check_plausible(ev: Evaluation, case: TestCase, timing: CaseTiming) -> None:
    """Reject a time no correct kernel can reach on this GPU: it must never be ranked."""
    spec = spec_for(ev.device) if ev.device_kind == "gpu" else None
    floor = None
    if spec is not None:
        floor = physical_floor_s(spec, timing.flops, timing.bytes, ev.request.dtype)
    reason = implausible_time(timing.runtime_median_us / 1e6, floor)
    if reason is not None:
        raise ImplausibleTimeError(f"Case {case['name']} was rejected: {reason}.")


def _measure_config(ev: Evaluation) -> MeasureConfig:
    config = ev.request.measure
    if ev.device_kind == "cpu":
        return config.model_copy(update={"method": "cpu", "input_sets": 1})
    if config.method == "cpu":
        return config.model_copy(update={"method": "arena"})
    if config.method == "seed":
        return config.model_copy(update={"input_sets": 1})
    return config


def _timer(config: MeasureConfig) -> SampleTimer:
    if config.method == "arena":
        return ArenaEventTimer()
    if config.method == "seed":
        if config.warmup:
            seed_warmup()
        return SeedEventTimer()
    return MonotonicTimer()


def _run_benchmark(
    ev: Evaluation, solution: Solution, timer: SampleTimer, case: TestCase, index: int, seed: int
) -> CaseTiming:
    config = _measure_config(ev)
    bytes_per_set = max(ev.problem.get_bytes(case, ev.request.dtype), 1)
    n_sets = max(1, min(config.input_sets, INPUT_POOL_BYTES // bytes_per_set))
    extras = ev.problem.get_extra_params(case)
    # Set 0 uses the same seed as the test of this case; the others are fresh draws.
    sets = [_make_case(ev, case, index + 7919 * k, seed) for k in range(n_sets)]
    calls = [solution.bind(inputs, outputs, extras) for inputs, _, outputs in sets]
    if config.method == "arena":
        reset_persisting_l2()
    try:
        timing = measure_case(
            calls,
            timer,
            config,
            flops=ev.problem.get_flops(case),
            bytes_moved=ev.problem.get_bytes(case, ev.request.dtype),
            index=index,
            name=case["name"],
            dims=list(case["dims"]),
        )
    except SubmissionError:
        raise
    except Exception as exc:
        raise SolutionRuntimeError(f"The solution failed while being timed on case {case['name']}: {exc}") from exc
    _check_plausible(ev, case, timing)
    for _, expected, outputs in sets:
        passed, details = _verify(ev, expected, outputs)
        if not passed:
            raise WrongAnswerError(
                f"The output of case {case['name']} was wrong after timing: {describe_mismatch(details)}"
            )
    return timing
