"""Following and finishing one leased job: it is posted to its runner (or re-attached to), its lease kept alive,
its events relayed, and its result stored, or the job requeued or failed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

import asyncpg

from contract.errors import RunnerClientError, RunnerLostError, RunnerUnavailableError
from contract.runner_client import EventCallback, JobRunner
from contract.wire import JobEvent, JobRequest, SubmissionResult
from core.dispatch.pool import RunnerPool
from core.dispatch.runner_watch import RunnerWatch
from core.results import fail_unreachable, mark_running, record_result, requeue_or_fail, requeue_unreached
from core.settings import DispatchSettings
from core.store import jobs
from core.store.jobs import Lease
from core.store.outage import STORE_ERRORS, STORE_OUTAGE_ERRORS

log = logging.getLogger(__name__)

EventHook = Callable[[int, JobEvent], Awaitable[None] | None]
"""Called with (submission id, event) for every runner event: the bot edits the user's message from it."""

T = TypeVar("T")


def job_key(job_id: int) -> str:
    """The runner-side idempotency key: one per job, so a rerun (a new job) is never mistaken for the old."""
    return f"job-{job_id}"


RUNNING_AFTER_S = 0.5
"""A job is marked running (`mark_running`) once it has run this long since its runner's first event. One that ends
sooner goes from `dispatched` to its end in the statement that stores its result, which logs its run and its start
too: a statement and a commit fewer for every short job (a test run of a few hundred milliseconds). Only a display
of progress waits: the job holds its lease either way, and nothing but the display reads `running`."""


class _Start:
    """When one job's runner first spoke, and the job's move to `running` once it has run RUNNING_AFTER_S."""

    def __init__(self, marked: bool) -> None:
        self.marked = marked
        self._first_event: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.marking: asyncio.Task[None] | None = None

    def heard(self, mark: Callable[[], Awaitable[None]]) -> None:
        """The runner spoke: from its first event on, `mark` runs after RUNNING_AFTER_S (once)."""
        if self.marked or self._first_event is not None:
            return
        self._first_event = time.monotonic()
        self._timer = asyncio.get_running_loop().call_later(RUNNING_AFTER_S, self._start_marking, mark)

    def _start_marking(self, mark: Callable[[], Awaitable[None]]) -> None:
        self.marking = asyncio.create_task(mark(), name="mark-running")

    def elapsed(self) -> float:
        """Seconds since the runner's first event (0 before it)."""
        return 0.0 if self._first_event is None else time.monotonic() - self._first_event

    def unmarked_for(self) -> float | None:
        """How long the job has run without being marked running, or None when it was marked (or never started)."""
        return None if self.marked or self._first_event is None else self.elapsed()

    async def settle(self) -> None:
        """No mark from now on; one already under way finishes first, so that its job is not told apart twice."""
        self.stop()
        if self.marking is not None:
            await asyncio.gather(self.marking, return_exceptions=True)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _host_busy(result: SubmissionResult) -> bool:
    return result.error is not None and result.error.code == "host_busy"


class JobRuns:
    """Follows each job a dispatcher leased to its end, on the runner that holds a slot for it."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        runners: RunnerPool,
        settings: DispatchSettings,
        watch: RunnerWatch,
        specs: dict[int, jobs.JobSpec],
        *,
        on_event: EventHook | None = None,
    ) -> None:
        self._pool = pool
        self._runners = runners
        self._settings = settings
        self._watch = watch
        # The dispatcher's: the specs its claims read, by job id; a job's run takes its own when it posts the job.
        self._specs = specs
        self._on_event = on_event
        # Each job's start, by job id, while it runs here; and the marks under way (each task held until it ends).
        self._starts: dict[int, _Start] = {}
        self._markings: set[asyncio.Task[None]] = set()

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

    async def execute(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        heartbeat = asyncio.create_task(self._heartbeat(lease))
        start = self._starts[lease.job_id] = _Start(marked=lease.state == "running")
        try:
            result = await self._run_while_live(lease, runner, heartbeat, attach=attach)
            if result is None:
                return None
            if _host_busy(result) and lease.attempts < self._settings.max_attempts:
                # The runner's host was too loaded to check the timing: no verdict on the submission, so it runs
                # again after the usual backoff, on this runner or another.
                await self.retry(lease, "the runner's host was too busy to check the timing")
                return None
            await start.settle()
            started_s = start.unmarked_for()
            recorded = await self._store(
                "store the result",
                lease,
                lambda: record_result(self._pool, lease, result, runner.name, started_s=started_s),
            )
            if not recorded:
                log.warning("job %d: lease lost before the result was stored; dropping it", lease.job_id)
                return None
            return result
        finally:
            start.stop()
            if self._starts.get(lease.job_id) is start:
                del self._starts[lease.job_id]
            if start.marking is not None and not start.marking.done():
                # Fenced by the lease like every change: left to end on its own (a requeue made it a no-op).
                self._markings.add(start.marking)
                start.marking.add_done_callback(self._markings.discard)
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
        await self.retry(lease, f"runner {runner.name} left its pool", backoff=False)
        return None

    async def _run_on(self, lease: Lease, runner: JobRunner, *, attach: bool) -> SubmissionResult | None:
        """The runner's result, or None when the job went back to the queue or failed (already stored)."""
        unanswered_since: float | None = None
        while True:
            try:
                result = await self._follow(lease, runner, attach=attach)
            except RunnerUnavailableError as exc:
                now = time.monotonic()
                self._watch.runner_down(runner, now, exc)
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
                await self.retry(lease, f"runner {runner.name}: {exc}")
                return None
            except Exception as exc:
                # A fault in a runner client must not take the dispatcher down; the job is retried elsewhere.
                log.exception("job %d: runner %s raised", lease.job_id, runner.name)
                await self.retry(lease, f"runner {runner.name} raised {type(exc).__name__}: {exc}")
                return None
            if result is None:
                await self.retry(lease, f"runner {runner.name} no longer holds the job")
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
            world_size=spec.world_size,
        )
        # Debug, as every line a job writes on its usual path: at a fleet's rate, a line per job cost the dispatcher
        # a few per cent of its CPU (bench/results/fleet.txt). Requeues, failures and lost runners stay warnings.
        log.debug("job %d (submission %d) -> runner %s", lease.job_id, lease.submission_id, runner.name)
        return await runner.run(job_key(lease.job_id), request, sink)

    def _sink(self, lease: Lease, runner: JobRunner) -> EventCallback:
        start = self._starts.get(lease.job_id) or _Start(marked=lease.state == "running")

        async def on_event(event: JobEvent) -> None:
            self._watch.runner_up(runner)  # it spoke
            start.heard(lambda: self._mark_running(lease, start))
            if self._on_event is not None and not lease.podium_check:  # a check's progress is nobody's to follow
                try:
                    maybe = self._on_event(lease.submission_id, event)
                    if maybe is not None:
                        await maybe
                except Exception:
                    # Progress display is best effort; the job goes on whatever the display does.
                    log.exception("submission %d: the event hook failed", lease.submission_id)

        return on_event

    async def _mark_running(self, lease: Lease, start: _Start) -> None:
        try:
            await mark_running(self._pool, lease, start.elapsed())
            start.marked = True
        except STORE_OUTAGE_ERRORS as exc:
            # Only a display of progress: the result, stored later, moves the job on from `dispatched`.
            log.warning("job %d: could not mark it running (%s); its result will", lease.job_id, exc)
        except Exception:
            log.exception("job %d: could not mark it running; its result will", lease.job_id)

    async def retry(self, lease: Lease, reason: str, *, backoff: bool = True) -> None:
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
