"""Runs one distributed job on a slot of N ranks: the harness (`runner.distributed.job`) in a sandboxed process of the
job's own, which starts the N rank processes inside the same sandbox, under the job's deadline.

The daemon never imports torch or the submission: as for one device, a crash, a hang or a flood of output becomes an
error result here. The whole tree (the harness and every rank) is one sandboxed process group under the slot's job
uid, with the job's memory limit over all of it, and it is killed together at the job's deadline. The events the
client sees are told from the harness's result line once the run ends: its cases, then `done`.

A rank killed by SIGKILL that neither the runner (its deadline, its memory limit) nor the harness (its own
deadline) killed was killed from outside the job: by the host's OOM killer while the job kept within its limit, or
by an operator. That is no verdict on the submission, so the job is answered `host_busy`, which costs no quota and
which the dispatcher runs again (docs/distributed.md, "Faults"). As on one device, only the runner's own memory
watch (or its cgroup's OOM count) says that a job used too much memory; a rank that crashed by itself (a segfault,
an abort, `os._exit`) stays the submission's error.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import time
from collections.abc import Awaitable, Callable

from pydantic import ValidationError

from contract.wire import ErrorInfo, JobEvent, JobRequest, SubmissionResult
from runner.distributed.exchange import RANK_EXITED, RANK_LOG_HEADER, RANK_TIMED_OUT
from runner.host.devices import ranks_device_name
from runner.host.executor import Executor, job_name
from runner.host.process import SandboxedProcess, describe_exit, describe_memory_limit
from runner.host.sandbox import JobDir, python_command
from runner.job.run import failure_result
from runner.judge.tripwires import source_notes

log = logging.getLogger(__name__)

EventCallback = Callable[[JobEvent], Awaitable[None] | None]
# The ranks' own collective timeout and the harness's wait come before the job's deadline, so a rank that hangs is
# named by the harness; the deadline kills whatever is left.
HARNESS_MARGIN_S = 40.0
MIN_COLLECTIVE_TIMEOUT_S = 5.0
EXIT_GRACE_S = 10.0
SOLUTION_FILE = "solution.py"


# A rank's heading in the result's log, and what the harness says of a rank that died by SIGKILL without a word.
_BEFORE, _AFTER = RANK_LOG_HEADER.split("{rank}")
_RANK_HEADER = re.compile(rf"{re.escape(_BEFORE)}(\d+){re.escape(_AFTER)}")
_KILLED = f"{RANK_EXITED}{-signal.SIGKILL}"


def rank_log_entries(log_text: str) -> dict[int, str]:
    """Each rank's error in a harness result's log, by rank (the log heads each with `rank N:`)."""
    entries: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in log_text.splitlines():
        header = _RANK_HEADER.fullmatch(line)
        if header is not None:
            current = entries.setdefault(int(header.group(1)), [])
        elif current is not None:
            current.append(line)
    return {rank: "\n".join(lines).strip() for rank, lines in entries.items()}


def ranks_killed_from_outside(error: ErrorInfo | None) -> list[int]:
    """The ranks of a run that stopped because something outside the job killed them with SIGKILL: ranks that
    died without a word of their own, in a run the harness did not stop at its deadline (its kill of the ranks
    still running reads the same). A rank that crashed by itself (a segfault, an abort, `os._exit`) ends
    otherwise, and stays the submission's error. The caller has ruled out the runner's own kills."""
    if error is None or error.code != "runtime_error" or not error.log:
        return []
    entries = rank_log_entries(error.log)
    if any(text.startswith(RANK_TIMED_OUT) for text in entries.values()):
        return []
    return sorted(rank for rank, text in entries.items() if text == _KILLED)


def collective_timeout(executor: Executor) -> float:
    """How long a rank may wait in one collective: the benchmark phase's limit, within the job's."""
    deadlines = executor.deadlines
    return max(MIN_COLLECTIVE_TIMEOUT_S, min(deadlines.benchmark_s, deadlines.job_s - HARNESS_MARGIN_S))


class _DistributedRun:
    """One job's events, numbered from 1, and its failures as results."""

    def __init__(self, request: JobRequest, on_event: EventCallback | None, device: str) -> None:
        self.request = request
        self.on_event = on_event
        self.device = device
        self.seq = 0

    async def emit(self, event: JobEvent) -> None:
        self.seq += 1
        if self.on_event is not None:
            maybe = self.on_event(event.model_copy(update={"seq": self.seq}))
            if maybe is not None:
                await maybe

    def fail(self, code: str, message: str, log_text: str = "") -> SubmissionResult:
        return failure_result(
            self.request, code, message, log_text, device=self.device, world_size=self.request.world_size
        )

    async def tell(self, result: SubmissionResult) -> None:
        """The cases of the run as events, in the order a one-device job sends them."""
        for test in result.tests:
            await self.emit(JobEvent(seq=0, type="test_case", index=test.index, count=len(result.tests), test=test))
        for timing in result.timings:
            await self.emit(
                JobEvent(seq=0, type="benchmark_case", index=timing.index, count=len(result.timings), timing=timing)
            )


