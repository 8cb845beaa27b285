"""Runs one job on this host: compile in the sandbox, then judge it with two fresh sandboxed processes.

The judge (runner.judge.main) owns the inputs, the expected outputs, the verdict and the statistics; the launcher
(runner.launcher.main) loads the submission and runs the calls the judge asks for. The caller (the CLI, or the
daemon's job table) never imports torch or the submission: a crash, a hang or a flood of output in the
launcher becomes an error result here, and the caller keeps going. Deadlines per phase (compile, tests,
benchmark) and per job are kept here, from the judge's events, and enforced by killing both process groups.
A profile job, once its tests passed, runs the profiler (`runner.profiling.run`) in a sandboxed process of its own.

Kept as one module: one job's steps on the host in the order they run (stage, compile, judge, profile, tear down),
sharing the job's directories and events; the executor and the sandbox are apart.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import shutil
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from contract.wire import (
    CaseTiming,
    ErrorInfo,
    JobEvent,
    JobRequest,
    SubmissionResult,
    TestOutcome,
    ValidateReport,
    ValidateRequest,
)
from runner.errors import CompileError, SubmissionError, trim_log
from runner.host.compile import cache_key, cached_library, clean_log, cuda_arch, nvcc_command, store_library
from runner.host.device_peaks import device_peaks
from runner.host.devices import Slot, default_slot
from runner.host.executor import (
    DEFAULT_JOB_TIMEOUT_S,
    PEAKS_FILE,
    SASS_AUDIT_FILE,
    Deadlines,
    Executor,
    JobProcesses,
    WarmWorker,
    default_executor,
    job_env,
    start_warm_worker,
)
from runner.host.nvcc_schedule import parallel_script
from runner.host.process import SandboxedProcess, describe_exit, describe_memory_limit
from runner.host.sandbox import JobDir, python_command
from runner.job.precision_audit import launcher_cache, write_audit, write_cubin_audit
from runner.judge.tripwires import source_notes
from runner.profiling.availability import ProfilingSupport, jobs_run_as_root, profiling_support
from runner.profiling.run import profile_submission

log = logging.getLogger(__name__)

EventCallback = Callable[[JobEvent], Awaitable[None] | None]

PIPE_CLOSED_GRACE_S = 10.0
SOLUTION_SO = "solution.so"
MALFORMED = "The worker wrote a malformed result line and was stopped."


def failure_result(
    request: JobRequest, code: str, message: str, log_text: str = "", **extra: object
) -> SubmissionResult:
    return SubmissionResult(
        submission_id=request.submission_id,
        problem_slug=request.problem_slug,
        problem_version=request.problem_version or 1,
        dtype=request.dtype,
        language=request.language,
        mode=request.mode,
        status="error",
        device=str(extra.pop("device", "unknown")),
        error=ErrorInfo(code=code, message=message, log=trim_log(log_text) or None),  # type: ignore[arg-type]
        notes=source_notes(request.language, request.source),
        **extra,  # type: ignore[arg-type]
    )


@dataclass
class _PhaseClock:
    """Which phase the worker is in, read from its events, and when that phase (or the job) runs out."""

    deadlines: Deadlines
    mode: str
    job_deadline: float
    phase: str = "compile"
    phase_deadline: float = 0.0

    def __post_init__(self) -> None:
        self.enter("compile")

    def enter(self, phase: str) -> None:
        limits = {"compile": self.deadlines.compile_s, "test": self.deadlines.test_s}
        self.phase = phase
        self.phase_deadline = time.monotonic() + limits.get(phase, self.deadlines.benchmark_s)

    def observe(self, event: JobEvent) -> None:
        if event.type == "compiled" and self.phase == "compile":
            self.enter("test")
        last_test = event.type == "test_case" and event.index is not None and event.index + 1 == event.count
        if last_test and self.mode != "test":
            self.enter("benchmark")

    def remaining(self) -> float:
        return min(self.phase_deadline, self.job_deadline) - time.monotonic()

    def timeout_message(self) -> str:
        if self.job_deadline <= self.phase_deadline:
            return f"The job ran past its {self.deadlines.job_s:.0f} s limit and was stopped."
        messages = {
            "compile": f"Starting your submission took longer than the {self.deadlines.compile_s:.0f} s limit "
            "for compiling and importing: look for slow work at import time.",
            "test": f"The test phase ran past its {self.deadlines.test_s:.0f} s limit and was stopped: look for "
            "an infinite loop or a kernel that never finishes.",
            "benchmark": f"The benchmark phase ran past its {self.deadlines.benchmark_s:.0f} s limit and was "
            "stopped: the solution hangs on some calls, or is far too slow to time.",
        }
        return messages[self.phase]


@dataclass
class _JobRun:
    request: JobRequest
    on_event: EventCallback | None
    executor: Executor
    slot: Slot
    job: JobDir  # the launcher's: nvcc's output and the library it loads
    judge_job: JobDir  # the judge's: the request, seed included
    started: float = field(default_factory=time.monotonic)
    seq: int = 0
    phases: dict[str, float] = field(default_factory=dict)
    tests: list[TestOutcome] = field(default_factory=list)
    timings: list[CaseTiming] = field(default_factory=list)
    prebuilt: bool = False
    library_key: str = ""  # the built library's cache key: in/prebuilt/<key>.so
    warm: WarmWorker | None = None  # the job's processes, held at their gate (always set by run_job)
    # The teardown of the slot's previous job, when it outlives that job's result: nothing of this job touches the
    # GPU before it ends.
    after: Awaitable[object] | None = None

    @property
    def device(self) -> str:
        if self.request.device_kind == "cpu" or not self.slot.is_gpu:
            return f"CPU ({platform.machine()})"
        return self.slot.name

    async def emit(self, event: JobEvent) -> None:
        """Number the event in this job's own sequence and hand it to the caller."""
        self.seq += 1
        event = event.model_copy(update={"seq": self.seq})
        if event.test is not None:
            self.tests.append(event.test)
        if event.timing is not None:
            self.timings.append(event.timing)
        if self.on_event is not None:
            maybe = self.on_event(event)
            if maybe is not None:
                await maybe

    def fail(self, code: str, message: str, log_text: str = "") -> SubmissionResult:
        return failure_result(
            self.request, code, message, log_text, device=self.device, tests=self.tests, timings=self.timings
        )

    async def run(self) -> SubmissionResult:
        """nvcc and the processes' preparation (CUDA contexts, the judge's first reference outputs) overlap:
        the judge is let through its gate's first step before nvcc starts, and loads the submission only once
        the library is in place."""
        assert self.warm is not None
        await self.emit(JobEvent(seq=0, type="accepted", message=self.device))
        if self.request.mode == "profile":
            support = self.profiling_support()
            if not support.available:
                return self.fail("profiler_unavailable", support.note or "This runner cannot profile.")
        await self.stage_request()
        if self.request.language == "cuda":
            # nvcc needs no GPU: it runs while the previous job's processes are still being torn down.
            compiling = asyncio.create_task(self.compile())
            try:
                await self.previous_teardown()
                self.warm.go()
                failed = await compiling
            finally:
                if not compiling.done():
                    compiling.cancel()
                    await asyncio.wait({compiling})
            if failed is not None:
                return failed  # the gate closes with the processes: nothing was loaded
        else:
            await self.previous_teardown()
            self.warm.go()
        if self.request.language == "cuda":
            result = await self.evaluate_audited(self.audit_library)
        elif self.request.device_kind != "cpu" and self.slot.is_gpu:
            result = await self.evaluate_audited(self.audit_cubins)
        else:
            self.warm.built()
            result = await self.evaluate()
        if result.mode == "profile" and result.status == "passed" and result.profile is not None:
            return await self.profile(result)
        return result

    async def evaluate_audited(self, audit: Callable[[Path], Awaitable[object]]) -> SubmissionResult:
        """Judge the submission while `audit` writes its precision audit (runner/job/precision_audit.py) to the
        judge's in/; the gate's `audited` follows, however the audit ends. The judge waits for it only once its
        tests have passed."""
        assert self.warm is not None
        warm = self.warm
        warm.built(audit_follows=True)
        target = self.judge_job.in_dir / SASS_AUDIT_FILE

        async def audited() -> None:
            try:
                await audit(target)
            finally:
                warm.audited()

        auditing = asyncio.create_task(audited())
        try:
            return await self.evaluate()
        finally:
            if not auditing.done():
                auditing.cancel()
            await asyncio.wait({auditing})

    async def audit_library(self, target: Path) -> None:
        """A CUDA build's SASS, read while the judge tests it."""
        library = self.job.in_dir / "prebuilt" / f"{self.library_key}.so"
        await write_audit(self.executor, self.job, library, target)

    async def audit_cubins(self, target: Path) -> None:
        """The cubins Triton compiled for a Python submission, read once the judge says its tests passed (they
        are compiled on the first calls, hidden shapes included)."""
        assert self.warm is not None
        if await self.warm.tested():
            location = launcher_cache(self.executor, self.warm.processes.launcher, self.job)
            await write_cubin_audit(self.executor, self.job, location, target)

    async def previous_teardown(self) -> None:
        """Wait for the slot's previous teardown to end, however it ends (its failure is logged where it ran);
        cancelling this job does not cancel it."""
        if self.after is not None:
            await asyncio.wait({asyncio.ensure_future(self.after)})

    def profiling_support(self) -> ProfilingSupport:
        on_gpu = self.slot.is_gpu and self.request.device_kind != "cpu"
        return profiling_support(on_gpu, jobs_run_as_root(self.executor.sandbox.policy.uid_base))

    async def profile(self, result: SubmissionResult) -> SubmissionResult:
        """After the tests passed (the judge and the launcher have ended): the judge's chosen case under Nsight
        Compute, in a sandboxed process of the job's own."""
        assert result.profile is not None and self.warm is not None
        await self.warm.processes.stop()  # the profiler's process gets the GPU to itself
        await self.emit(
            JobEvent(
                seq=0,
                type="benchmark_case",
                phase="profile",
                index=result.profile.case_index,
                message=f"profiling case {result.profile.case_name}",
            )
        )
        start = time.monotonic()
        limit = min(self.executor.deadlines.benchmark_s, self.started + self.executor.deadlines.job_s - start)
        try:
            report = await profile_submission(
                self.executor.sandbox,
                self.job,
                self.request,
                result.profile,
                slot_env=job_env(self.slot, self.request),
                arch=cuda_arch(self.slot.capability) if self.request.language == "cuda" else None,
                limit_s=limit,
                output_limit=self.executor.output_limit,
                memory_limit=self.executor.memory_limit_bytes,
            )
        except SubmissionError as exc:
            if exc.code == "internal":
                log.error("job %s: %s\n%s", self.request.submission_id, exc.message, exc.log or "")
            return self.fail(exc.code, exc.message, exc.log or "")
        self.phases["profile"] = round(time.monotonic() - start, 4)
        return result.model_copy(update={"profile": report})

    def add_phase(self, name: str, seconds: float) -> None:
        self.phases[name] = round(self.phases.get(name, 0.0) + seconds, 4)

    async def finish(self, result: SubmissionResult) -> SubmissionResult:
        """Stamp the runner's own phase times on the result and send `done` (`run_job` decides whether the teardown
        comes before it)."""
        self.phases["total"] = round(time.monotonic() - self.started, 4)
        result = result.model_copy(update={"phase_seconds": {**result.phase_seconds, **self.phases}})
        await self.emit(JobEvent(seq=0, type="done", message=result.status, result=result))
        return result

    async def compile(self) -> SubmissionResult | None:
        """Build the CUDA source with nvcc in the sandbox, through the cache. A result means it failed."""
        arch = cuda_arch(self.slot.capability)
        key = await asyncio.to_thread(cache_key, self.request.source, arch)  # runs `nvcc --version` once
        await self.emit(JobEvent(seq=0, type="compiling", phase="nvcc"))
        start = time.monotonic()
        cache = self.executor.cache_dir
        cached = cached_library(cache, key) if cache is not None else None
        if cached is None:
            failed = await self._run_nvcc(arch)
            if failed is not None:
                return failed
            built = self.job.out_dir / SOLUTION_SO
            if cache is not None:
                await asyncio.to_thread(store_library, cache, key, built, max_bytes=self.executor.cache_max_bytes)
            cached = built  # the same bytes; the cache copy may already be evicted by a concurrent store
        prebuilt = self.job.in_dir / "prebuilt"
        await asyncio.to_thread(_install_prebuilt, cached, prebuilt / f"{key}.so")
        self.prebuilt = True
        self.library_key = key
        self.phases["nvcc"] = round(time.monotonic() - start, 4)
        message = "cached" if self.phases["nvcc"] < 0.05 else f"{self.phases['nvcc']:.2f} s"
        await self.emit(JobEvent(seq=0, type="compiled", message=message, phase="nvcc"))
        return None

    async def _run_nvcc(self, arch: str) -> SubmissionResult | None:
        source = self.job.in_dir / "solution.cu"
        await asyncio.to_thread(source.write_text, self.request.source, encoding="utf-8")
        try:
            argv = nvcc_command(arch, str(source), str(self.job.out_dir / SOLUTION_SO), self.request.source)
        except CompileError as exc:
            return self.fail(exc.code, exc.message)
        limit = min(self.executor.deadlines.compile_s, self.executor.deadlines.job_s)
        env = {"CUDA_VISIBLE_DEVICES": ""}
        # nvcc's own steps with its two front ends at once, planned here (nvcc --dryrun runs nothing) for the
        # sandbox's paths; plain nvcc when the plan is not one nvcc_schedule knows, or when any step fails.
        schedule = await asyncio.to_thread(
            parallel_script,
            argv,
            self.request.source,
            self.executor.sandbox.environment(self.job, env),
            str(self.job.scratch),
        )
        command = argv if schedule is None else ["/bin/sh", "-c", schedule]
        async with await SandboxedProcess.start(
            self.executor.sandbox,
            self.job,
            lambda _fd: command,
            slot_env=env,
            with_pipe=False,
            writable_out=True,
            output_limit=self.executor.output_limit,
            memory_limit=self.executor.memory_limit_bytes,
        ) as proc:
            returncode = await proc.wait(limit)
            output = clean_log(await proc.output(), self.job.in_dir)
        if proc.memory_exceeded is not None:
            advice = "Simplify the source: deep template instantiation and huge unrolled loops make nvcc use a lot."
            return self.fail("memory_limit", describe_memory_limit(proc.memory_limit, "Compiling", advice), output)
        if returncode is None:
            return self.fail("compile_error", f"nvcc took longer than {limit:.0f} s; simplify the source.", output)
        if returncode != 0 or not (self.job.out_dir / SOLUTION_SO).is_file():
            return self.fail("compile_error", f"nvcc failed with exit code {returncode}.", output or "(no output)")
        return None

    async def stage_request(self) -> None:
        """The judge's inputs, in its private folder before its gate opens: the request and this GPU's peaks."""
        request_file = self.judge_job.in_dir / "request.json"
        await asyncio.to_thread(request_file.write_text, self.request.model_dump_json(), encoding="utf-8")
        if self.request.device_kind != "cpu":
            # Measured once per GPU (the daemon does it as the slot starts) and kept on disk after that.
            peaks = await device_peaks(self.executor.sandbox.policy.python, self.slot, self.executor.state_dir)
            if peaks is not None:
                peaks_file = self.judge_job.in_dir / PEAKS_FILE
                await asyncio.to_thread(peaks_file.write_text, peaks.model_dump_json(), encoding="utf-8")

    async def evaluate(self) -> SubmissionResult:
        assert self.warm is not None
        deadlines = self.executor.deadlines
        clock = _PhaseClock(deadlines, self.request.mode, self.started + deadlines.job_s)
        spawned = time.monotonic()
        return await self._judged(self.warm.processes, clock, spawned)

    async def _judged(self, processes: JobProcesses, clock: _PhaseClock, spawned: float) -> SubmissionResult:
        """The job's result from the judge's events, or the failure its processes show."""
        result, problem = await self._pump(processes.judge, clock, spawned)
        if processes.launcher.memory_exceeded is not None:
            await processes.stop()
            limit = processes.launcher.memory_limit
            return self.fail("memory_limit", describe_memory_limit(limit), await processes.launcher.output())
        if result is not None and result.error is not None and result.error.code == "crashed":
            # The judge read what the solution printed before it died; the exit status says why it died.
            failure = await self._launcher_failure(processes.launcher, clock)
            return failure.model_copy(update={"output": result.output})
        if result is not None:
            return result
        if problem is None:  # the judge's pipe ended without a result
            returncode = await processes.judge.wait(min(clock.remaining(), PIPE_CLOSED_GRACE_S))
            log.error(
                "job %s: the judge ended without a result (exit %s): %s",
                self.request.submission_id,
                returncode,
                await processes.judge.output(),
            )
            if not processes.launcher.alive:
                return await self._launcher_failure(processes.launcher, clock)
            return self.fail("internal", "The runner failed while judging this submission; it has been logged.")
        await processes.stop()
        return self.fail(problem[0], problem[1], await processes.launcher.output())

    async def _launcher_failure(self, launcher: SandboxedProcess, clock: _PhaseClock) -> SubmissionResult:
        """The launcher died or hung up: say why from its exit status and its output."""
        returncode = await launcher.wait(min(max(clock.remaining(), 0.1), PIPE_CLOSED_GRACE_S))
        if returncode is None:
            await launcher.stop()
            return self.fail(
                "crashed", "The solution's process stopped answering and was stopped.", await launcher.output()
            )
        code, message = describe_exit(returncode, self.executor.max_file_mb)
        return self.fail(code, message, await launcher.output())

    async def _pump(
        self, proc: SandboxedProcess, clock: _PhaseClock, spawned: float
    ) -> tuple[SubmissionResult | None, tuple[str, str] | None]:
        """Forward the worker's events until `done`; (result, None), or (None, (code, message)) on trouble,
        or (None, None) when the pipe ended first."""
        while True:
            try:
                line = await proc.read_line(clock.remaining())
            except TimeoutError:
                return None, ("timeout", clock.timeout_message())
            except ValueError:
                return None, ("crashed", MALFORMED)
            if not line:
                return None, None
            try:
                event = JobEvent.model_validate_json(line)
            except ValidationError:
                return None, ("crashed", MALFORMED)
            self.phases.setdefault("startup", round(time.monotonic() - spawned, 4))
            if event.type == "done":
                return event.result or self.fail("internal", "The worker finished without a result."), None
            clock.observe(event)
            if event.type == "accepted" or (self.prebuilt and event.type in ("compiling", "compiled")):
                continue  # already told: the runner sent its own accepted and nvcc events
            await self.emit(event)


