"""The judge's pipeline for one submission: have it loaded, verify every test case, then benchmark.

This runs in the judge process (`runner.judge.main`), never in the daemon or the CLI process. The submission
itself runs in the launcher (`runner.launcher.main`), reached through a LauncherLink: this process generates the
inputs, owns the expected outputs, verifies, and computes every statistic.

Kept as one module: the judge's pipeline in the order it runs (prepare, load, test, benchmark); the parts that stand
alone are case_buffers.py, judged_timer.py and case_protocol.py.
"""

from __future__ import annotations

import logging
import os
import platform
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from contract.precision import SassAudit
from contract.wire import (
    OUTPUT_KEEP_BYTES,
    CaseTiming,
    ErrorInfo,
    JobEvent,
    JobRequest,
    MeasureConfig,
    MeasuredPeaks,
    PhaseOutput,
    ProfileReport,
    SubmissionResult,
    TestOutcome,
    arithmetic_mean,
    geometric_mean,
)
from problems.base import DeviceKind, Problem, TestCase
from problems.verification import describe_mismatch, is_poisoned
from runner.errors import (
    BadRequestError,
    CallTimeoutError,
    ImplausibleTimeError,
    LauncherLostError,
    NoGpuError,
    PrecisionError,
    SolutionRuntimeError,
    SubmissionError,
    WrongAnswerError,
)
from runner.gpus import implausible_time, physical_floor, spec_for
from runner.judge import precision
from runner.judge.case_buffers import CaseBuffers
from runner.judge.case_protocol import HOST_BOUND_LINE, time_case
from runner.judge.floor_work import unavoidable_work
from runner.judge.judged_timer import JudgedTimer
from runner.judge.launcher_link import LauncherLink
from runner.judge.tripwires import source_notes
from runner.problem_lookup import resolve_problem
from runner.protocol import protocol_version
from runner.timing import measure_case
from runner.timing.gpu import GpuSensors
from runner.timing.methods import method_for, method_named

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

EventSink = Callable[[JobEvent], None]
Ready = Callable[[], bool]
"""Blocks until the submission may be loaded (its library built); False when the job ended before that."""


class AuditSource(Protocol):
    """The runner's precision audit, in two halves: `ask` once the tests have passed (a Python run's cubins are
    read only then), `read` when the judge needs the audit (None when none came)."""

    def ask(self) -> None: ...

    def read(self) -> SassAudit | None: ...


class WithdrawnError(Exception):
    """The runner ended the job before its submission was ready to load (a compile error, a cancel)."""


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
    peaks: MeasuredPeaks | None = None
    problem: Problem = field(init=False)
    device: str = field(init=False)
    device_kind: DeviceKind = field(init=False)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    tests: list[TestOutcome] = field(default_factory=list)
    timings: list[CaseTiming] = field(default_factory=list)
    output: list[PhaseOutput] = field(default_factory=list)
    # The phase whose printed output has not been collected yet (None between phases).
    printing: str | None = None
    # The launcher's capture files (stdout's, stderr's), read here directly when the launcher dies.
    capture_files: tuple[int, int] | None = None
    # How many hidden shapes a ranked run was verified on too (0: none).
    holdout_verified: int = 0
    # The precision audit (a CUDA build's, or the Triton cubins' of a Python run on a GPU): how to wait for it, and
    # what it found once read.
    read_audit: AuditSource | None = None
    audit: SassAudit | None = None

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.phase_seconds[name] = round(self.phase_seconds.get(name, 0.0) + time.perf_counter() - start, 4)

    def result(
        self, status: Any, error: ErrorInfo | None = None, profile: ProfileReport | None = None
    ) -> SubmissionResult:
        req = self.request
        gflops = [t.gflops for t in self.timings]
        gbps = [t.gbps for t in self.timings]
        problem = getattr(self, "problem", None)
        return SubmissionResult(
            submission_id=req.submission_id,
            problem_slug=req.problem_slug,
            problem_version=req.problem_version or (problem.version if problem is not None else 1),
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
            notes=source_notes(req.language, req.source)
            + _timing_notes(self.timings)
            + _printing_notes(self.output)
            + _holdout_notes(self.holdout_verified)
            + (precision.notes(problem, req.dtype, self.audit, ranked=req.mode == "ranked") if problem else []),
            profile=profile,
            output=self.output,
            protocol=protocol_version() if self.timings else None,
        )