async def _harness_result(run: _DistributedRun, executor: Executor, job: JobDir, deadline: float) -> SubmissionResult:
    request = run.request

    def argv(fd: int | None) -> list[str]:
        args = ["--request", str(job.in_dir / "request.json"), "--solution", str(job.in_dir / SOLUTION_FILE)]
        args += ["--result-fd", str(fd), "--timeout-s", str(collective_timeout(executor))]
        return python_command(executor.sandbox.policy.python, "runner.distributed.job", args)

    async with await SandboxedProcess.start(
        executor.sandbox,
        job,
        argv,
        slot_env={"CUDA_VISIBLE_DEVICES": ""},
        with_pipe=True,
        output_limit=executor.output_limit,
        memory_limit=executor.memory_limit_bytes,
        loopback=True,  # gloo's ranks meet over TCP on the job's own loopback
    ) as proc:
        try:
            line = await proc.read_line(deadline - time.monotonic())
        except TimeoutError:
            await proc.stop()
            limit = executor.deadlines.job_s
            return run.fail(
                "timeout", f"The job ran past its {limit:.0f} s limit and was stopped.", await proc.output()
            )
        except ValueError:
            await proc.stop()
            return run.fail("internal", "The distributed harness wrote a malformed result line.", await proc.output())
        if proc.memory_exceeded is not None:
            await proc.stop()
            message = describe_memory_limit(proc.memory_limit, f"The job's {request.world_size} ranks together")
            return run.fail("memory_limit", message, await proc.output())
        if line:
            try:
                result = SubmissionResult.model_validate_json(line)
            except ValidationError:
                return run.fail("internal", "The distributed harness wrote a result that does not parse.")
            killed = ranks_killed_from_outside(result.error)
            if killed and result.error is not None:
                return _killed_from_outside(run, killed, result.error)
            return result.model_copy(update={"notes": source_notes(request.language, request.source) + result.notes})
        returncode = await proc.wait(EXIT_GRACE_S)
        output = await proc.output()
        log.error(
            "job %s: the distributed harness ended without a result (exit %s): %s",
            request.submission_id,
            returncode,
            output,
        )
        if returncode is None:
            return run.fail("internal", "The distributed harness stopped answering; it has been logged.", output)
        code, message = describe_exit(returncode, executor.max_file_mb)
        return run.fail(code if code != "crashed" else "internal", message, output)


def _killed_from_outside(run: _DistributedRun, killed: list[int], error: ErrorInfo) -> SubmissionResult:
    """The answer for a run whose ranks were killed from outside: no verdict (what the peers then raised is only
    the loss of those ranks), the ranks' output kept in the log for whoever looks into the host."""
    names = ", ".join(str(rank) for rank in killed)
    log.warning(
        "job %s: rank %s killed by SIGKILL from outside the job (not its deadline, not its memory limit); "
        "answered host_busy so that it runs again",
        run.request.submission_id,
        names,
    )
    ranks = f"Rank {names} of this run was" if len(killed) == 1 else f"Ranks {names} of this run were"
    message = (
        f"{ranks} killed (SIGKILL) from outside the job while it ran, not for its memory or its time: no verdict "
        "on your submission, and no quota used. The service runs it again while it has attempts left."
    )
    return run.fail("host_busy", message, error.log or "")


async def run_distributed_job(
    request: JobRequest, on_event: EventCallback | None = None, *, executor: Executor, slot_index: int
) -> SubmissionResult:
    """Run `request` (a distributed problem at its `world_size`) on the rank slot `slot_index`; always returns a
    result, never raises for the job's faults. Cancelling the calling task kills every rank and deletes the job's
    directory."""
    started = time.monotonic()
    run = _DistributedRun(request, on_event, ranks_device_name(request.world_size))
    await run.emit(JobEvent(seq=0, type="accepted", message=run.device))
    uid = executor.sandbox.uid_for(slot_index)
    job = await asyncio.to_thread(JobDir.create, executor.jobs_dir, job_name(), uid)
    try:
        await asyncio.to_thread((job.in_dir / "request.json").write_text, request.model_dump_json(), encoding="utf-8")
        await asyncio.to_thread((job.in_dir / SOLUTION_FILE).write_text, request.source, encoding="utf-8")
        result = await _harness_result(run, executor, job, started + executor.deadlines.job_s)
    finally:
        await executor.sandbox.reap(job.uid)
        await asyncio.to_thread(job.remove)
    await run.tell(result)
    phases = {**result.phase_seconds, "total": round(time.monotonic() - started, 4)}
    result = result.model_copy(update={"phase_seconds": phases})
    await run.emit(JobEvent(seq=0, type="done", message=result.status, result=result))
    return result
