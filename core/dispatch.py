"""The dispatcher: hands queued jobs to idle runners of the right GPU type, and survives its own restarts.

Runners are reached through the `JobRunner` protocol (the HTTP runner client implements it for remote GPU
hosts; `runner.clients.local.LocalRunner` runs jobs on this machine). The queue lives in Postgres
(`core.store.jobs`), so the dispatcher itself keeps no state that a crash could lose:

- claiming is `FOR UPDATE SKIP LOCKED`, so several dispatchers never take the same job;
- a claim is a lease, kept alive by a heartbeat; a dispatcher that dies stops renewing it;
- on start, a dispatcher takes over its own leases and any that lapsed, and re-attaches to the runner that
  holds the job (`JobRunner.attach`) or requeues it;
- a runner that is lost mid-job puts the job back in the queue, at most `max_attempts` dispatches in all.

Outages are waited out, not counted against jobs:

- the store: every step that reads or writes it is retried until it answers (a runner slot is never kept by a
  step that failed), the LISTEN connection is made again, and a result that could not be stored is kept and
  stored when the database is back;
- a runner that does not answer (`RunnerUnavailableError`) is set aside and probed every `runner_probe_s`. A
  job it never got goes back to the queue with the attempt not counted; a job it had accepted is followed
  again once it answers. The hook `on_runner_state` hears when a GPU type loses its last answering runner
  and when one is back, so that users are told their job waits. Jobs fail only when no runner of their GPU
  type has answered for `runner_outage_s`.

Cancelling `run()` behaves like a crash as far as the queue is concerned: in-flight jobs keep their leases,
and the next start deals with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import asyncpg

from contract.errors import RunnerClientError, RunnerLostError, RunnerUnavailableError
from contract.runner_client import EventCallback, JobRunner
from contract.wire import JobEvent, JobRequest, SubmissionResult
from core.results import fail_unreachable, mark_running, record_result, requeue_or_fail, requeue_unreached
from core.settings import DispatchSettings
from core.store import jobs
from core.store.jobs import Lease
from core.store.outage import STORE_ERRORS, STORE_OUTAGE_ERRORS

log = logging.getLogger(__name__)

EventHook = Callable[[int, JobEvent], Awaitable[None] | None]
"""Called with (submission id, event) for every runner event: the bot edits the user's message from it."""
RunnerStateHook = Callable[[str, float | None], None]
"""Called with (GPU type, `time.monotonic()` since when none of its runners answers, or None once one does)."""

T = TypeVar("T")


def _alive(conn: asyncpg.Connection) -> bool:
    """Whether a pooled connection is still open. One the server dropped went back to the pool by itself, and
    its proxy refuses every call, this one included."""
    try:
        return not conn.is_closed()
    except asyncpg.InterfaceError:
        return False


def job_key(job_id: int) -> str:
    """The runner-side idempotency key: one per job, so a rerun (a new job) is never mistaken for the old."""
    return f"job-{job_id}"


def _host_busy(result: SubmissionResult) -> bool:
    return result.error is not None and result.error.code == "host_busy"


