"""The dispatcher: hands queued jobs to idle runners of the right GPU type, and survives its own restarts.

Runners are reached through the `JobRunner` protocol (the HTTP runner client implements it for remote GPU
hosts; `bot.core.local_runner.LocalRunner` runs jobs on this machine). The queue lives in Postgres
(`bot.db.jobs`), so the dispatcher itself keeps no state that a crash could lose:

- claiming is `FOR UPDATE SKIP LOCKED`, so several dispatchers never take the same job;
- a claim is a lease, kept alive by a heartbeat; a dispatcher that dies stops renewing it;
- on start, a dispatcher takes over its own leases and any that lapsed, and re-attaches to the runner that
  holds the job (`JobRunner.attach`) or requeues it;
- a runner that is lost mid-job puts the job back in the queue, at most `max_attempts` dispatches in all.

Cancelling `run()` behaves like a crash as far as the queue is concerned: in-flight jobs keep their leases,
and the next start deals with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import asyncpg

from bot.core.errors import RunnerLostError
from bot.core.results import mark_running, record_result, requeue_or_fail
from bot.db import jobs
from bot.db.jobs import Lease
from bot.settings import DispatchSettings
from runner.api import JobEvent, JobRequest, SubmissionResult

log = logging.getLogger(__name__)

EventCallback = Callable[[JobEvent], Awaitable[None] | None]
EventHook = Callable[[int, JobEvent], Awaitable[None] | None]
"""Called with (submission id, event) for every runner event: the bot edits the user's message from it."""


class JobRunner(Protocol):
    """One runner host: evaluates jobs for one GPU type, `slots` at a time."""

    @property
    def name(self) -> str: ...

    @property
    def gpu_type(self) -> str: ...

    @property
    def slots(self) -> int: ...

    async def run(self, job_key: str, request: JobRequest, on_event: EventCallback) -> SubmissionResult:
        """Start the job and wait for its result. Idempotent on `job_key`: a repeated call follows the job
        already running instead of starting a second. Raises RunnerLostError when the runner cannot finish it."""
        ...

    async def attach(self, job_key: str, on_event: EventCallback) -> SubmissionResult | None:
        """Follow a job started earlier (before the dispatcher restarted) to its result, replaying its events.
        Returns None when this runner does not hold the job, so that it is requeued."""
        ...


def job_key(job_id: int) -> str:
    """The runner-side idempotency key: one per job, so a rerun (a new job) is never mistaken for the old."""
    return f"job-{job_id}"


class RunnerPool:
    """The runners this dispatcher may use, and which of their slots are busy."""

    def __init__(self, runners: Iterable[JobRunner]) -> None:
        self._runners = {r.name: r for r in runners}
        self._busy: dict[str, int] = dict.fromkeys(self._runners, 0)
        self.freed = asyncio.Event()

    def gpu_types(self) -> list[str]:
        return sorted({r.gpu_type for r in self._runners.values()})

    def acquire(self, gpu_type: str) -> JobRunner | None:
        """Reserve a slot on the least busy runner of `gpu_type`, or None when all are busy."""
        free = [r for r in self._runners.values() if r.gpu_type == gpu_type and self._busy[r.name] < r.slots]
        if not free:
            return None
        runner = min(free, key=lambda r: self._busy[r.name] / r.slots)
        self._busy[runner.name] += 1
        return runner

    def acquire_named(self, name: str) -> JobRunner | None:
        """Reserve a slot on the runner called `name` (to re-attach to a job it holds)."""
        runner = self._runners.get(name)
        if runner is None or self._busy[name] >= runner.slots:
            return None
        self._busy[name] += 1
        return runner

    def release(self, runner: JobRunner, *, wake: bool = True) -> None:
        """Give a slot back; `wake` tells the dispatcher that there is room for another job."""
        self._busy[runner.name] -= 1
        if wake:
            self.freed.set()


@dataclass(frozen=True)
class Recovery:
    attached: int
    requeued: int

    def counts(self) -> tuple[int, int]:
        return self.attached, self.requeued