# How long the judge waits for the launcher's report of the output: it answers at once unless it is stuck.
OUTPUT_REPLY_TIMEOUT_S = 30.0

PRINTED_WHILE_TIMED = (
    "The solution printed during its timed calls: printing is part of the measured time. Remove the prints "
    "to be timed on the work alone."
)


def _holdout_notes(verified: int) -> list[str]:
    return [f"Also verified on {verified} hidden shapes, not timed (ranked runs only)."] if verified else []


def _printing_notes(output: list[PhaseOutput]) -> list[str]:
    return [PRINTED_WHILE_TIMED] if any(o.phase == "benchmark" for o in output) else []


def _collect_output(ev: Evaluation, link: LauncherLink, *, failing: bool = False) -> None:
    """Close the phase `ev.printing`: keep what the solution printed during it, if anything. When the phase
    ended well, a launcher that cannot report is the job's error (`SubmissionError`); when it is `failing`,
    the job's own error says what happened, and the output is lost with the process."""
    phase, ev.printing = ev.printing, None
    if phase is None:
        return
    try:
        printed = link.output(OUTPUT_REPLY_TIMEOUT_S)
    except SubmissionError as exc:
        if not failing:
            raise
        log.debug("no output for phase %s: %s", phase, exc.message)
        return
    _keep(ev, phase, (printed.stdout, printed.stdout_cut), (printed.stderr, printed.stderr_cut))


def _read_left_output(ev: Evaluation) -> None:
    """The launcher died during `ev.printing`: what it printed until then, read from the capture files it sent."""
    phase, ev.printing = ev.printing, None
    if phase is None or ev.capture_files is None:
        return
    streams: list[tuple[str, int]] = []
    for fd in ev.capture_files:
        try:
            size = os.fstat(fd).st_size
            data = os.pread(fd, min(size, OUTPUT_KEEP_BYTES), 0) if size else b""
        except OSError:
            size, data = 0, b""
        streams.append((data.decode("utf-8", "replace"), max(size - len(data), 0)))
    _keep(ev, phase, streams[0], streams[1])


def _keep(ev: Evaluation, phase: str, stdout: tuple[str, int], stderr: tuple[str, int]) -> None:
    kept = PhaseOutput(
        phase=phase, stdout=stdout[0], stderr=stderr[0], stdout_cut_bytes=stdout[1], stderr_cut_bytes=stderr[1]
    )
    if not kept.empty:
        ev.output.append(kept)


def _timing_notes(timings: list[CaseTiming]) -> list[str]:
    notes = []
    waiting = [t.name for t in timings if t.host_waits]
    if waiting:
        notes.append(
            f"The call waits for the GPU inside (a synchronise, .item() or a blocking copy) on {', '.join(waiting)}: "
            "its time includes the host's part of that wait. Remove the wait to be timed on the GPU's work alone."
        )
    bound = [t.name for t in timings if t.host_bound]
    if bound:
        notes.append(
            f"{HOST_BOUND_LINE} on {', '.join(bound)}: the runner's own clock saw each call take longer than its "
            "timing events, so the case is timed by the clock that sees all the work. Do less on the host inside "
            "the call to be timed on the GPU's work alone."
        )
    return notes


