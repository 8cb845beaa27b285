"""`submit_and_wait`, the store-backed path of `arena submit`: store the submission, run its job on a runner
the caller built (usually `runner.clients.local.LocalRunner`), store the result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import asyncpg

from contract.names import DEFAULT_DTYPE, DEFAULT_MODE, DType, Mode, rank_pool
from contract.runner_client import EventCallback, JobRunner
from contract.wire import ErrorInfo, JobEvent, SubmissionResult
from core.contests.entry import ContestEntries, contest_entries, receipt_line
from core.dispatch import Dispatcher, RunnerPool
from core.problems import ProblemSpec, sync_problem
from core.results import load_result
from core.settings import Settings
from core.store import jobs, submissions
from core.store.pool import open_store
from core.submit.intake import SubmitRequest, submit
from core.submit.uploads import Upload

log = logging.getLogger(__name__)


class OwnedRunner(JobRunner, Protocol):
    """A runner made for one submission, which this path stops when it is done (`LocalRunner`)."""

    async def aclose(self) -> None: ...


async def _deliver(on_event: EventCallback, event: JobEvent) -> None:
    maybe = on_event(event)
    if maybe is not None:
        await maybe


@dataclass(frozen=True)
class LocalSubmission:
    """What `arena submit` hands over: the problem as the code describes it, the file, and the options."""

    problem: ProblemSpec
    upload: Upload
    dtype: DType = DEFAULT_DTYPE
    mode: Mode = DEFAULT_MODE
    user_name: str | None = None
    profile_case: int | None = None
    """Mode `profile`: the test case to profile, by index; None: the largest."""
    world_size: int = 1
    """The ranks to run on: 1, one device; N, a distributed problem on the pool's slots of N ranks."""

    def submit_request(self, gpu_type: str, local_user: str) -> SubmitRequest:
        """The submission as the store takes it, from this machine's user (`local:<name>`)."""
        user = self.user_name or local_user
        return SubmitRequest(
            f"local:{user}",
            user,
            self.problem.slug,
            self.upload,
            rank_pool(gpu_type, self.world_size),
            self.dtype,
            self.mode,
            profile_case=self.profile_case,
            world_size=self.world_size,
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
    contests: ContestEntries | None = None
    """A ranked run, once judged: what it counts for (None: not ranked, or no contest holds its problem)."""

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


async def contests_of(pool: asyncpg.Pool, submission_id: int) -> ContestEntries | None:
    """What the submission counts for now, if it is a ranked run on a problem some contest holds."""
    sub = await submissions.get_submission(pool, submission_id)
    return None if sub is None else await contest_entries(pool, sub, datetime.now(UTC))


async def say_receipt(pool: asyncpg.Pool, submission_id: int, say: Callable[[str], None] | None) -> None:
    """Tell at once, as the receipt does, a ranked run that will count for no contest on its problem."""
    if say is not None and (line := receipt_line(await contests_of(pool, submission_id))) is not None:
        say(line)


async def submit_and_wait(
    settings: Settings,
    local: LocalSubmission,
    runner: OwnedRunner,
    on_event: EventCallback | None = None,
    progress: LocalRun | None = None,
    say: Callable[[str], None] | None = None,
) -> tuple[int, SubmissionResult]:
    """Record a submission in the store (embedded by default), run its job on `runner` (for the runner's GPU
    type), record the result. The runner is closed when this returns.

    Jobs queued before it on the same GPU type (left by an `arena` command that was killed) run first: an
    accepted submission is never dropped. Returns the submission id and the result. A ranked run that will count
    for no contest on its problem is told to `say` once stored; what it counts for once judged is in `progress`.

    Cancelling the caller (Ctrl-C) withdraws the submission: its workers are killed, and its job ends `failed`
    ("cancelled by the user") so that no later run picks it up. `progress` tells what became of it.
    """
    async with open_store(settings.store) as store:
        return await run_local_submission(store.pool, settings, local, runner, on_event, progress, say)


async def run_local_submission(
    pool: asyncpg.Pool,
    settings: Settings,
    local: LocalSubmission,
    runner: OwnedRunner,
    on_event: EventCallback | None = None,
    progress: LocalRun | None = None,
    say: Callable[[str], None] | None = None,
) -> tuple[int, SubmissionResult]:
    """`submit_and_wait` on an open pool."""
    progress = progress if progress is not None else LocalRun()
    await sync_problem(pool, local.problem)
    request = local.submit_request(runner.gpu_type, settings.local_user)
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
    if local.mode == "ranked":
        await say_receipt(pool, receipt.submission_id, say)
    captured: dict[str, SubmissionResult] = {}

    async def hook(submission_id: int, event: JobEvent) -> None:
        if submission_id != receipt.submission_id:
            return
        if event.type == "done" and event.result is not None:
            captured["result"] = event.result
        if on_event is not None:
            await _deliver(on_event, event)

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
    if local.mode == "ranked":
        progress.contests = await contests_of(pool, receipt.submission_id)
    if "result" in captured:
        return receipt.submission_id, captured["result"]
    # Another dispatcher ran it (a job left by an earlier command): the store has its whole result.
    sub = await submissions.get_submission(pool, receipt.submission_id)
    assert sub is not None
    return receipt.submission_id, await load_result(pool, sub)
