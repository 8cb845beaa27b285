"""The local backend: jobs run on this machine, each in fresh sandboxed workers (`runner.job.run.run_job`).

`LocalRunner` is a `contract.runner_client.JobRunner`. Its jobs belong to the runner, not to the dispatcher that started
them, so a dispatcher restarted in the same process re-attaches to a job still running here, as it would to a
remote runner over HTTP. `LocalValidator` runs a problem's admission self-test the same way.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from contract.errors import RunnerLostError, RunnerRefusedError
from contract.runner_client import EventCallback
from contract.wire import JobEvent, JobRequest, MeasureConfig, SubmissionResult, ValidateReport, ValidateRequest
from runner.gpus import gpu_type_for
from runner.job.run import DEFAULT_JOB_TIMEOUT_S, run_job

log = logging.getLogger(__name__)

RunJob = Callable[..., Awaitable[SubmissionResult]]


@dataclass
class _LocalJob:
    events: list[JobEvent] = field(default_factory=list)
    subscribers: list[asyncio.Queue[JobEvent | None]] = field(default_factory=list)
    task: asyncio.Task[SubmissionResult] | None = None


async def _deliver(on_event: EventCallback, event: JobEvent) -> None:
    maybe = on_event(event)
    if maybe is not None:
        await maybe


class LocalRunner:
    """Runs jobs on this machine, `slots` at a time, on the CPU (`gpu_type="cpu"`) or the local GPU."""

    def __init__(
        self,
        *,
        gpu_type: str = "cpu",
        name: str | None = None,
        slots: int = 1,
        measure: MeasureConfig | None = None,
        timeout_s: float = DEFAULT_JOB_TIMEOUT_S,
        keep_finished: int = 64,
        run: RunJob = run_job,
    ) -> None:
        self._gpu_type = gpu_type
        self._name = name or f"local-{gpu_type}"
        self._slots = slots
        self._measure = measure
        self._timeout_s = timeout_s
        self._keep_finished = keep_finished
        self._run = run
        self._jobs: OrderedDict[str, _LocalJob] = OrderedDict()

    @property
    def name(self) -> str:
        return self._name

    @property
    def gpu_type(self) -> str:
        return self._gpu_type

    @property
    def slots(self) -> int:
        return self._slots

    async def run(self, job_key: str, request: JobRequest, on_event: EventCallback) -> SubmissionResult:
        job = self._jobs.get(job_key) or self._launch(job_key, request)
        return await self._follow(job, on_event)

    async def attach(self, job_key: str, on_event: EventCallback) -> SubmissionResult | None:
        job = self._jobs.get(job_key)
        return None if job is None else await self._follow(job, on_event)

    async def abandon(self, job_key: str) -> None:
        """Stop the job (its worker process is killed): its submission was withdrawn, and no one wants its result."""
        job = self._jobs.pop(job_key, None)
        if job is not None and job.task is not None and not job.task.done():
            job.task.cancel()
            await asyncio.gather(job.task, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop every running job (their worker processes are killed), as a runner shutting down would."""
        tasks = [j.task for j in self._jobs.values() if j.task is not None and not j.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _launch(self, job_key: str, request: JobRequest) -> _LocalJob:
        # The runner, not the submitter, decides where and how to measure: this runner's device is its GPU type.
        update: dict[str, object] = {"device_kind": "cpu" if self._gpu_type == "cpu" else "gpu"}
        if self._measure is not None:
            update["measure"] = self._measure
        job = _LocalJob()
        job.task = asyncio.create_task(self._evaluate(job, request.model_copy(update=update)), name=job_key)
        self._jobs[job_key] = job
        self._forget_finished()
        return job

    async def _evaluate(self, job: _LocalJob, request: JobRequest) -> SubmissionResult:
        def publish(event: JobEvent) -> None:
            job.events.append(event)
            for queue in job.subscribers:
                queue.put_nowait(event)

        try:
            return await self._run(request, publish, timeout_s=self._timeout_s)
        finally:
            for queue in job.subscribers:
                queue.put_nowait(None)

    async def _follow(self, job: _LocalJob, on_event: EventCallback) -> SubmissionResult:
        assert job.task is not None
        queue: asyncio.Queue[JobEvent | None] = asyncio.Queue()
        # Snapshot and subscribe with no await in between, so that no event is missed or seen twice.
        replay = list(job.events)
        finished = job.task.done()
        job.subscribers.append(queue)
        try:
            for event in replay:
                await _deliver(on_event, event)
            while not finished and (live := await queue.get()) is not None:
                await _deliver(on_event, live)
            # Shielded: a follower that is cancelled (a dispatcher stopping) leaves the job running.
            return await asyncio.shield(job.task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if job.task.cancelled() and (current is None or not current.cancelling()):
                raise RunnerLostError("the local runner was shut down during the job") from None
            raise
        except Exception as exc:
            raise RunnerLostError(f"the local worker failed: {type(exc).__name__}: {exc}") from exc
        finally:
            job.subscribers.remove(queue)

    def _forget_finished(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.task is not None and j.task.done()]
        for key in finished[: max(0, len(finished) - self._keep_finished)]:
            del self._jobs[key]


def detect_gpu_type(device_kind: str = "auto") -> str:
    """`cpu`, or the local GPU's board key from the GPU registry (`h100`; a slug of the name for a model without
    an entry), its name read from nvidia-smi."""
    if device_kind == "cpu":
        return "cpu"
    smi = shutil.which("nvidia-smi")
    names: list[str] = []
    if smi is not None:
        try:
            out = subprocess.run(
                [smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=15
            )
            names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("nvidia-smi failed (%s); treating this machine as CPU-only", exc)
    if not names:
        if device_kind == "gpu":
            raise RunnerRefusedError(
                "A GPU was asked for (--device gpu), but nvidia-smi finds none on this machine: run a .py solution "
                "with --device cpu, or send the job to a GPU host with --runner."
            )
        return "cpu"
    return gpu_type_for(names[0])


class LocalValidator:
    """The self-test in a sandboxed worker on this machine (`runner.job.run.run_validation`)."""

    def __init__(self, gpu_type: str, name: str | None = None) -> None:
        self._gpu_type = gpu_type
        self._name = name or f"local-{gpu_type}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def gpu_type(self) -> str:
        return self._gpu_type

    async def validate(self, request: ValidateRequest) -> ValidateReport:
        from runner.job.run import run_validation

        device_kind = "cpu" if self._gpu_type == "cpu" else "gpu"
        return await run_validation(request.model_copy(update={"device_kind": device_kind}))
