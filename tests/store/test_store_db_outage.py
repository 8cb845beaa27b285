"""The dispatcher rides out a database outage: stopped, or killed with SIGKILL, then started again.

Each test has a PostgreSQL server of its own module (`PostgresUnderTest`), so stopping it disturbs no other
test. Runners are `ScriptedRunner`s: the point is the store, not the worker. The dispatchers here poll once an
hour, so whatever they do after the database is back comes from their own reconnecting (and LISTEN/NOTIFY),
never from a poll.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from contract.wire import JobRequest, SubmissionResult
from core.dispatch import Dispatcher, RunnerPool
from core.settings import DispatchSettings
from core.store import jobs
from core.store.outage import STORE_ERRORS
from core.store.pool import create_pool
from core.submit.intake import submit
from tests.store.faults import PostgresUnderTest
from tests.store.store_helpers import (
    ROOMY,
    ScriptedRunner,
    add_problems,
    request,
    result_for,
    submission,
    wait_for_state,
)

pytestmark = pytest.mark.timeout(300)

FINAL = set(jobs.FINAL_STATES)
# Leases shorter than the outage, so that they lapse while the database is away; polling too rare to help.
SETTINGS = DispatchSettings(owner="outage", lease_s=4.0, retry_backoff_s=0.0, poll_s=3600.0, store_retry_s=0.5)
OUTAGE_S = 6.0


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[PostgresUnderTest]:
    started = await PostgresUnderTest.start_new()
    try:
        yield started
    finally:
        await started.close()


@contextlib.asynccontextmanager
async def running(dispatcher: Dispatcher) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(dispatcher.run())
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def database_down(server: PostgresUnderTest, how: str) -> AsyncIterator[None]:
    """The server is down inside the block ("stop" or "kill"), and up again after it whatever happens."""
    await (server.kill() if how == "kill" else server.stop())
    try:
        yield
    finally:
        await server.start()


@pytest.mark.parametrize("how", ["stop", "kill"])
async def test_queued_jobs_run_and_finished_results_are_stored_once_the_database_is_back(
    server: PostgresUnderTest, how: str
):
    release = asyncio.Event()

    async def held(_key: str, req: JobRequest) -> SubmissionResult:
        await release.wait()
        return result_for(req, 7.0)

    runner = ScriptedRunner("box", held, slots=2)
    async with create_pool(await server.new_database(), min_size=1, max_size=6, command_timeout=10) as pool:
        await add_problems(pool)
        receipts = [await submit(pool, request(f"user{i}"), ROOMY) for i in range(4)]
        async with running(Dispatcher(pool, RunnerPool([runner]), SETTINGS)) as task:
            for receipt in receipts[:2]:
                await wait_for_state(pool, receipt.job_id, {"running"})
            async with database_down(server, how):
                release.set()  # both running jobs finish while the database is away: their results must wait
                await asyncio.sleep(OUTAGE_S)
                assert not task.done(), "the dispatcher kept going through the outage"
            for receipt in receipts:
                assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
            # Idle now, and polling once an hour: only a LISTEN connection made again after the outage hears this.
            late = await submit(pool, request("late"), ROOMY)
            assert await wait_for_state(pool, late.job_id, FINAL) == "done"
        for receipt in [*receipts, late]:
            job = await jobs.get_job(pool, receipt.job_id)
            assert job is not None and job.attempts == 1, "the outage cost no job an attempt"
            assert (await submission(pool, receipt.submission_id)).score == 7.0
            finished = [t for t in await jobs.transitions(pool, receipt.job_id) if t.to_state == "done"]
            assert len(finished) == 1
    assert sorted(runner.calls) == sorted(f"job-{r.job_id}" for r in [*receipts, late]), "each job ran once"


async def test_a_claim_that_fails_gives_its_runner_slot_back(server: PostgresUnderTest):
    async def scores(_key: str, req: JobRequest) -> SubmissionResult:
        return result_for(req, 3.0)

    runner = ScriptedRunner("box", scores, slots=1)
    runners = RunnerPool([runner])
    async with create_pool(await server.new_database(), min_size=1, max_size=4, command_timeout=10) as pool:
        await add_problems(pool)
        dispatcher = Dispatcher(pool, runners, SETTINGS)
        async with database_down(server, "stop"):
            for _ in range(3):
                with pytest.raises(STORE_ERRORS):
                    await dispatcher.dispatch_ready()
            assert runners.acquire("h100") is runner, "the failed claims left the only slot free"
            runners.release(runner, wake=False)
        receipt = await submit(pool, request("alice"), ROOMY)
        assert await dispatcher.dispatch_ready() == 1
        await dispatcher.wait_idle()
        assert (await submission(pool, receipt.submission_id)).score == 3.0


async def test_a_dispatcher_started_while_the_database_is_down_recovers_its_jobs_when_it_is_back(
    server: PostgresUnderTest,
):
    async def scores(_key: str, req: JobRequest) -> SubmissionResult:
        return result_for(req, 5.0)

    async with create_pool(await server.new_database(), min_size=1, max_size=4, command_timeout=10) as pool:
        await add_problems(pool)
        queued = await submit(pool, request("alice"), ROOMY)
        # A job this dispatcher held when it last stopped: recovery must take it back before anything else.
        held = await submit(pool, request("bob"), ROOMY)
        lease = await jobs.claim_job(pool, held.job_id, SETTINGS.owner, 600.0, "box")
        assert lease is not None
        runner = ScriptedRunner("box", scores, slots=2)
        async with database_down(server, "stop"):
            dispatcher = Dispatcher(pool, RunnerPool([runner]), SETTINGS)
            task = asyncio.create_task(dispatcher.run())
            await asyncio.sleep(2.0)
            assert not task.done(), "a dispatcher does not give up when the database is away at its start"
        try:
            for receipt in (queued, held):
                assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        notes = [t.note for t in await jobs.transitions(pool, held.job_id)]
        assert "taken over" in notes, "the held job came back through recovery"