def _install_prebuilt(library: Path, target: Path) -> None:
    target.parent.mkdir(mode=0o755, exist_ok=True)
    shutil.copyfile(library, target, follow_symlinks=False)
    os.chmod(target, 0o644)


async def run_job(
    request: JobRequest,
    on_event: EventCallback | None = None,
    *,
    executor: Executor | None = None,
    slot: Slot | None = None,
    timeout_s: float = DEFAULT_JOB_TIMEOUT_S,
    python: str = sys.executable,
    warm: WarmWorker | None = None,
    after: Awaitable[object] | None = None,
    teardown_later: Callable[[Coroutine[None, None, float]], object] | None = None,
) -> SubmissionResult:
    """Evaluate `request` in a fresh sandboxed worker; always returns a result, never raises for the job's faults.

    Events go to `on_event`, numbered from 1 and ending with `done`. Cancelling the calling task kills the
    worker and deletes the job's private directory. `warm` is a worker started ahead for this slot; it is
    used when it fits the request, and consumed either way.

    The teardown (stopping the job's processes, deleting its directories) comes before `done`, unless
    `teardown_later` is given: then `done` is sent as soon as the result is known, and the teardown is handed to
    `teardown_later` as a coroutine (returning its seconds). The slot's next job then passes that teardown as
    `after`: it compiles meanwhile, and lets its processes touch the GPU only once it has ended.
    """
    executor = executor or await default_executor(python, timeout_s)
    slot = slot or await asyncio.to_thread(default_slot)
    if warm is not None and not warm.fits(slot, request):
        await warm.discard()
        warm = None
    if warm is None:
        # Started now, they import torch while nvcc runs.
        warm = await start_warm_worker(executor, slot, job_env(slot, request))
    judge_job, job = warm.processes.judge_job, warm.processes.launcher_job
    run = _JobRun(request, on_event, executor, slot, job, judge_job, warm=warm, after=after)

    async def teardown() -> float:
        start = time.monotonic()
        await warm.close()  # stops the judge and the launcher together
        await executor.sandbox.reap(job.uid)
        await asyncio.gather(*(asyncio.to_thread(directory.remove) for directory in (job, judge_job)))
        seconds = time.monotonic() - start
        log.info("job %s: torn down in %.3f s", request.submission_id, seconds)
        return seconds

    try:
        result = await run.run()
    except BaseException:
        await teardown()
        raise
    if teardown_later is None:
        run.add_phase("teardown", await teardown())
        return await run.finish(result)
    result = await run.finish(result)
    teardown_later(teardown())
    return result


