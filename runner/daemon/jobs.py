"""The daemon's job table: a FIFO queue with a maximum depth, one job per slot, numbered event logs that a
client can re-read from any point, cancellation, and retention of finished jobs. A distributed job waits in the
queue of its world size, which that size's rank slots serve (runner/daemon/routing.py chooses).

Jobs live in memory. If the runner restarts, the bot re-posts them (POST /v1/jobs is idempotent on the
submission id) or requeues them elsewhere (DESIGN §2.6). A re-post of a job that finished without a verdict
(`host_busy`: its host could not judge it) runs it again as a new job: the dispatcher re-posts such a job to retry
it, and the old answer would only repeat itself.

Kept as one module: the queues, the slots' loops and the jobs' records change together under one event loop, and
every query (position, room, idleness) reads all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass, field

from contract.wire import (
    ErrorInfo,
    JobEvent,
    JobRequest,
    JobStatus,
    LinkTopology,
    MeasuredPeaks,
    RunnerJobState,
    SubmissionResult,
    ValidateReport,
    ValidateRequest,
)
from runner.daemon.metrics import Metrics
from runner.daemon.routing import route_job
from runner.daemon.slots import plan_slots, rank_slots
from runner.host.device_peaks import device_peaks
from runner.host.devices import Gpu, Slot, query_gpus
from runner.host.executor import Executor, WarmWorker, start_warm_worker
from runner.host.topology import query_topology
from runner.job.distributed import run_distributed_job
from runner.job.run import failure_result, run_job, run_validation
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)


class QueueFullError(Exception):
    """Every slot is busy and the queue is at its maximum depth."""

    def __init__(self, depth: int, retry_after_s: int) -> None:
        super().__init__(f"The runner's queue is full ({depth} jobs waiting). Retry in about {retry_after_s} s.")
        self.retry_after_s = retry_after_s


class DrainingError(Exception):
    """The runner is draining (it stops soon): it takes no new job. The dispatcher sends the job elsewhere."""


class JobConflictError(Exception):
    """A submission id was posted again with a different request."""


class UnknownJobError(KeyError):
    """No job has this id (it never existed, or it finished longer ago than the retention time)."""


class JobFinishedError(Exception):
    """A cancel arrived for a job that has already finished."""


@dataclass(eq=False)
class Job:
    """One submission's job: its request, state, and the events it produced so far, numbered from 1."""

    id: str
    request: JobRequest
    created_at: float = field(default_factory=time.time)
    queued_at: float = field(default_factory=time.monotonic)
    state: RunnerJobState = "queued"
    started_at: float | None = None
    finished_at: float | None = None
    result: SubmissionResult | None = None
    events: list[JobEvent] = field(default_factory=list)
    task: asyncio.Task[SubmissionResult] | None = None
    queue_seconds: float = 0.0
    ranks: int = 1  # above 1: a distributed job, for a rank slot of that size
    _signal: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def finished(self) -> bool:
        return self.state in ("done", "cancelled")

    def append(self, event: JobEvent) -> None:
        """Store an event under the next number and wake every reader. The final `done` result gets the time
        the job waited in the queue, which only the daemon knows."""
        if event.result is not None:
            phases = {**event.result.phase_seconds, "queue": round(self.queue_seconds, 4)}
            event = event.model_copy(update={"result": event.result.model_copy(update={"phase_seconds": phases})})
        self.events.append(event.model_copy(update={"seq": len(self.events) + 1}))
        if event.type == "done":
            self.result = event.result
            self.state = "done" if event.result is not None else "cancelled"
            self.finished_at = time.time()
        signal, self._signal = self._signal, asyncio.Event()
        signal.set()

    async def events_after(self, index: int, timeout: float) -> list[JobEvent]:
        """Events numbered above `index`; waits up to `timeout` for one when there is none yet."""
        if len(self.events) <= index and not self.finished:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._signal.wait(), timeout)
        return self.events[index:]

    def status(self, queue_position: int | None) -> JobStatus:
        return JobStatus(
            job_id=self.id,
            submission_id=self.request.submission_id,
            state=self.state,
            queue_position=queue_position,
            created_at=self.created_at,
            started_at=self.started_at,
            finished_at=self.finished_at,
            last_seq=len(self.events),
            result=self.result,
        )


# Answers that are no verdict on the submission: the dispatcher re-posts such a job to run it again.
NO_VERDICT_CODES = frozenset({"host_busy"})


def _without_verdict(job: Job) -> bool:
    """Whether the job finished with an answer that judged nothing (its host was too busy, or a rank was killed
    from outside the job)."""
    error = job.result.error if job.result is not None else None
    return job.state == "done" and error is not None and error.code in NO_VERDICT_CODES