class Dispatcher:
    """Moves jobs from the queue to runners and their results into the store."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        runners: RunnerPool,
        settings: DispatchSettings,
        *,
        on_event: EventHook | None = None,
    ) -> None:
        self._pool = pool
        self._runners = runners
        self._settings = settings
        self._on_event = on_event
        self._inflight: dict[int, asyncio.Task[SubmissionResult | None]] = {}
        self.failures: dict[int, BaseException] = {}
        """Jobs whose progress could not be stored, by job id: their leases lapse and a sweep retries them."""

    @property
    def owner(self) -> str:
        return self._settings.owner

    @property
    def inflight(self) -> frozenset[int]:
        """Ids of the jobs this dispatcher is running now."""
        return frozenset(self._inflight)

    async def run(self) -> None:
        """Recover, then dispatch until cancelled; new submissions wake it through LISTEN/NOTIFY."""
        conn = await self._pool.acquire()
        await conn.add_listener(jobs.QUEUE_CHANNEL, self._notified)
        try:
            await self.recover()
            next_sweep = time.monotonic() + self._settings.lease_s / 2
            while True:
                # Cleared before looking, so a wake-up that comes while we look is not lost.
                self._runners.freed.clear()
                try:
                    await self.dispatch_ready()
                    if time.monotonic() >= next_sweep:
                        next_sweep = time.monotonic() + self._settings.lease_s / 2
                        await self._adopt(
                            await jobs.take_over(self._pool, self.owner, self._settings.lease_s, include_own=False)
                        )
                except (asyncpg.PostgresError, OSError) as exc:
                    # The store is briefly unreachable (a restart, a failover): keep the loop, try again later.
                    log.warning(
                        "dispatcher %s: store error (%s); retrying in %.0f s", self.owner, exc, self._settings.poll_s
                    )
                await self._wait_for_work()
        finally:
            await self._abandon()
            with contextlib.suppress(asyncpg.PostgresError, OSError):
                await conn.remove_listener(jobs.QUEUE_CHANNEL, self._notified)
            await self._pool.release(conn)

    def _notified(self, *_: object) -> None:
        self._runners.freed.set()

    async def _wait_for_work(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._runners.freed.wait(), timeout=self._settings.poll_s)

    async def recover(self) -> Recovery:
        """Take over this owner's leases (left by a previous run) and lapsed ones: re-attach or requeue each."""
        leases = await jobs.take_over(self._pool, self.owner, self._settings.lease_s, include_own=True)
        recovery = await self._adopt(leases)
        if leases:
            log.info("recovered %d jobs: %d re-attached, %d requeued", len(leases), *recovery.counts())
        return recovery

    async def _adopt(self, leases: list[Lease]) -> Recovery:
        attached = requeued = 0
        for lease in leases:
            stale = self._inflight.get(lease.job_id)
            if stale is not None:
                # Our own lease lapsed (the store was unreachable for a while): the old task's token is void now.
                stale.cancel()
                await asyncio.gather(stale, return_exceptions=True)
            runner = self._runners.acquire_named(lease.runner) if lease.runner else None
            if runner is None:
                await self._retry(lease, f"runner {lease.runner} is not available after a dispatcher restart")
                requeued += 1
            else:
                self._start(lease, runner, attach=True)
                attached += 1
        return Recovery(attached, requeued)

    async def dispatch_ready(self) -> int:
        """Claim a queued job for every idle runner slot and start it; returns how many were started."""
        started = 0
        for gpu_type in self._runners.gpu_types():
            while (runner := self._runners.acquire(gpu_type)) is not None:
                lease = await jobs.claim_next(self._pool, gpu_type, self.owner, self._settings.lease_s, runner.name)
                if lease is None:
                    self._runners.release(runner, wake=False)  # nothing queued: not a reason to look again
                    break
                self._start(lease, runner, attach=False)
                started += 1
        return started

    async def run_job(self, job_id: int, gpu_type: str) -> SubmissionResult | None:
        """Dispatch one queued job now and wait for it (the CLI's path). None when it did not finish this time:
        it was requeued after a lost runner, or it was not queued."""
        runner = self._runners.acquire(gpu_type)
        if runner is None:
            raise RunnerLostError(f"no idle runner for GPU type {gpu_type!r}")
        lease = await jobs.claim_job(self._pool, job_id, self.owner, self._settings.lease_s, runner.name)
        if lease is None:
            self._runners.release(runner, wake=False)
            return None
        return await self._execute(lease, runner, attach=False)

    async def wait_idle(self) -> None:
        """Wait until every in-flight job has finished (tests, and a graceful shutdown)."""
        while self._inflight:
            await asyncio.wait(list(self._inflight.values()))

    def _start(self, lease: Lease, runner: JobRunner, *, attach: bool) -> None:
        task = asyncio.create_task(self._guarded(lease, runner, attach=attach), name=f"job-{lease.job_id}")
        self._inflight[lease.job_id] = task
        task.add_done_callback(lambda _: self._inflight.pop(lease.job_id, None))

    async def _abandon(self) -> None:
        tasks = list(self._inflight.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _guarded(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        try:
            return await self._execute(lease, runner, attach=attach)
        except (asyncpg.PostgresError, OSError) as exc:
            # The store is unreachable. The job keeps its lease, which lapses without heartbeats; whichever
            # dispatcher sweeps next (this one included) takes it over.
            log.exception("job %d: could not store its progress", lease.job_id)
            self.failures[lease.job_id] = exc
            return None

    async def _execute(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        heartbeat = asyncio.create_task(self._heartbeat(lease))
        try:
            try:
                result = await self._follow(lease, runner, attach=attach)
            except RunnerLostError as exc:
                await self._retry(lease, f"runner {runner.name}: {exc}")
                return None
            except Exception as exc:
                # A fault in a runner client must not take the dispatcher down; the job is retried elsewhere.
                log.exception("job %d: runner %s raised", lease.job_id, runner.name)
                await self._retry(lease, f"runner {runner.name} raised {type(exc).__name__}: {exc}")
                return None
            if result is None:
                await self._retry(lease, f"runner {runner.name} no longer holds the job")
                return None
            if not await record_result(self._pool, lease, result, runner.name):
                log.warning("job %d: lease lost before the result was stored; dropping it", lease.job_id)
                return None
            return result
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            self._runners.release(runner)

    async def _follow(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        sink = self._sink(lease)
        if attach:
            return await runner.attach(job_key(lease.job_id), sink)
        spec = await jobs.job_spec(self._pool, lease.job_id)
        assert spec is not None, "a claimed job always has a submission"
        request = JobRequest(
            submission_id=str(spec.submission_id),
            problem_slug=spec.slug,
            problem_version=spec.problem_version,
            problem_source=spec.problem_source,
            language=spec.language,  # type: ignore[arg-type]
            file_name=spec.file_name,
            source=spec.source,
            dtype=spec.dtype,  # type: ignore[arg-type]
            mode=spec.mode,  # type: ignore[arg-type]
        )
        log.info("job %d (submission %d) -> runner %s", lease.job_id, lease.submission_id, runner.name)
        return await runner.run(job_key(lease.job_id), request, sink)

    def _sink(self, lease: Lease) -> EventCallback:
        started = lease.state == "running"

        async def on_event(event: JobEvent) -> None:
            nonlocal started
            if not started:
                started = True
                await mark_running(self._pool, lease)
            if self._on_event is not None:
                try:
                    maybe = self._on_event(lease.submission_id, event)
                    if maybe is not None:
                        await maybe
                except Exception:
                    # Progress display is best effort; the job goes on whatever the display does.
                    log.exception("submission %d: the event hook failed", lease.submission_id)

        return on_event

    async def _retry(self, lease: Lease, reason: str) -> None:
        state = await requeue_or_fail(
            self._pool,
            lease,
            reason,
            max_attempts=self._settings.max_attempts,
            backoff_s=self._settings.retry_backoff_s,
        )
        if state is None:
            log.warning("job %d: lease lost while requeueing (%s)", lease.job_id, reason)
        self._runners.freed.set()

    async def _heartbeat(self, lease: Lease) -> None:
        while True:
            await asyncio.sleep(self._settings.lease_s / 3)
            try:
                if not await jobs.extend(self._pool, lease, self._settings.lease_s):
                    log.warning("job %d: lease lost to another dispatcher", lease.job_id)
                    return
            except (asyncpg.PostgresError, OSError) as exc:
                log.warning("job %d: could not renew the lease (%s); will retry", lease.job_id, exc)