async def run_validation(
    request: ValidateRequest, *, executor: Executor | None = None, slot: Slot | None = None
) -> ValidateReport:
    """Run the admission self-test of a problem module (runner.judge.admission) in a sandboxed worker."""
    executor = executor or await default_executor()
    slot = slot or await asyncio.to_thread(default_slot)
    name = f"validate-{uuid.uuid4().hex[:16]}"
    job = await asyncio.to_thread(JobDir.create, executor.jobs_dir, name, executor.sandbox.uid_for(slot.index))
    try:
        request_file = job.in_dir / "validate.json"
        await asyncio.to_thread(request_file.write_text, request.model_dump_json(), encoding="utf-8")

        def argv(fd: int | None) -> list[str]:
            args = ["--request", str(request_file), "--report-fd", str(fd)]
            return python_command(executor.sandbox.policy.python, "runner.judge.admission", args)

        env = dict(slot.env) if request.device_kind != "cpu" else {"CUDA_VISIBLE_DEVICES": ""}
        async with await SandboxedProcess.start(
            executor.sandbox, job, argv, slot_env=env, with_pipe=True, output_limit=executor.output_limit
        ) as proc:
            return await _read_report(proc, executor)
    finally:
        await executor.sandbox.reap(job.uid)
        await asyncio.to_thread(job.remove)


async def _read_report(proc: SandboxedProcess, executor: Executor) -> ValidateReport:
    limit = executor.deadlines.validate_s
    try:
        line = await proc.read_line(limit)
        if line:
            return ValidateReport.model_validate_json(line)
    except TimeoutError:
        message = f"The admission test ran past its {limit:.0f} s limit; make the test cases smaller or faster."
        return ValidateReport(ok=False, error=ErrorInfo(code="timeout", message=message))
    except (ValueError, ValidationError):
        return ValidateReport(ok=False, error=ErrorInfo(code="internal", message=MALFORMED))
    returncode = await proc.wait(PIPE_CLOSED_GRACE_S)
    code, message = describe_exit(returncode if returncode is not None else -9, executor.max_file_mb)
    error = ErrorInfo(code=code, message=message, log=trim_log(await proc.output()) or None)  # type: ignore[arg-type]
    return ValidateReport(ok=False, error=error)