def evaluate(
    request: JobRequest,
    workdir: Path,
    sink: EventSink,
    link: LauncherLink,
    peaks: MeasuredPeaks | None = None,
    ready: Ready | None = None,
    audit: AuditSource | None = None,
) -> SubmissionResult | None:
    """Judge one job to completion and return its result; the `done` event carries the same result.

    The submission runs in the launcher behind `link`; this process never loads it. `peaks` are the rates the
    runner measured on this GPU, for the physical floor. Both processes prepare (CUDA contexts, the first
    reference outputs) before `ready` lets the submission be loaded; None when the job ended before that.
    """
    ev = Evaluation(request, workdir, EventStream(sink), peaks, read_audit=audit)
    try:
        result = _run(ev, link, ready or (lambda: True))
    except WithdrawnError:
        return None
    except SubmissionError as exc:
        # What the solution printed is what one debugs a failure with.
        if isinstance(exc, LauncherLostError):
            _read_left_output(ev)
        elif not isinstance(exc, CallTimeoutError):
            _collect_output(ev, link, failing=True)
        result = ev.result("failed" if isinstance(exc, WrongAnswerError) else "error", exc.info())
    finally:
        for fd in ev.capture_files or ():
            os.close(fd)
    ev.events.emit("done", message=result.status, result=result)
    return result


def _run(ev: Evaluation, link: LauncherLink, ready: Ready) -> SubmissionResult:
    import torch

    req = ev.request
    ev.problem = resolve_problem(req)
    has_gpu = torch.cuda.is_available() and req.device_kind != "cpu"
    if req.device_kind == "gpu" and not torch.cuda.is_available():
        raise NoGpuError("This runner has no CUDA GPU, and the job asked for one.")
    ev.device_kind = "gpu" if has_gpu else "cpu"
    ev.device = torch.cuda.get_device_name() if has_gpu else f"CPU ({platform.machine()})"
    if not has_gpu:
        torch.set_num_threads(1)  # the launcher runs on these cores too: the judge must not compete for them
    ev.events.emit("accepted", message=ev.device)
    cases = ev.problem.generate_test_cases(req.dtype, ev.device_kind)
    _prepare(ev, link, cases)
    if not ready():
        raise WithdrawnError

    with ev.phase("compile"):
        ev.events.emit("compiling", phase="nvcc" if req.language == "cuda" else "import")
        ev.printing = "load"
        ev.capture_files = link.output_files()
        link.load(req)
        _collect_output(ev, link)
        ev.events.emit("compiled", phase="nvcc" if req.language == "cuda" else "import")
    # A ranked run always draws a fresh secret seed: no caller, not even the bot, can replay known inputs.
    seed = req.seed if req.seed is not None and req.mode != "ranked" else secrets.randbits(62)

    with ev.phase("test"):
        ev.printing = "test"
        for index, case in enumerate(cases):
            outcome = _run_test(ev, link, case, index, seed)
            ev.tests.append(outcome)
            ev.events.emit("test_case", index=index, count=len(cases), test=outcome, message=outcome.message)
            if not outcome.passed:
                raise WrongAnswerError(f"Wrong answer on case {case['name']}: {outcome.message}")
        if req.mode == "ranked":
            _verify_holdout(ev, link, seed)
        _collect_output(ev, link)
    if ev.read_audit is not None and _audited(ev):
        ev.read_audit.ask()
    if req.mode == "test":
        _audit_precision(ev)
        return ev.result("passed")
    if req.mode == "profile":
        _audit_precision(ev)
        # The runner profiles the case in a process of its own (runner.profiling.run); the judge only names it.
        return ev.result("passed", profile=profile_target(ev.problem, cases, req.dtype, req.profile_case))

    with ev.phase("benchmark"):
        config = _measure_config(ev)
        if method_named(config.method).seed_warmup and config.warmup:
            link.warmup()
        sensors = GpuSensors.open(0) if ev.device_kind == "gpu" else None
        ev.printing = "benchmark"
        for index, case in enumerate(cases):
            timing = _run_benchmark(ev, link, case, index, seed, sensors)
            ev.timings.append(timing)
            ev.events.emit("benchmark_case", index=index, count=len(cases), timing=timing)
        _collect_output(ev, link)
    # Read after the timing, not before it: the runner's cuobjdump then runs while the cases are timed (on an H100
    # it kept a small matmul's job waiting 0.71 s before its first case). A ranked run below the board's precision
    # is refused all the same, its timings unused.
    _audit_precision(ev)
    return ev.result("passed")


