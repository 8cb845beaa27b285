"""The dispatch loop: recovery after a restart, claiming queued jobs for idle runner slots, and the jobs in flight.

Following and finishing each claimed job is `core.dispatch.job_run`'s; the LISTEN connection that wakes the loop,
`core.dispatch.queue_listener`'s; runners that do not answer, `core.dispatch.runner_watch`'s. The design of the
whole is in the package's docstring (`core.dispatch`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass

import asyncpg

from contract.errors import RunnerLostError
from contract.runner_client import JobRunner
from contract.wire import SubmissionResult
from core.dispatch.job_run import EventHook, JobRuns
from core.dispatch.pool import RunnerPool
from core.dispatch.queue_listener import QueueListener
from core.dispatch.runner_watch import RunnerStateHook, RunnerWatch
from core.results import fail_unreachable
from core.settings import DispatchSettings
from core.store import jobs
from core.store.jobs import Lease
from core.store.outage import STORE_ERRORS

log = logging.getLogger(__name__)


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
        on_runner_state: RunnerStateHook | None = None,
    ) -> None:
        self._pool = pool
        self._runners = runners
        self._settings = settings
        self._inflight: dict[int, asyncio.Task[SubmissionResult | None]] = {}
        # The specs the claims read, by job id, until each job's task posts it (a re-run reads it again).
        self._specs: dict[int, jobs.JobSpec] = {}
        self._listener = QueueListener(pool, settings, lambda: runners.freed.set())
        self._watch = RunnerWatch(runners, settings, on_runner_state)
        self._runs = JobRuns(pool, runners, settings, self._watch, self._specs, on_event=on_event)
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
        """Recover, then dispatch until cancelled; new submissions wake it through LISTEN/NOTIFY.

        Nothing the store or a runner does ends this loop: while the database is out of reach it tries again
        every `store_retry_s` (recovery first, if it has not happened yet), and picks up where it was."""
        recovered = False
        next_sweep = 0.0
        try:
            while True:
                # Cleared before looking, so a wake-up that comes while we look is not lost.
                self._runners.freed.clear()
                store_ok = True
                try:
                    await self._listener.listen()
                    if not recovered:
                        await self.recover()
                        recovered = True
                        next_sweep = time.monotonic() + self._settings.lease_s / 2
                    await self.dispatch_ready()
                    if time.monotonic() >= next_sweep:
                        next_sweep = time.monotonic() + self._settings.lease_s / 2
                        await self._sweep()
                    await self._expire_stranded()
                except STORE_ERRORS as exc:
                    # The store is unreachable (a restart, a failover): keep the loop, try again soon.
                    store_ok = False
                    log.warning(
                        "dispatcher %s: store error (%s: %s); retrying in %.1f s",
                        self.owner,
                        type(exc).__name__,
                        exc,
                        self._settings.store_retry_s,
                    )
                except Exception:
                    # Whatever it is, a dispatcher that stops leaves every submission queued: log it and go on.
                    store_ok = False
                    log.exception("dispatcher %s: the dispatch loop failed; trying again", self.owner)
                self._watch.probe_down_runners()
                self._watch.tell_outage_changes()
                await self._wait_for_work(hurry=not store_ok or not self._listener.listening)
        finally:
            await self._abandon()
            await self._listener.unlisten()

    async def _sweep(self) -> None:
        """Take over lapsed leases, and check that the LISTEN connection still answers: a connection cut off
        without a word (a dead network path) would otherwise look alive and hear nothing."""
        await self._listener.check()
        leases = await jobs.take_over(
            self._pool, self.owner, self._settings.lease_s, include_own=False, exclude=list(self._inflight)
        )
        await self._adopt(leases)

    async def _wait_for_work(self, *, hurry: bool = False) -> None:
        timeout = self._settings.poll_s
        if hurry:
            timeout = min(timeout, self._settings.store_retry_s)
        if self._runners.down():
            timeout = min(timeout, self._settings.runner_probe_s)
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel that lands as `freed` is set,
        # and this loop would never stop.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._runners.freed.wait()

    async def recover(self) -> Recovery:
        """Take over this owner's leases (left by a previous run) and lapsed ones: re-attach or requeue each."""
        leases = await jobs.take_over(
            self._pool, self.owner, self._settings.lease_s, include_own=True, exclude=list(self._inflight)
        )
        recovery = await self._adopt(leases)
        if leases:
            log.info("recovered %d jobs: %d re-attached, %d requeued", len(leases), *recovery.counts())
        return recovery

    async def _adopt(self, leases: list[Lease]) -> Recovery:
        attached = requeued = 0
        for lease in leases:
            stale = self._inflight.get(lease.job_id)
            if stale is not None:
                # Our own lease was taken over anew: the old task's token is void now.
                stale.cancel()
                await asyncio.gather(stale, return_exceptions=True)
            runner = self._runners.acquire_named(lease.runner) if lease.runner else None
            if runner is None:
                await self._runs.retry(lease, f"runner {lease.runner} is not available after a dispatcher restart")
                requeued += 1
            else:
                self._start(lease, runner, attach=True)
                attached += 1
        return Recovery(attached, requeued)

    async def dispatch_ready(self) -> int:
        """Claim a queued job for every idle runner slot and start it; returns how many were started."""
        started = 0
        for gpu_type in self._runners.gpu_types():
            # Read once per pass, not per claim: it walks every runner, and a pass claims for every free slot of a
            # fleet of many (the pool it reflects changes between passes, when the fleet view refreshes).
            capacity = self._runners.capacity(gpu_type)
            # Runners that this dispatcher thinks free but whose slots other dispatchers filled (the store counts
            # every dispatcher's jobs): passed over until the next pass.
            full: set[str] = set()
            while (runner := self._runners.acquire(gpu_type, passed_over=full)) is not None:
                try:
                    claim = await jobs.claim_for_runner(
                        self._pool,
                        gpu_type,
                        self.owner,
                        self._settings.lease_s,
                        runner.name,
                        ranked=not self._runners.quarantined(runner.name),
                        capacity=capacity,
                    )
                except BaseException:
                    # The claim never reached the store, or its answer was lost: the slot is free either way.
                    self._runners.release(runner, wake=False)
                    raise
                if claim.lease is None:
                    self._runners.release(runner, wake=False)  # nothing queued: not a reason to look again
                    if claim.full:
                        self._runners.mark_full(runner.name)
                        full.add(runner.name)
                        continue
                    break
                if claim.spec is not None:
                    self._specs[claim.lease.job_id] = claim.spec
                self._start(claim.lease, runner, attach=False)
                started += 1
        return started

    async def run_job(self, job_id: int, gpu_type: str) -> SubmissionResult | None:
        """Dispatch one queued job now and wait for it (the CLI's path). None when it did not finish this time:
        it was requeued after a lost runner, or it was not queued."""
        runner = self._runners.acquire(gpu_type)
        if runner is None:
            raise RunnerLostError(f"no idle runner for GPU type {gpu_type!r}")
        try:
            lease = await jobs.claim_job(self._pool, job_id, self.owner, self._settings.lease_s, runner.name)
        except BaseException:
            self._runners.release(runner, wake=False)
            raise
        if lease is None:
            self._runners.release(runner, wake=False)
            return None
        return await self._runs.execute(lease, runner, attach=False)

    async def wait_idle(self) -> None:
        """Wait until every in-flight job has finished (tests, and a graceful shutdown)."""
        while self._inflight:
            await asyncio.wait(list(self._inflight.values()))

    async def abandon(self) -> None:
        """Stop following every in-flight job, as a crash would: nothing is written, leases stay as they are.
        A CLI interrupted by its user calls this before it withdraws its own job, so that no retry requeues it."""
        await self._abandon()

    def _start(self, lease: Lease, runner: JobRunner, *, attach: bool) -> None:
        task = asyncio.create_task(self._guarded(lease, runner, attach=attach), name=f"job-{lease.job_id}")
        self._inflight[lease.job_id] = task
        task.add_done_callback(lambda _: self._forget(lease.job_id))

    def _forget(self, job_id: int) -> None:
        self._inflight.pop(job_id, None)
        # A task stopped before it posted its job leaves the claim's spec; a later claim of the job reads it anew.
        self._specs.pop(job_id, None)

    async def _abandon(self) -> None:
        tasks = [*self._inflight.values(), *self._watch.probes()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _guarded(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        try:
            return await self._runs.execute(lease, runner, attach=attach)
        except STORE_ERRORS as exc:
            # Not an outage (those are waited out): a store error no retry fixes. The job keeps its lease, which
            # lapses without heartbeats; whichever dispatcher sweeps next (this one included) takes it over.
            log.exception("job %d: could not store its progress", lease.job_id)
            self.failures[lease.job_id] = exc
            return None

    async def _expire_stranded(self) -> None:
        """Fail the queued jobs of a GPU type whose runners have not answered for `runner_outage_s`: each job
        waits that long, counted from the later of its submission and the outage's start."""
        limit = self._settings.runner_outage_s
        for gpu_type in self._runners.gpu_types():
            since = self._runners.outage_since(gpu_type)
            if since is None or time.monotonic() - since < limit:
                continue
            for lease in await jobs.claim_stranded(self._pool, gpu_type, self.owner, self._settings.lease_s, limit):
                waited = time.monotonic() - since
                await fail_unreachable(self._pool, lease, waited)
