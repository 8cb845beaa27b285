"""The dispatcher against the real queue: claiming, leases, bounded retries, and several dispatchers at once.

Runners here are `ScriptedRunner`s (the JobRunner protocol with made-up verdicts), so each test controls when
a runner succeeds, loses a job or hangs. The real worker runs in test_store_recovery.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Collection

import asyncpg
import pytest

from contract.wire import JobEvent, JobRequest, SubmissionResult
from core.dispatch import Dispatcher, RunnerPool, job_run
from core.errors import RunnerLostError
from core.results import record_result
from core.settings import DispatchSettings, Settings
from core.store import jobs
from core.submit.intake import submit
from core.submit.local import withdraw_submission
from tests.store.store_helpers import (
    ROOMY,
    ScriptedRunner,
    add_problems,
    cancel_and_wait,
    request,
    result_for,
    submission,
    wait_for_state,
)

FINAL = set(jobs.FINAL_STATES)


@contextlib.asynccontextmanager
async def running(dispatcher: Dispatcher) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(dispatcher.run())
    try:
        yield task
    finally:
        await cancel_and_wait(task)


async def scores_ten(_key: str, req: JobRequest) -> SubmissionResult:
    return result_for(req, 10.0)


class CountingPool(RunnerPool):
    """A RunnerPool that counts the dispatcher's looks for an idle slot (`acquire`), so that a test can wait for
    the dispatcher to have looked again instead of sleeping for a while."""

    looks = 0

    def acquire(self, gpu_type: str, *, passed_over: Collection[str] = ()):  # type: ignore[no-untyped-def]
        self.looks += 1
        return super().acquire(gpu_type, passed_over=passed_over)

    async def wait_for_looks(self, more: int, timeout_s: float = 60.0) -> None:
        target = self.looks + more
        async with asyncio.timeout(timeout_s):
            while self.looks < target:
                await asyncio.sleep(0.02)


async def test_a_queued_job_goes_to_an_idle_runner_and_its_result_is_recorded(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    runner = ScriptedRunner("gpu-box-1", scores_ten)
    seen: list[tuple[int, str]] = []
    dispatcher = Dispatcher(
        pool, RunnerPool([runner]), settings.dispatch, on_event=lambda s, e: seen.append((s, e.type))
    )
    async with running(dispatcher):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
    assert runner.calls == [f"job-{receipt.job_id}"]
    assert seen == [(receipt.submission_id, "accepted")]
    moves = [(t.from_state, t.to_state) for t in await jobs.transitions(pool, receipt.job_id)]
    assert moves == [("queued", "dispatched"), ("dispatched", "running"), ("running", "done")]
    stored = await submission(pool, receipt.submission_id)
    assert (stored.status, stored.score, stored.runner) == ("passed", 10.0, "gpu-box-1")


async def _run_one(pool: asyncpg.Pool, settings: Settings, seconds: float) -> tuple[int, list[jobs.Transition]]:
    """One job through a dispatcher, on a runner that takes `seconds` after its first event."""

    async def takes_a_while(_key: str, req: JobRequest) -> SubmissionResult:
        await asyncio.sleep(seconds)
        return result_for(req, 10.0)

    await add_problems(pool)
    receipt = await submit(pool, request("alice", mode="benchmark"), ROOMY)
    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box", takes_a_while)]), settings.dispatch)):
        await wait_for_state(pool, receipt.job_id, FINAL)
    return receipt.job_id, await jobs.transitions(pool, receipt.job_id)


async def _moves_at(pool: asyncpg.Pool, job_id: int) -> list[tuple[str, object]]:
    rows = await pool.fetch("SELECT to_state, at FROM job_transitions WHERE job_id = $1 ORDER BY id", job_id)
    return [(r["to_state"], r["at"]) for r in rows]


async def test_a_job_shorter_than_the_running_mark_logs_its_run_with_its_result(pool: asyncpg.Pool, settings: Settings):
    job_id, moves = await _run_one(pool, settings, 0.0)
    assert [(t.from_state, t.to_state) for t in moves] == [("queued", "dispatched"), ("dispatched", "running"),
                                                           ("running", "done")]  # fmt: skip
    at = dict(await _moves_at(pool, job_id))
    assert at["running"] == at["done"], "one statement stored the run and the result"
    job = await pool.fetchrow("SELECT started_at, finished_at FROM jobs WHERE id = $1", job_id)
    assert job["started_at"] is not None and job["started_at"] <= job["finished_at"]


async def test_a_job_that_runs_on_is_marked_running_while_it_runs(pool: asyncpg.Pool, settings: Settings):
    job_id, moves = await _run_one(pool, settings, job_run.RUNNING_AFTER_S + 1.0)
    assert [t.to_state for t in moves] == ["dispatched", "running", "done"]
    at = dict(await _moves_at(pool, job_id))
    # Marked by a statement of its own while the job ran, before the result's.
    assert at["running"] < at["done"]  # type: ignore[operator]
    job = await pool.fetchrow("SELECT started_at, dispatched_at FROM jobs WHERE id = $1", job_id)
    # The start is the runner's first event, not the mark's moment (which comes RUNNING_AFTER_S after it).
    assert job["dispatched_at"] <= job["started_at"] < at["running"]


async def test_jobs_only_go_to_runners_of_their_gpu_type(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    a100_job = await submit(pool, request("alice", gpu="a100"), ROOMY)
    h100_job = await submit(pool, request("bob", gpu="h100"), ROOMY)
    h100 = ScriptedRunner("h100-box", scores_ten, gpu_type="h100")
    runners = CountingPool([h100])
    async with running(Dispatcher(pool, runners, settings.dispatch)):
        await wait_for_state(pool, h100_job.job_id, FINAL)
        await runners.wait_for_looks(3)  # idle again, it looked at the queue and left the a100 job there
    assert h100.calls == [f"job-{h100_job.job_id}"]
    assert (await jobs.get_job(pool, a100_job.job_id)).state == "queued"  # type: ignore[union-attr]


async def test_a_lost_runner_is_retried_a_bounded_number_of_times_then_the_job_fails(
    pool: asyncpg.Pool, settings: Settings
):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)

    async def always_lost(_key: str, _req: JobRequest) -> SubmissionResult:
        raise RunnerLostError("connection reset")

    runner = ScriptedRunner("flaky", always_lost)
    async with running(Dispatcher(pool, RunnerPool([runner]), settings.dispatch)):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "failed"
    assert len(runner.calls) == settings.dispatch.max_attempts == 3
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.attempts == 3 and "connection reset" in (job.last_error or "")
    stored = await submission(pool, receipt.submission_id)
    assert stored.status == "error"
    assert stored.error_message == (
        "The `h100` runner could not finish this job in 3 attempts. Resubmit it, or ask a moderator to rerun it."
    ), "the user is told what to do, not the runner's internals"


async def test_a_job_lost_once_is_retried_and_completes(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    attempts: list[str] = []

    async def lost_once(key: str, req: JobRequest) -> SubmissionResult:
        attempts.append(key)
        if len(attempts) == 1:
            raise RunnerLostError("runner restarted")
        return result_for(req, 12.0)

    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box", lost_once)]), settings.dispatch)):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.attempts == 2
    assert (await submission(pool, receipt.submission_id)).score == 12.0


async def test_a_runner_that_raises_a_bug_does_not_stop_the_dispatcher(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    first = await submit(pool, request("alice"), ROOMY)
    second = await submit(pool, request("bob"), ROOMY)

    async def buggy_first(key: str, req: JobRequest) -> SubmissionResult:
        if key == f"job-{first.job_id}":
            raise ValueError("client bug")
        return result_for(req, 3.0)

    no_retry = settings.dispatch.model_copy(update={"max_attempts": 1})
    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box", buggy_first)]), no_retry)):
        assert await wait_for_state(pool, first.job_id, FINAL) == "failed"
        assert await wait_for_state(pool, second.job_id, FINAL) == "done"


async def test_a_result_under_a_lapsed_lease_is_refused_and_the_job_finishes_once(
    pool: asyncpg.Pool, settings: Settings
):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    stale = await jobs.claim_job(pool, receipt.job_id, "slow-dispatcher", 0.05, "box")
    assert stale is not None
    await asyncio.sleep(0.1)
    (current,) = await jobs.take_over(pool, "other-dispatcher", 30.0, include_own=False)
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert spec is not None
    assert not await record_result(pool, stale, result_for(spec, 99.0), "box")
    assert (await submission(pool, receipt.submission_id)).status == "queued", "the stale result changed nothing"
    assert await record_result(pool, current, result_for(spec, 5.0), "box")
    assert not await record_result(pool, current, result_for(spec, 7.0), "box"), "a job finishes once"
    assert (await submission(pool, receipt.submission_id)).score == 5.0
    done = [t for t in await jobs.transitions(pool, receipt.job_id) if t.to_state == "done"]
    assert len(done) == 1


async def test_another_dispatcher_takes_over_a_dead_dispatchers_job_once_its_lease_lapses(
    pool: asyncpg.Pool, settings: Settings
):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    hang = asyncio.Event()

    async def hangs(_key: str, _req: JobRequest) -> SubmissionResult:
        await hang.wait()
        raise AssertionError("never reached")

    short = DispatchSettings(owner="dies", lease_s=1.0, retry_backoff_s=0.0, poll_s=0.1)
    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box-a", hangs)]), short)):
        await wait_for_state(pool, receipt.job_id, {"running"})
    # The first dispatcher is gone without a word; its lease runs out within a second.
    survivor = ScriptedRunner("box-b", scores_ten)
    other = short.model_copy(update={"owner": "survives"})
    async with running(Dispatcher(pool, RunnerPool([survivor]), other)):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.attempts == 2 and job.runner == "box-b"
    notes = [t.note for t in await jobs.transitions(pool, receipt.job_id)]
    assert "taken over" in notes and sum(t == "passed" for t in notes) == 1


async def test_two_dispatchers_never_run_the_same_job(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    receipts = [await submit(pool, request(f"u{i}"), ROOMY) for i in range(40)]

    both_running = asyncio.Event()

    async def quick(_key: str, req: JobRequest) -> SubmissionResult:
        # The first jobs wait until each dispatcher holds one, so that the two really do claim side by side
        # (however a busy host orders their start-up) before the rest of the queue drains.
        if first.calls and second.calls:
            both_running.set()
        await asyncio.wait_for(both_running.wait(), 60)
        await asyncio.sleep(0.01)
        return result_for(req, 1.0)

    first, second = ScriptedRunner("r1", quick, slots=4), ScriptedRunner("r2", quick, slots=4)
    one = settings.dispatch.model_copy(update={"owner": "one"})
    two = settings.dispatch.model_copy(update={"owner": "two"})
    async with (
        running(Dispatcher(pool, RunnerPool([first]), one)),
        running(Dispatcher(pool, RunnerPool([second]), two)),
    ):
        for receipt in receipts:
            await wait_for_state(pool, receipt.job_id, FINAL)
    calls = first.calls + second.calls
    assert sorted(calls) == sorted(f"job-{r.job_id}" for r in receipts)
    assert first.calls and second.calls, "both dispatchers took work"
    attempts = await pool.fetch("SELECT attempts, state FROM jobs")
    assert {(r["attempts"], r["state"]) for r in attempts} == {(1, "done")}


async def test_a_failing_progress_hook_does_not_fail_the_job(pool: asyncpg.Pool, settings: Settings):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)

    def broken_hook(_submission_id: int, _event: JobEvent) -> None:
        raise RuntimeError("Discord is down")

    dispatcher = Dispatcher(
        pool, RunnerPool([ScriptedRunner("box", scores_ten)]), settings.dispatch, on_event=broken_hook
    )
    async with running(dispatcher):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"


def test_runner_pool_reserves_slots_on_the_least_busy_runner():
    a, b = ScriptedRunner("a", scores_ten, slots=2), ScriptedRunner("b", scores_ten, slots=1)
    runners = RunnerPool([a, b])
    taken = [runners.acquire("h100") for _ in range(4)]
    assert [r.name if r else None for r in taken] == ["a", "b", "a", None]
    assert runners.acquire("a100") is None
    runners.release(a)
    assert runners.acquire_named("a") is a and runners.acquire_named("a") is None


@pytest.mark.parametrize("status", ["passed", "failed"])
async def test_the_runners_verdict_decides_the_submission_status(pool: asyncpg.Pool, settings: Settings, status: str):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)

    async def verdict(_key: str, req: JobRequest) -> SubmissionResult:
        return result_for(req, 4.0 if status == "passed" else None, status)

    async with running(Dispatcher(pool, RunnerPool([ScriptedRunner("box", verdict)]), settings.dispatch)):
        assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
    stored = await submission(pool, receipt.submission_id)
    assert stored.status == status
    assert (stored.error_code is None) == (status == "passed")


async def test_an_idle_dispatcher_waits_between_looks_instead_of_spinning(pool: asyncpg.Pool, settings: Settings):
    runners = CountingPool([ScriptedRunner("box", scores_ten)])
    start = time.monotonic()
    async with running(Dispatcher(pool, runners, settings.dispatch)):
        await runners.wait_for_looks(3)  # it keeps looking (a busy host only makes the looks later)
        await asyncio.sleep(0.5)
        looks, elapsed = runners.looks, time.monotonic() - start
    # At most one look per poll interval, plus the first: a spinning loop would look thousands of times. A busy
    # host stretches `elapsed` and only lowers the count, so this bound holds however loaded the machine is.
    assert looks <= elapsed / settings.dispatch.poll_s + 2, (looks, elapsed)


async def test_a_dispatcher_cancelled_as_it_is_woken_stops(pool: asyncpg.Pool, settings: Settings):
    # Shutdown cancels the dispatcher whenever it comes; often just as a finished job or a NOTIFY wakes it. On
    # Python 3.11 `asyncio.wait_for` returns instead of raising when the cancel and the wake-up land together,
    # and a loop around it never ends: the bot then hangs at shutdown.
    runners = CountingPool([ScriptedRunner("box", scores_ten)])
    task = asyncio.create_task(Dispatcher(pool, runners, settings.dispatch).run())
    await runners.wait_for_looks(2)  # idle: waiting to be woken
    runners.freed.set()
    await cancel_and_wait(task, timeout_s=30)
    assert task.cancelled()


class AbandoningRunner(ScriptedRunner):
    """A runner whose job runs until it is told to stop (`abandon`), as a real runner's does."""

    def __init__(self, name: str) -> None:
        self.started = asyncio.Event()
        self.abandoned: list[str] = []
        super().__init__(name, self._forever)

    async def _forever(self, _key: str, _req: JobRequest) -> SubmissionResult:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def abandon(self, job_key: str) -> None:
        self.abandoned.append(job_key)


async def test_a_job_withdrawn_while_it_runs_is_stopped_on_its_runner_and_frees_the_slot(
    pool: asyncpg.Pool, settings: Settings
):
    # The submitter withdraws a run its runner is timing (DELETE /v1/submissions/{id}, Ctrl-C): the dispatcher
    # that follows it learns so when it next renews the lease, tells the runner to stop, and its slot is free.
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    box = AbandoningRunner("box")
    runners = RunnerPool([box])
    async with running(Dispatcher(pool, runners, settings.dispatch)):
        await asyncio.wait_for(box.started.wait(), timeout=60)
        assert await withdraw_submission(pool, receipt.submission_id, receipt.job_id, "withdrawn by its submitter")
        async with asyncio.timeout(60):
            while not box.abandoned:
                await asyncio.sleep(0.05)
        assert box.abandoned == [f"job-{receipt.job_id}"]
        # The slot is given back: the next job goes to the same one-slot runner.
        second = await submit(pool, request("bob"), ROOMY)
        async with asyncio.timeout(60):
            while box.calls[-1] != f"job-{second.job_id}":
                await asyncio.sleep(0.05)
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.state == "failed"