class RunnerPool:
    """The runners this dispatcher may use, and which of their slots are busy."""

    def __init__(self, runners: Iterable[JobRunner] = ()) -> None:
        self._runners = {r.name: r for r in runners}
        self._busy: dict[str, int] = dict.fromkeys(self._runners, 0)
        self._down: dict[str, float] = {}
        # Runners given here (a local one) stay whatever the fleet's view says.
        self._static = frozenset(self._runners)
        # The fleet's view (`update`): runners no longer listed that still finish a job in flight (`gone`), runners
        # that finish their jobs but take no new one (`draining`), and those whose canaries drifted (no ranked job).
        self._gone: set[str] = set()
        self._draining: set[str] = set()
        self._quarantined: set[str] = set()
        # Slots of each fleet runner taken by other dispatchers' jobs, from the store's count at the last update (or
        # a claim that found the runner full): this dispatcher tries no claim for a runner they fill.
        self._elsewhere: dict[str, int] = {}
        self.freed = asyncio.Event()

    def update(
        self,
        runners: Iterable[JobRunner],
        *,
        draining: Iterable[str] = (),
        quarantined: Iterable[str] = (),
        in_flight: Mapping[str, int] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Make the pool the given runners (the fleet's live ones, read from the store): new ones join, a runner
        object that changed (a runner that joined again) replaces the old one, and one no longer listed leaves
        once its jobs are done. `in_flight` is the store's count of each runner's jobs in flight, every
        dispatcher's: those beyond this one's own take slots here too. Returns the names that joined and those that
        left."""
        listed = {r.name: r for r in runners if r.name not in self._static}
        listed |= {name: self._runners[name] for name in self._static}
        joined = [name for name, r in listed.items() if self._runners.get(name) is not r]
        for name in joined:
            self._runners[name] = listed[name]
            self._busy.setdefault(name, 0)
            self._down.pop(name, None)
        left = [name for name in self._runners if name not in listed and name not in self._gone]
        self._gone = {name for name in self._runners if name not in listed}
        for name in list(self._gone):
            if self._busy.get(name, 0) == 0:
                self._drop(name)
        self._draining = set(draining) & set(listed)
        self._quarantined = set(quarantined) & set(listed)
        counted = in_flight or {}
        self._elsewhere = {
            name: count - self._busy.get(name, 0)
            for name, count in counted.items()
            if count > self._busy.get(name, 0) and name in listed
        }
        if joined:
            self.freed.set()
        return joined, left

    def _drop(self, name: str) -> None:
        self._runners.pop(name, None)
        self._busy.pop(name, None)
        self._down.pop(name, None)
        self._gone.discard(name)

    def members(self, gpu_type: str | None = None) -> list[JobRunner]:
        """The runners in the pool (of `gpu_type`), gone ones finishing a job excluded."""
        return [
            r
            for name, r in self._runners.items()
            if name not in self._gone and (gpu_type is None or r.gpu_type == gpu_type)
        ]

    def is_live(self, name: str) -> bool:
        """Whether the runner is still in the pool: listed by the fleet (always, in a static pool)."""
        return name in self._runners and name not in self._gone

    def quarantined(self, name: str) -> bool:
        return name in self._quarantined

    def capacity(self, gpu_type: str) -> int:
        """The slots of the runners of `gpu_type` that take new jobs."""
        return sum(r.slots for r in self._runners.values() if r.gpu_type == gpu_type and self._takes_jobs(r.name))

    def _takes_jobs(self, name: str) -> bool:
        return name not in self._gone and name not in self._draining

    def gpu_types(self) -> list[str]:
        return sorted({r.gpu_type for r in self._runners.values()})

    def acquire(self, gpu_type: str, *, passed_over: Collection[str] = ()) -> JobRunner | None:
        """Reserve a slot on the least busy answering runner of `gpu_type`, or None when all are busy or down;
        `passed_over` names runners not to choose (full by the store's count)."""
        free = [
            r
            for r in self._runners.values()
            if r.gpu_type == gpu_type
            and r.name not in passed_over
            and self._busy[r.name] + self._elsewhere.get(r.name, 0) < r.slots
            and r.name not in self._down
            and self._takes_jobs(r.name)
        ]
        if not free:
            return None
        runner = min(free, key=lambda r: self._busy[r.name] / r.slots)
        self._busy[runner.name] += 1
        return runner

    def mark_full(self, name: str) -> None:
        """The store says other dispatchers fill the runner's free slots: none is tried until the next update."""
        runner = self._runners.get(name)
        if runner is not None:
            self._elsewhere[name] = max(runner.slots - self._busy.get(name, 0), 0)

    def acquire_named(self, name: str) -> JobRunner | None:
        """Reserve a slot on the runner called `name` (to re-attach to a job it holds)."""
        runner = self._runners.get(name)
        if runner is None or name in self._gone or self._busy[name] >= runner.slots:
            return None
        self._busy[name] += 1
        return runner

    def release(self, runner: JobRunner, *, wake: bool = True) -> None:
        """Give a slot back; `wake` tells the dispatcher that there is room for another job."""
        if runner.name in self._busy:
            self._busy[runner.name] = max(self._busy[runner.name] - 1, 0)
            if self._busy[runner.name] == 0 and runner.name in self._gone:
                self._drop(runner.name)
        if wake:
            self.freed.set()

    def mark_down(self, runner: JobRunner, now: float) -> bool:
        """The runner stopped answering: no new job goes to it. True when it was answering until now."""
        if runner.name in self._down:
            return False
        self._down[runner.name] = now
        return True

    def mark_up(self, runner: JobRunner) -> bool:
        """The runner answers again; wakes the dispatcher. True when it was down until now."""
        if self._down.pop(runner.name, None) is None:
            return False
        self.freed.set()
        return True

    def down_since(self, runner: JobRunner) -> float | None:
        return self._down.get(runner.name)

    def down(self) -> list[JobRunner]:
        """The runners that do not answer now."""
        return [self._runners[name] for name in self._down]

    def outage_since(self, gpu_type: str) -> float | None:
        """Since when no runner of `gpu_type` answers (`time.monotonic()`), or None when one does."""
        since = [self._down.get(r.name) for r in self._runners.values() if r.gpu_type == gpu_type]
        if not since or any(s is None for s in since):
            return None
        return max(s for s in since if s is not None)


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
        self._on_event = on_event
        self._on_runner_state = on_runner_state
        self._inflight: dict[int, asyncio.Task[SubmissionResult | None]] = {}
        # The specs the claims read, by job id, until each job's task posts it (a re-run reads it again).
        self._specs: dict[int, jobs.JobSpec] = {}
        self._listener: asyncpg.Connection | None = None
        self._probes: dict[str, asyncio.Task[None]] = {}
        self._next_probe: dict[str, float] = {}
        # Per GPU type, the outage the hook was last told of (since when, or None: runners answer).
        self._outages: dict[str, float | None] = {}
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
                    await self._listen()
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
                self._probe_down_runners()
                self._tell_outage_changes()
                await self._wait_for_work(hurry=not store_ok or self._listener is None)
        finally:
            await self._abandon()
            await self._unlisten()

    async def _listen(self) -> None:
        """Hold a connection that LISTENs for new jobs; make it again when the old one died with the server."""
        conn = self._listener
        if conn is not None and _alive(conn):
            return
        if conn is not None:
            log.warning("dispatcher %s: the LISTEN connection was lost; connecting again", self.owner)
            await self._unlisten()
        # Bounded: with every pooled connection busy, the loop must go on dispatching (and polling) meanwhile.
        conn = await self._pool.acquire(timeout=self._settings.store_retry_s * 5)
        try:
            await conn.add_listener(jobs.QUEUE_CHANNEL, self._notified)
            # Wakes the loop when the server drops the connection, so that it connects again at once instead
            # of sleeping out `poll_s` deaf to new jobs.
            conn.add_termination_listener(self._listener_lost)
        except BaseException:
            await self._drop(conn)
            raise
        self._listener = conn

    def _listener_lost(self, *_: object) -> None:
        self._runners.freed.set()

    async def _unlisten(self) -> None:
        conn, self._listener = self._listener, None
        if conn is None:
            return
        if _alive(conn):
            with contextlib.suppress(*STORE_ERRORS):
                conn.remove_termination_listener(self._listener_lost)
                await conn.remove_listener(jobs.QUEUE_CHANNEL, self._notified)
        await self._drop(conn)

    async def _drop(self, conn: asyncpg.Connection) -> None:
        """Give the connection back to the pool; one that died went back by itself when it closed."""
        try:
            await self._pool.release(conn, timeout=self._settings.store_retry_s * 5)
        except STORE_ERRORS:
            # A connection that cannot be reset cleanly is of no use to anyone.
            with contextlib.suppress(asyncpg.InterfaceError):
                conn.terminate()

    async def _sweep(self) -> None:
        """Take over lapsed leases, and check that the LISTEN connection still answers: a connection cut off
        without a word (a dead network path) would otherwise look alive and hear nothing."""
        conn = self._listener
        if conn is not None:
            try:
                await conn.execute("SELECT 1", timeout=self._settings.store_retry_s * 5)
            except STORE_ERRORS:
                with contextlib.suppress(asyncpg.InterfaceError):
                    conn.terminate()
                raise
        leases = await jobs.take_over(
            self._pool, self.owner, self._settings.lease_s, include_own=False, exclude=list(self._inflight)
        )
        await self._adopt(leases)

    def _notified(self, *_: object) -> None:
        self._runners.freed.set()

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
        return await self._execute(lease, runner, attach=False)

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
        tasks = [*self._inflight.values(), *self._probes.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _guarded(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        try:
            return await self._execute(lease, runner, attach=attach)
        except STORE_ERRORS as exc:
            # Not an outage (those are waited out): a store error no retry fixes. The job keeps its lease, which
            # lapses without heartbeats; whichever dispatcher sweeps next (this one included) takes it over.
            log.exception("job %d: could not store its progress", lease.job_id)
            self.failures[lease.job_id] = exc
            return None

    async def _store(self, what: str, lease: Lease, step: Callable[[], Awaitable[T]]) -> T:
        """Run a store step, waiting out an outage: a job's result is never dropped because the database was
        briefly away. The lease fences the step, so a late one changes nothing if another dispatcher took over."""
        delay = 0.1
        while True:
            try:
                return await step()
            except STORE_OUTAGE_ERRORS as exc:
                log.warning(
                    "job %d: could not %s (%s: %s); trying again in %.1f s",
                    lease.job_id,
                    what,
                    type(exc).__name__,
                    exc,
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._settings.store_retry_s)

    async def _execute(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        heartbeat = asyncio.create_task(self._heartbeat(lease))
        try:
            result = await self._run_while_live(lease, runner, heartbeat, attach=attach)
            if result is None:
                return None
            if _host_busy(result) and lease.attempts < self._settings.max_attempts:
                # The runner's host was too loaded to check the timing: no verdict on the submission, so it runs
                # again after the usual backoff, on this runner or another.
                await self._retry(lease, "the runner's host was too busy to check the timing")
                return None
            recorded = await self._store(
                "store the result", lease, lambda: record_result(self._pool, lease, result, runner.name)
            )
            if not recorded:
                log.warning("job %d: lease lost before the result was stored; dropping it", lease.job_id)
                return None
            return result
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
            self._runners.release(runner)

    async def _run_while_live(
        self, lease: Lease, runner: JobRunner, heartbeat: asyncio.Task[bool], *, attach: bool
    ) -> SubmissionResult | None:
        """`_run_on`, given up when the runner leaves its pool (its heartbeats stopped, it was revoked): then the
        job goes back to the head of the queue at once, an attempt counted, and runs on another runner. A result
        the old runner sends later finds the lease gone and is dropped. Given up too when the lease's heartbeat
        finds the job ended without it (its submitter withdrew it): the runner is told to stop the job."""
        follow = asyncio.create_task(self._run_on(lease, runner, attach=attach), name=f"follow-{lease.job_id}")
        try:
            while True:
                waits = {follow} if heartbeat.done() else {follow, heartbeat}
                await asyncio.wait(waits, timeout=self._settings.runner_probe_s, return_when=asyncio.FIRST_COMPLETED)
                if follow.done():
                    return follow.result()
                if heartbeat.done() and not heartbeat.cancelled() and heartbeat.result():
                    follow.cancel()
                    await asyncio.gather(follow, return_exceptions=True)
                    await self._abandon_on(runner, lease)
                    return None
                if not self._runners.is_live(runner.name):
                    break
        finally:
            if not follow.done():
                follow.cancel()
                await asyncio.gather(follow, return_exceptions=True)
        log.warning("job %d: runner %s left its pool while it held the job; requeueing", lease.job_id, runner.name)
        await self._retry(lease, f"runner {runner.name} left its pool", backoff=False)
        return None

    async def _run_on(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        """The runner's result, or None when the job went back to the queue or failed (already stored)."""
        unanswered_since: float | None = None
        while True:
            try:
                result = await self._follow(lease, runner, attach=attach)
            except RunnerUnavailableError as exc:
                now = time.monotonic()
                self._runner_down(runner, now, exc)
                if not exc.accepted:
                    # The runner never got the job: it waits in the queue for any runner, this try not counted.
                    reason = f"runner {runner.name} did not answer: {exc}"
                    await self._store("requeue", lease, partial(requeue_unreached, self._pool, lease, reason))
                    self._runners.freed.set()
                    return None
                # The runner holds the job and may still be running it: follow it again when it answers.
                unanswered_since = unanswered_since or now
                waited = now - unanswered_since
                if waited >= self._settings.runner_outage_s:
                    await self._store("fail", lease, partial(fail_unreachable, self._pool, lease, waited))
                    return None
                log.info("job %d: runner %s holds it but does not answer; waiting", lease.job_id, runner.name)
                await asyncio.sleep(self._settings.runner_probe_s)
                attach = True
                continue
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
            return result

    async def _follow(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        sink = self._sink(lease, runner)
        if attach:
            return await runner.attach(job_key(lease.job_id), sink)
        spec = self._specs.pop(lease.job_id, None)
        if spec is None:
            spec = await self._store("read the job", lease, lambda: jobs.job_spec(self._pool, lease.job_id))
        assert spec is not None, "a claimed job always has a submission"
        request = JobRequest(
            submission_id=str(spec.submission_id),
            problem_slug=spec.slug,
            problem_version=spec.problem_version,
            problem_source=spec.problem_source,
            language=spec.language,
            file_name=spec.file_name,
            source=spec.source,
            dtype=spec.dtype,
            mode=spec.mode,
            profile_case=spec.profile_case,
        )
        log.info("job %d (submission %d) -> runner %s", lease.job_id, lease.submission_id, runner.name)
        return await runner.run(job_key(lease.job_id), request, sink)

    def _sink(self, lease: Lease, runner: JobRunner) -> EventCallback:
        started = lease.state == "running"

        async def on_event(event: JobEvent) -> None:
            nonlocal started
            self._runner_up(runner)  # it spoke
            if not started:
                try:
                    await mark_running(self._pool, lease)
                    started = True
                except STORE_OUTAGE_ERRORS as exc:
                    # Only a display of progress: the result, stored later, moves the job on from `dispatched`.
                    log.warning("job %d: could not mark it running (%s); will try on the next event", lease.job_id, exc)
            if self._on_event is not None and not lease.podium_check:  # a check's progress is nobody's to follow
                try:
                    maybe = self._on_event(lease.submission_id, event)
                    if maybe is not None:
                        await maybe
                except Exception:
                    # Progress display is best effort; the job goes on whatever the display does.
                    log.exception("submission %d: the event hook failed", lease.submission_id)

        return on_event

    async def _retry(self, lease: Lease, reason: str, *, backoff: bool = True) -> None:
        """Requeue the job (after a back-off, unless the runner is known gone), or fail it once it used its
        attempts."""
        backoff_s = self._settings.retry_backoff_s if backoff else 0.0
        state = await self._store(
            "requeue",
            lease,
            lambda: requeue_or_fail(
                self._pool,
                lease,
                reason,
                max_attempts=self._settings.max_attempts,
                backoff_s=backoff_s,
            ),
        )
        if state is None:
            log.warning("job %d: lease lost while requeueing (%s)", lease.job_id, reason)
        self._runners.freed.set()

    async def _heartbeat(self, lease: Lease) -> bool:
        """Renew the lease until it is lost; then True when the job has ended without it (withdrawn), False when
        another dispatcher holds it now."""
        while True:
            await asyncio.sleep(self._settings.lease_s / 3)
            try:
                if not await jobs.extend(self._pool, lease, self._settings.lease_s):
                    job = await jobs.get_job(self._pool, lease.job_id)
                    if job is None or job.state not in jobs.LIVE_STATES:
                        log.info("job %d ended without this dispatcher (%s)", lease.job_id, job and job.last_error)
                        return True
                    log.warning("job %d: lease lost to another dispatcher", lease.job_id)
                    return False
            except STORE_ERRORS as exc:
                log.warning("job %d: could not renew the lease (%s); will retry", lease.job_id, exc)

    async def _abandon_on(self, runner: JobRunner, lease: Lease) -> None:
        """Tell the runner to stop a withdrawn job, where it knows how (`abandon`); its slot is then free."""
        abandon = getattr(runner, "abandon", None)
        if abandon is not None:
            with contextlib.suppress(RunnerClientError):
                await abandon(job_key(lease.job_id))

    # -- runners that do not answer ----------------------------------------------------------------------------

    def _runner_down(self, runner: JobRunner, now: float, exc: RunnerUnavailableError) -> None:
        if self._runners.mark_down(runner, now):
            log.warning("runner %s (%s) does not answer: %s; jobs wait for it", runner.name, runner.gpu_type, exc)
            self._next_probe[runner.name] = now + self._settings.runner_probe_s
            self._tell_runner_state(runner.gpu_type)

    def _runner_up(self, runner: JobRunner) -> None:
        since = self._runners.down_since(runner)
        if since is not None and self._runners.mark_up(runner):
            log.info("runner %s answers again after %.1f s", runner.name, time.monotonic() - since)
            self._tell_runner_state(runner.gpu_type)

    def _tell_runner_state(self, gpu_type: str) -> None:
        if self._on_runner_state is None:
            return
        since = self._runners.outage_since(gpu_type)
        self._outages[gpu_type] = since
        try:
            self._on_runner_state(gpu_type, since)
        except Exception:
            log.exception("GPU type %s: the runner-state hook failed", gpu_type)

    def _tell_outage_changes(self) -> None:
        """Tell the hook of every GPU type whose outage began or ended since it was last told, however it changed:
        the fleet's view dropped the runner that stopped answering, or another runner of the type joined."""
        for gpu_type in {*self._runners.gpu_types(), *self._outages}:
            since = self._runners.outage_since(gpu_type)
            if (since is None) != (self._outages.get(gpu_type) is None):
                self._tell_runner_state(gpu_type)

    def _probe_down_runners(self) -> None:
        now = time.monotonic()
        for runner in self._runners.down():
            if runner.name in self._probes or now < self._next_probe.get(runner.name, 0.0):
                continue
            self._next_probe[runner.name] = now + self._settings.runner_probe_s
            task = asyncio.create_task(self._probe(runner), name=f"probe-{runner.name}")
            self._probes[runner.name] = task
            task.add_done_callback(lambda _, name=runner.name: self._probes.pop(name, None))

    async def _probe(self, runner: JobRunner) -> None:
        probe: Callable[[], Awaitable[bool]] | None = getattr(runner, "probe", None)
        try:
            answers = True if probe is None else await probe()
        except Exception:
            log.exception("runner %s: the probe failed", runner.name)
            answers = False
        if answers:
            self._runner_up(runner)

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
