"""A JobRunner on this machine, and `submit_and_wait`, the store-backed path of `arena submit`.

`LocalRunner` evaluates each job in a fresh worker subprocess through `runner.host.job.run_job`. Its jobs
belong to the runner, not to the dispatcher that started them, so a dispatcher restarted in the same process
re-attaches to a job still running here, as it would to a remote runner over HTTP.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import socket
import subprocess
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import asyncpg

from bot.core.dispatch import Dispatcher, EventCallback, RunnerPool
from bot.core.errors import RunnerLostError
from bot.core.problems import ProblemSpec, sync_problem
from bot.core.submissions import SubmitRequest, submit
from bot.db import jobs, submissions
from bot.db.pool import open_store
from bot.settings import Settings
from runner.api import ErrorInfo, JobEvent, JobRequest, MeasureConfig, SubmissionResult
from runner.host.job import DEFAULT_JOB_TIMEOUT_S, run_job

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
    """`cpu`, or the local GPU's name as a GPU type (`h100-80gb-hbm3`), read from nvidia-smi."""
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
            raise RunnerLostError(
                "A GPU was asked for (--device gpu), but nvidia-smi finds none on this machine: run a .py solution "
                "with --device cpu, or send the job to a GPU host with --runner."
            )
        return "cpu"
    slug = re.sub(r"[^a-z0-9]+", "-", names[0].lower().removeprefix("nvidia ")).strip("-")
    return slug[:64] or "gpu"


@dataclass(frozen=True)
class LocalSubmission:
    """What `arena submit` hands over: the problem as the code describes it, the file, and the options."""

    problem: ProblemSpec
    file_name: str
    data: bytes
    dtype: str = "float32"
    mode: str = "benchmark"
    device_kind: str = "auto"
    measure: MeasureConfig | None = None
    user_name: str | None = None
    gpu_type: str | None = None


def _stored_result(sub: submissions.Submission) -> SubmissionResult:
    """A summary of a submission that another dispatcher ran (its per-case rows stay in the store)."""
    error = ErrorInfo(code=sub.error_code, message=sub.error_message or "") if sub.error_code else None  # type: ignore[arg-type]
    return SubmissionResult(
        submission_id=str(sub.id),
        problem_slug=sub.slug,
        problem_version=sub.problem_version,
        dtype=sub.dtype,  # type: ignore[arg-type]
        language=sub.language,  # type: ignore[arg-type]
        mode=sub.mode,  # type: ignore[arg-type]
        status=sub.status if sub.status in ("passed", "failed") else "error",  # type: ignore[arg-type]
        device=sub.device or "unknown",
        geomean_gflops=sub.score,
        error=error,
    )


CANCELLED_BY_USER = "Cancelled by the user (Ctrl-C) before it finished; it will not run again."


@dataclass
class LocalRun:
    """What became of a local submission, filled in as it goes, so that a caller that was interrupted (and so
    got no return value) can still say which submission it was and whether it was withdrawn."""

    submission_id: int | None = None
    withdrawn: bool | None = None
    """True: cancelled before it finished, and it will never run; False: it had finished already; None: not
    withdrawn (not interrupted, or the store did not answer: then `withdraw_error` says why)."""
    withdraw_error: str | None = None

    async def withdraw(self, pool: asyncpg.Pool, submission_id: int, job_id: int) -> None:
        """Withdraw the submission after an interruption; a store that does not answer is noted, not raised,
        so that the interruption itself still reaches the caller."""
        self.submission_id = submission_id
        try:
            self.withdrawn = await withdraw_submission(pool, submission_id, job_id, CANCELLED_BY_USER)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            log.info("submission %d could not be withdrawn", submission_id, exc_info=True)
            self.withdraw_error = f"{type(exc).__name__}: {exc}"