HOLDOUT_FAILED = (
    "A hidden test shape failed: a ranked run is also verified on shapes drawn from the problem's ranges that are "
    "not in the public list (ragged sizes, other aspect ratios), and this solution is right on the public shapes "
    "only, so it is not ranked. The hidden shape is not shown; make the kernel handle every size the problem "
    "allows (`arena show` gives the ranges' public ends)."
)


def _verify_holdout(ev: Evaluation, link: LauncherLink, seed: int) -> None:
    """A ranked run's hidden shapes: verified, never timed, never shown. The shapes come from the judge's own
    randomness, fresh for each run, so that no run can learn them for the next."""
    cases = ev.problem.holdout_cases(ev.request.dtype, ev.device_kind, secrets.randbits(62))
    for index, case in enumerate(cases):
        try:
            outcome = _run_test(ev, link, case, len(ev.tests) + index, seed)
        except SolutionRuntimeError as exc:
            raise SolutionRuntimeError(f"{HOLDOUT_FAILED} (It failed to run there.)", log=exc.log) from None
        if not outcome.passed:
            raise WrongAnswerError(HOLDOUT_FAILED)
    if cases:
        ev.holdout_verified = len(cases)


def _audit_precision(ev: Evaluation) -> None:
    """Read the precision audit and refuse a ranked run whose matrix math is below the board's precision
    (`runner.judge.precision`). A CUDA build's SASS was read while the tests ran; the cubins Triton compiled for a
    Python run on a GPU are read now, once the tests and hidden shapes have compiled every kernel they call. On the
    CPU a Python run compiles nothing to audit, and the judge asks for nothing."""
    if ev.read_audit is None or not _audited(ev):
        return
    with ev.phase("audit"):  # the wait for the daemon's cuobjdump
        ev.audit = ev.read_audit.read()
    if ev.audit is None or ev.request.mode != "ranked":
        return
    message = precision.refusal(ev.problem, ev.request.dtype, ev.audit)
    if message is not None:
        raise PrecisionError(message)


def _audited(ev: Evaluation) -> bool:
    """Whether this run has code to audit: a CUDA build, or Triton cubins of a Python run on a GPU."""
    return ev.request.language == "cuda" or ev.device_kind == "gpu"


def profile_target(problem: Problem, cases: Sequence[TestCase], dtype: str, index: int | None) -> ProfileReport:
    """The case a profile runs (`index`, or the one with the most FLOPs, then bytes) with its formula's figures."""
    if index is None:
        index = max(range(len(cases)), key=lambda i: (problem.get_flops(cases[i]), problem.get_bytes(cases[i], dtype)))
    elif index >= len(cases):
        raise BadRequestError(
            f"{problem.slug} has {len(cases)} test cases (0 to {len(cases) - 1}); there is no case {index} to profile."
        )
    case = cases[index]
    return ProfileReport(
        case_index=index,
        case_name=str(case["name"]),
        formula_flops=problem.get_flops(case),
        formula_bytes=problem.get_bytes(case, dtype),
    )