@dataclass(eq=False)
class _Validation:
    request: ValidateRequest
    future: asyncio.Future[ValidateReport] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class JobManager:
    """Owns the queue and the slots. `start()` probes the host; `close()` stops every job."""

    def __init__(self, settings: RunnerSettings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.jobs: dict[str, Job] = {}
        self.by_submission: dict[str, Job] = {}
        self.queue: deque[Job | _Validation] = deque()
        self.slots: list[Slot] = []
        # The slots of N ranks (RUNNER_RANK_SLOTS), apart from `slots`: the one-device slots' counts (health, room,
        # canaries, the pool's view) stay what they were, and each size has its own queue.
        self.rank_slots: list[Slot] = []
        self.rank_queues: dict[int, deque[Job]] = {}
        self.rank_busy = 0
        self.gpus: list[Gpu] = []
        self.topology: LinkTopology | None = None  # how the GPUs are linked (nvidia-smi topo -m), with two or more
        self.peaks: dict[str, MeasuredPeaks] = {}  # by GPU UUID
        self.busy = 0
        # Set when the runner stops (SIGTERM) or its pool refused it: jobs in hand finish, no new one is taken.
        self.draining = False
        self.executor: Executor | None = None
        self._ready = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        # Per slot, the processes started ahead for its next jobs, oldest first.
        self._warm: dict[int, deque[WarmWorker]] = {}
        # Per GPU slot, the teardown of its last job, which may outlive the job's result (runner.job.run.run_job).
        self._teardowns: dict[int, asyncio.Task[float]] = {}

    async def start(self) -> None:
        """Find the GPUs (nvidia-smi, never CUDA), probe the sandbox, and start one loop per slot."""
        settings = self.settings
        self.gpus = await asyncio.to_thread(query_gpus) if settings.device != "cpu" else []
        self.topology = await asyncio.to_thread(query_topology) if len(self.gpus) > 1 else None
        self.slots = plan_slots(settings.device, self.gpus, settings.gpus)
        self.rank_slots = rank_slots(settings.rank_slots, self.slots)
        self.rank_queues = {slot.ranks: deque() for slot in self.rank_slots}
        self.executor = await Executor.from_settings(settings, slots=len(self.slots))
        log.info("runner %s: %d slot(s): %s", settings.name, len(self.slots), ", ".join(s.name for s in self.slots))
        if self.rank_slots:
            log.info(
                "runner %s: rank slot(s) of %s ranks", settings.name, ", ".join(str(s.ranks) for s in self.rank_slots)
            )
        self._tasks = [asyncio.create_task(self._slot_loop(slot), name=f"slot-{slot.index}") for slot in self.slots]
        self._tasks += [
            asyncio.create_task(self._rank_slot_loop(slot), name=f"rank-slot-{slot.index}") for slot in self.rank_slots
        ]
        self._tasks.append(asyncio.create_task(self._sweep_loop(), name="retention"))

    async def close(self) -> None:
        for job in self.jobs.values():
            if job.task is not None:
                job.task.cancel()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.settled()
        for ahead in self._warm.values():
            while ahead:
                await ahead.popleft().discard()
        self._warm.clear()

    # -- queries --------------------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None:
            raise UnknownJobError(job_id)
        return job

    def position(self, job: Job) -> int | None:
        """1 for the next job to start; None when the job is not waiting."""
        if job.state != "queued":
            return None
        for index, item in enumerate(self._queue_of(job)):
            if item is job:
                return index + 1
        return None

    @property
    def free_slots(self) -> int:
        return len(self.slots) - self.busy

    @property
    def idle(self) -> bool:
        """No job runs or waits."""
        waiting = any(self.rank_queues.values())
        return self.busy == 0 and self.rank_busy == 0 and not self.queue and not waiting

    def _queue_of(self, job: Job) -> deque[Job | _Validation] | deque[Job]:
        return self.rank_queues[job.ranks] if job.ranks > 1 else self.queue

    # -- commands -------------------------------------------------------------------------------------------

    def submit(self, request: JobRequest) -> tuple[Job, bool]:
        """Queue a job, or return the one this submission id already has (False: not created)."""
        existing = self.by_submission.get(request.submission_id)
        if existing is not None and existing.request == request and _without_verdict(existing):
            # The dispatcher's retry of a run this runner could not judge: the old answer would only repeat itself.
            log.info("job %s (submission %s) had no verdict; running it again", existing.id, request.submission_id)
            existing = None
        if existing is not None:
            if existing.request != request:
                raise JobConflictError(
                    f"Submission {request.submission_id} was already posted with a different request. "
                    "Use a new submission id for a new request."
                )
            return existing, False
        if self.draining:
            raise DrainingError(f"Runner {self.settings.name} is draining before it stops; it takes no new job.")
        ranks = route_job(request, self.rank_slots, self.settings.name)  # UnroutableJobError: refused before queuing
        if ranks > 1:
            self._check_rank_room(ranks)
        else:
            self._check_room()
        job = Job(uuid.uuid4().hex, request, ranks=ranks)
        self.jobs[job.id] = job
        self.by_submission[request.submission_id] = job
        queue = self._queue_of(job)
        queue.append(job)  # type: ignore[arg-type]
        self._ready.set()
        log.info("job %s (submission %s) queued at %d", job.id, request.submission_id, len(queue))
        return job, True

    def cancel(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.state == "done":
            raise JobFinishedError(f"Job {job_id} has already finished; there is nothing to cancel.")
        if job.state == "queued":
            self._queue_of(job).remove(job)  # type: ignore[arg-type]
            self._finish_cancelled(job)
            self.metrics.job_finished("cancelled", None, {})
        elif job.task is not None:
            job.task.cancel()  # the slot loop records the cancellation once the worker is dead
        log.info("job %s cancel requested", job_id)
        return job

    async def validate(self, request: ValidateRequest) -> ValidateReport:
        self._check_room()
        item = _Validation(request)
        self._enqueue(item)
        return await item.future

    def sweep(self, now: float | None = None) -> int:
        """Drop jobs that finished more than the retention time ago; returns how many."""
        cutoff = (now if now is not None else time.time()) - self.settings.retention_s
        old = [j for j in self.jobs.values() if j.finished_at is not None and j.finished_at < cutoff]
        for job in old:
            del self.jobs[job.id]
            if self.by_submission.get(job.request.submission_id) is job:
                del self.by_submission[job.request.submission_id]
        return len(old)

    # -- internals ------------------------------------------------------------------------------------------

    def _check_room(self) -> None:
        if len(self.queue) >= self.settings.max_queue and self.free_slots <= len(self.queue):
            self.metrics.job_rejected()
            waves = (len(self.queue) + 1) / max(len(self.slots), 1)
            raise QueueFullError(len(self.queue), max(1, math.ceil(self.metrics.mean_job_s * waves)))

    def _check_rank_room(self, ranks: int) -> None:
        """The same bound as the one-device queue's, on the queue of one world size."""
        queue = self.rank_queues[ranks]
        serving = sum(1 for slot in self.rank_slots if slot.ranks == ranks)
        if len(queue) >= self.settings.max_queue:
            self.metrics.job_rejected()
            waves = (len(queue) + 1) / max(serving, 1)
            raise QueueFullError(len(queue), max(1, math.ceil(self.metrics.mean_job_s * waves)))

    def _enqueue(self, item: Job | _Validation) -> None:
        self.queue.append(item)
        self._ready.set()

    async def _next(self) -> Job | _Validation:
        """The oldest waiting item, once there is one."""
        while not self.queue:
            self._ready.clear()
            await self._ready.wait()
        return self.queue.popleft()

    async def _next_of(self, queue: deque[Job]) -> Job:
        """The oldest job of a rank queue, once there is one. Every slot loop waits on the one `_ready` event: a
        set wakes them all, and each looks at its own queue."""
        while not queue:
            self._ready.clear()
            await self._ready.wait()
        return queue.popleft()

    async def _rank_slot_loop(self, slot: Slot) -> None:
        """Run the distributed jobs of one world size on a rank slot, one at a time. Nothing is started ahead: each
        job's harness starts its ranks fresh, so that no rank process outlives its job."""
        queue = self.rank_queues[slot.ranks]
        while True:
            job = await self._next_of(queue)
            self.rank_busy += 1
            try:
                await self._execute(job, slot, None)
            finally:
                self.rank_busy -= 1

    async def _slot_loop(self, slot: Slot) -> None:
        """Run the queue's items on one slot, one at a time. With RUNNER_WARM_WORKERS the next jobs' processes
        (RUNNER_WARM_AHEAD pairs) are always started ahead: when the slot starts, and as each job begins. They
        import torch and wait; they create no CUDA context until their job comes, so a timed job still has the GPU
        to itself."""
        if self.settings.warm_workers:
            # The first job's processes import torch meanwhile; they make no CUDA context before their job, so
            # the probe still has the GPU to itself.
            await self._start_warm(slot)
        if slot.is_gpu:
            # Jobs queue meanwhile.
            assert self.executor is not None
            peaks = await device_peaks(self.executor.sandbox.policy.python, slot, self.executor.state_dir)
            if peaks is not None:
                self.peaks[slot.env.get("CUDA_VISIBLE_DEVICES", "")] = peaks
        while True:
            if self.settings.warm_workers:
                await self._start_warm(slot)
            item = await self._next()
            self.busy += 1
            try:
                if isinstance(item, Job):
                    ahead = self._warm.get(slot.index)
                    warm = ahead.popleft() if ahead else None
                    if self.settings.warm_workers:
                        await self._start_warm(slot)
                    await self._execute(item, slot, warm)
                else:
                    await self._settled(slot)
                    await self._execute_validation(item, slot)
            finally:
                self.busy -= 1

    async def _start_warm(self, slot: Slot) -> None:
        """Top the slot's processes started ahead up to RUNNER_WARM_AHEAD pairs. Importing torch in a sandbox takes
        3.5 to 4.5 s on an H100 host, longer than a short job: with one pair ahead, back-to-back jobs waited for
        its import; with two, each pair has two jobs' time to get ready."""
        assert self.executor is not None
        ahead = self._warm.setdefault(slot.index, deque())
        while len(ahead) < self.settings.warm_ahead_for(slot.is_gpu):
            try:
                ahead.append(await start_warm_worker(self.executor, slot))
            except Exception:  # the next job then starts its worker itself
                log.exception("slot %d: could not start a worker ahead", slot.index)
                return

    async def settled(self) -> None:
        """Wait until every slot's last job is torn down (its processes stopped, its files deleted)."""
        if self._teardowns:
            await asyncio.wait(set(self._teardowns.values()))

    async def _settled(self, slot: Slot) -> None:
        task = self._teardowns.pop(slot.index, None)
        if task is not None:
            await asyncio.wait({task})

    def _teardown_later(self, slot: Slot, teardown: Coroutine[None, None, float]) -> None:
        task = asyncio.create_task(teardown, name=f"teardown-{slot.index}")
        task.add_done_callback(self._teardown_ended)
        self._teardowns[slot.index] = task

    def _teardown_ended(self, task: asyncio.Task[float]) -> None:
        if task.cancelled():
            return
        if (exc := task.exception()) is not None:
            log.error("a job's teardown failed", exc_info=exc)
        else:
            self.metrics.phase_observed("teardown", task.result())

    async def _execute(self, job: Job, slot: Slot, warm: WarmWorker | None) -> None:
        assert self.executor is not None
        job.state, job.started_at = "running", time.time()
        job.queue_seconds = time.monotonic() - job.queued_at
        # On a GPU slot the result goes out before the job's processes are torn down: the next job compiles
        # meanwhile, and its processes reach the GPU only after. A CPU slot tears down first: there the next
        # job's timing would share the cores with the teardown.
        later = functools.partial(self._teardown_later, slot) if slot.is_gpu else None
        previous = self._teardowns.get(slot.index)
        if slot.ranks > 1:
            run = run_distributed_job(job.request, job.append, executor=self.executor, slot_index=slot.index)
        else:
            run = run_job(
                job.request,
                job.append,
                executor=self.executor,
                slot=slot,
                warm=warm,
                after=previous,
                teardown_later=later,
            )
        job.task = asyncio.create_task(run)
        try:
            await asyncio.wait({job.task})
        finally:  # the daemon is shutting down: the worker must not outlive it
            if not job.task.done():
                job.task.cancel()
                await asyncio.wait({job.task})
        if job.task.cancelled():
            self._finish_cancelled(job)
        elif (exc := job.task.exception()) is not None:
            log.error("job %s: the runner failed", job.id, exc_info=exc)
            message = "The runner failed while running this job. This is a fault of the runner; try again."
            job.append(JobEvent(seq=0, type="done", result=failure_result(job.request, "internal", message)))
        assert job.result is not None or job.state == "cancelled"
        outcome = job.result.status if job.result is not None else "cancelled"
        error = job.result.error.code if job.result is not None and job.result.error is not None else None
        phases = job.result.phase_seconds if job.result is not None else {}
        self.metrics.job_finished(outcome, error, phases)
        log.info("job %s finished: %s %s", job.id, outcome, error or "")

    def _finish_cancelled(self, job: Job) -> None:
        if not job.finished:
            job.append(JobEvent(seq=0, type="done", message="cancelled"))

    async def _execute_validation(self, item: _Validation, slot: Slot) -> None:
        assert self.executor is not None
        if item.future.done():  # the caller went away while it waited
            return
        try:
            report = await run_validation(item.request, executor=self.executor, slot=slot)
        except Exception:
            log.exception("problem validation failed inside the runner")
            message = "The runner failed while validating. This is a fault of the runner; try again."
            report = ValidateReport(ok=False, error=ErrorInfo(code="internal", message=message))
        if not item.future.done():
            item.future.set_result(report)

    async def _sweep_loop(self) -> None:
        interval = min(60.0, max(self.settings.retention_s / 4, 0.05))
        while True:
            await asyncio.sleep(interval)
            dropped = self.sweep()
            if dropped:
                log.info("dropped %d finished job(s) past retention", dropped)