async def withdraw_submission(pool: asyncpg.Pool, submission_id: int, job_id: int, reason: str) -> bool:
    """Withdraw a submission whose job has not finished: the job ends `failed`, the submission `failed` with
    the error code `cancelled`, in one transaction. False, changing nothing, when the job had already ended."""
    async with pool.acquire() as conn, conn.transaction():
        job = await jobs.get_job(conn, job_id)
        if job is None or not await jobs.withdraw(conn, job_id, reason):
            return False
        error = ErrorInfo(code="cancelled", message=reason)
        outcome = submissions.Outcome("failed", None, None, "gflops", "unknown", job.runner or "none", error)
        await submissions.record_outcome(conn, submission_id, job_id, outcome)
    log.info("submission %d withdrawn: %s", submission_id, reason)
    return True


async def submit_and_wait(
    settings: Settings,
    local: LocalSubmission,
    on_event: EventCallback | None = None,
    progress: LocalRun | None = None,
) -> tuple[int, SubmissionResult]:
    """Record a submission in the store (embedded by default), run its job on this machine, record the result.

    Jobs queued before it on the same GPU type (left by an `arena` command that was killed) run first: an
    accepted submission is never dropped. Returns the submission id and the result.

    Cancelling the caller (Ctrl-C) withdraws the submission: its workers are killed, and its job ends `failed`
    ("cancelled by the user") so that no later run picks it up. `progress` tells what became of it.
    """
    async with open_store(settings.store) as store:
        return await run_local_submission(store.pool, settings, local, on_event, progress)


async def run_local_submission(
    pool: asyncpg.Pool,
    settings: Settings,
    local: LocalSubmission,
    on_event: EventCallback | None = None,
    progress: LocalRun | None = None,
) -> tuple[int, SubmissionResult]:
    """`submit_and_wait` on an open pool."""
    progress = progress if progress is not None else LocalRun()
    await sync_problem(pool, local.problem)
    gpu_type = local.gpu_type
    if gpu_type is None:
        gpu_type = await asyncio.to_thread(detect_gpu_type, local.device_kind)
    user = local.user_name or settings.local_user
    request = SubmitRequest(
        f"local:{user}", user, local.problem.slug, local.file_name, local.data, gpu_type, local.dtype, local.mode
    )
    storing = asyncio.ensure_future(submit(pool, request, settings.rate))
    try:
        receipt = await asyncio.shield(storing)
    except asyncio.CancelledError:
        # Interrupted while the row was being written: let that finish, then withdraw it, or it would wait in
        # the queue for the next `arena submit`.
        receipt = await storing
        await progress.withdraw(pool, receipt.submission_id, receipt.job_id)
        raise
    progress.submission_id = receipt.submission_id
    captured: dict[str, SubmissionResult] = {}

    async def hook(submission_id: int, event: JobEvent) -> None:
        if submission_id != receipt.submission_id:
            return
        if event.type == "done" and event.result is not None:
            captured["result"] = event.result
        if on_event is not None:
            await _deliver(on_event, event)

    runner = LocalRunner(gpu_type=gpu_type, measure=local.measure)
    owner = f"cli-{socket.gethostname()}-{os.getpid()}"
    dispatcher = Dispatcher(
        pool, RunnerPool([runner]), settings.dispatch.model_copy(update={"owner": owner}), on_event=hook
    )
    try:
        await dispatcher.recover()
        while (job := await jobs.get_job(pool, receipt.job_id)) is not None and job.state not in jobs.FINAL_STATES:
            if await dispatcher.dispatch_ready() == 0 and not dispatcher.inflight:
                await asyncio.sleep(0.2)  # the job waits out a retry back-off, or another dispatcher holds it
            await dispatcher.wait_idle()
            if receipt.job_id in dispatcher.failures:
                raise dispatcher.failures[receipt.job_id]
    except asyncio.CancelledError:
        # The user stopped waiting. Stop following first, so that no retry puts the job back in the queue; then
        # kill the workers; then end the job in the store. Jobs of other submissions run here keep their
        # leases, which lapse, and a later dispatcher runs them.
        await dispatcher.abandon()
        await runner.aclose()
        await progress.withdraw(pool, receipt.submission_id, receipt.job_id)
        raise
    finally:
        await runner.aclose()
    sub = await submissions.get_submission(pool, receipt.submission_id)
    assert sub is not None
    return receipt.submission_id, captured.get("result") or _stored_result(sub)