def _prepare(ev: Evaluation, link: LauncherLink, cases: Sequence[TestCase]) -> None:
    """What the first test would otherwise pay, done while the runner compiles: this process's CUDA context,
    the libraries and kernels of the problem's reference and of the check (one reference output of the first
    case, checked against itself), and the launcher's context and timing harness. Nothing here sees the
    submission; a failure is left for the test itself to report."""
    if cases:
        try:
            case = cases[0]
            extras = ev.problem.get_extra_params(case)
            inputs = tuple(t.contiguous() for t in case["create_inputs"](_warmup_generator(ev)))
            expected = ev.problem.reference_outputs(inputs, extras)
            _verify(ev, expected, [e.clone() for e in expected])
            _sync(ev)
        except Exception:
            log.debug("preparing on case %s failed; the test will say why", cases[0]["name"], exc_info=True)
    link.prepare()


def _warmup_generator(ev: Evaluation) -> torch.Generator:
    import torch

    # Not the job's seed: these inputs are thrown away, and nothing timed or checked is drawn from them.
    return torch.Generator(device=_device(ev)).manual_seed(0)


def _device(ev: Evaluation) -> str:
    return "cuda" if ev.device_kind == "gpu" else "cpu"


@contextmanager
def _failures_on(case_name: str, timed: bool = False) -> Iterator[None]:
    """Name the case in the launcher's runtime errors."""
    try:
        yield
    except SolutionRuntimeError as exc:
        where = "while being timed on" if timed else "on"
        raise SolutionRuntimeError(f"The solution failed {where} case {case_name}: {exc.message}", log=exc.log) from exc


def _sync(ev: Evaluation) -> None:
    if ev.device_kind == "gpu":
        import torch

        torch.cuda.synchronize()


def _verify(ev: Evaluation, expected: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor]) -> tuple[bool, dict]:
    for expected_out, actual in zip(expected, outputs, strict=True):
        passed, details = ev.problem.verify_result(expected_out, actual, ev.request.dtype)
        if not passed:
            return False, details
    return True, details


def _share(ev: Evaluation, link: LauncherLink, buffers: CaseBuffers, *, reset_l2: bool) -> None:
    _sync(ev)
    link.share(buffers.share_message(), buffers.arena.fd, reset_l2=reset_l2)


def _run_test(ev: Evaluation, link: LauncherLink, case: TestCase, index: int, seed: int) -> TestOutcome:
    buffers = CaseBuffers.allocate(ev.problem, case, ev.request.dtype, _device(ev), 1)
    try:
        buffers.draw(0, seed + index)
        _share(ev, link, buffers, reset_l2=False)
        with _failures_on(case["name"]):
            returned_tensor = link.call(0)
        _sync(ev)
        test_set = buffers.sets[0]
        passed, details = _verify(ev, test_set.expected, test_set.outputs)
        unwritten = not passed and all(is_poisoned(o) for o in test_set.outputs)
    finally:
        buffers.close()
    message = "passed" if passed else describe_mismatch(details)
    if unwritten and returned_tensor:
        message = (
            "solution returned a tensor but never wrote the output (every element still holds the NaN, or all-ones "
            "bits, it was filled with). Write the result into the output tensor, e.g. `output.copy_(result)`, "
            "instead of returning it."
        )
    elif unwritten:
        message = (
            "the output was never written (every element still holds the NaN, or all-ones bits, it was filled "
            f"with). Write the result into the output tensor in place. {message}"
        )
    return TestOutcome(
        index=index, name=case["name"], dims=list(case["dims"]), passed=passed, message=message, details=details
    )


# The input sets of a case (one per sample of a batch) share a sixteenth of the GPU's memory, within these
# bounds; large cases keep at least one set. The wall-clock check's resolution per call is the host's jitter
# per batch divided by the batch's samples: with 2 GiB, a 2^26 vector add got 2 sets, and an honest kernel's
# two-sample batches on an H200 once drifted 122 µs apart, past the 20 % bound.
MIN_GPU_POOL_BYTES = 2 * 1024**3
MAX_GPU_POOL_BYTES = 8 * 1024**3
# On the CPU the arena is a memfd, which counts against the sandbox's file-size limit.
CPU_POOL_BYTES = 16 * 1024**2


def _pool_bytes(ev: Evaluation) -> int:
    if ev.device_kind != "gpu":
        return CPU_POOL_BYTES
    import torch

    total = int(torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory)
    return min(max(total // 16, MIN_GPU_POOL_BYTES), MAX_GPU_POOL_BYTES)


def _l2_bytes() -> int:
    import torch

    return int(torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size)


def _check_plausible(ev: Evaluation, case: TestCase, timing: CaseTiming, output_bytes: int, flushed: bool) -> None:
    """Reject a time no correct kernel can reach on this GPU: it must never be ranked. The floor counts only the
    work every algorithm must do (runner.judge.floor_work), so a cleverer algorithm than the formula's passes."""
    floor = None
    work = None
    if ev.device_kind == "gpu":
        work = unavoidable_work(
            ev.problem.time_floor,
            flops=timing.flops,
            counted_bytes=timing.bytes,
            output_bytes=output_bytes,
            l2_bytes=_l2_bytes(),
            l2_flushed=flushed,
        )
        # Peaks measured on another GPU (a CLI run that sees several) say nothing about this one.
        peaks = ev.peaks if ev.peaks is not None and ev.peaks.device == ev.device else None
        floor = physical_floor(work.flops, work.dram_bytes, ev.request.dtype, spec_for(ev.device), peaks)
    reason = implausible_time(timing.runtime_median_us / 1e6, floor)
    if reason is not None:
        counted = f" (the work no correct solution avoids: {work.describe()})" if work is not None else ""
        raise ImplausibleTimeError(f"Case {case['name']} was rejected: {reason}{counted}.")


def _measure_config(ev: Evaluation) -> MeasureConfig:
    """The job's MeasureConfig as this runner times it: a method of another device kind gives way to this kind's
    default, and the method fixes what it fixes (the seed's single input set)."""
    config = ev.request.measure
    return method_for(config.method, ev.device_kind).configure(config)


def _run_benchmark(
    ev: Evaluation, link: LauncherLink, case: TestCase, index: int, seed: int, sensors: GpuSensors | None
) -> CaseTiming:
    config = _measure_config(ev)
    method = method_named(config.method)
    bytes_per_set = max(ev.problem.get_bytes(case, ev.request.dtype), 1)
    # Small cases get many sets (big batches), so that the wall-clock check averages the host's jitter.
    n_sets = max(1, min(method.sets_for(config), _pool_bytes(ev) // bytes_per_set))
    with ev.phase("benchmark_buffers"):  # a part of `benchmark`: where a case's fixed cost goes
        buffers = CaseBuffers.allocate(ev.problem, case, ev.request.dtype, _device(ev), n_sets)
    output_bytes = sum(o.numel() * o.element_size() for o in buffers.sets[0].outputs)

    def verify(k: int) -> None:
        _sync(ev)
        timed = buffers.sets[k]
        passed, details = _verify(ev, timed.expected, timed.outputs)
        if not passed:
            raise WrongAnswerError(
                f"The output of case {case['name']} was wrong on a timed call: {describe_mismatch(details)}"
            )

    try:
        with ev.phase("benchmark_buffers"):
            _share(ev, link, buffers, reset_l2=method.flushes_l2)
        timer = JudgedTimer(link, buffers, verify, method, seed, index, device_name=ev.device, sensors=sensors)

        def measure() -> CaseTiming:
            return measure_case(
                [None],
                timer,
                config,
                flops=ev.problem.get_flops(case),
                bytes_moved=ev.problem.get_bytes(case, ev.request.dtype),
                index=index,
                name=case["name"],
                dims=list(case["dims"]),
            )

        with _failures_on(case["name"], timed=True):
            timing = time_case(timer, measure, ranked=ev.request.mode == "ranked")
    finally:
        buffers.close()
    _check_plausible(ev, case, timing, output_bytes, method.flushes_l2)
    return timing
