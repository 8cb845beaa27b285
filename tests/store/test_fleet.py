"""The fleet's basic behaviours against real processes: runners that joined their pool run jobs and their results
are stored; SIGTERM drains a runner (its job finishes there, it takes no new one, then it leaves); a revoked
runner is refused by the API and dropped by the dispatcher. The pool check and the API's replay fence, which need
no process, are tested in test_fleet_registry.py and test_api_service.py."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest

from contract.wire import RunnerHeartbeat
from core import fleet as core_fleet
from core.store import jobs
from runner.auth import runner_sign_headers
from tests.store.fleet_processes import (
    FAST_SOLUTION,
    Fleet,
    assert_ended_once,
    fleet_on,
    runner_row,
    runner_secret,
    start_fleet,
    submit_test,
    wait_final,
    wait_live,
    wait_state,
    wait_until,
)
from tests.store.store_helpers import add_problems

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
async def fleet(db_dsn: str) -> AsyncIterator[Fleet]:
    async with fleet_on(db_dsn) as made:
        yield made


async def test_jobs_run_on_the_runners_that_joined_and_their_results_are_stored(pool: asyncpg.Pool, fleet: Fleet):
    await add_problems(pool)
    await start_fleet(pool, fleet, ["ra", "rb"])
    for name in ("ra", "rb"):
        row = await runner_row(pool, name)
        assert (row.state, row.gpu_type, row.slots) == ("active", "cpu", 1)
        assert row.url is not None and row.hardware is not None and row.hardware["device"] == "cpu"
    receipts = [await submit_test(pool, f"user{i}", FAST_SOLUTION, variant=i) for i in range(3)]
    for receipt in receipts:
        await wait_final(pool, receipt.job_id, fleet)
    ended = await assert_ended_once(pool, receipts)
    assert {job.attempts for job in ended.values()} == {1}
    assert {job.runner for job in ended.values()} <= {"ra", "rb"}


async def test_sigterm_drains_a_runner_its_job_finishes_there_and_it_takes_no_new_one(pool: asyncpg.Pool, fleet: Fleet):
    await add_problems(pool)
    runners = await start_fleet(pool, fleet, ["ra"])
    first = await submit_test(pool, "alice")
    await wait_state(pool, first.job_id, {"running"}, fleet)
    runners["ra"].send(signal.SIGTERM)

    async def draining() -> bool:
        return (await runner_row(pool, "ra")).state == "draining"

    await wait_until(draining, 60, "the runner did not say it drains", fleet.logs)
    second = await submit_test(pool, "bob", FAST_SOLUTION, variant=1)
    job = await wait_final(pool, first.job_id, fleet)
    assert (job.state, job.runner, job.attempts) == ("done", "ra", 1)
    assert await asyncio.to_thread(runners["ra"].exit_status, 120) == 0  # it leaves by itself once drained
    row = await runner_row(pool, "ra")
    assert (row.state, row.note) == ("left", "deregistered")

    # The draining runner never ran the second job: it waits in the queue, and the next runner takes it.
    waiting = await jobs.get_job(pool, second.job_id)
    assert waiting is not None and (waiting.state, waiting.attempts) == ("queued", 0)
    token = await fleet.token(pool, "cpu")
    fleet.runner("rb", token).start()
    await wait_live(pool, fleet, {"rb"})
    assert (await wait_final(pool, second.job_id, fleet)).runner == "rb"
    await assert_ended_once(pool, [first, second])


async def test_a_revoked_runner_is_refused_by_the_api_and_its_job_runs_elsewhere(pool: asyncpg.Pool, fleet: Fleet):
    await add_problems(pool)
    runners = await start_fleet(pool, fleet, ["ra", "rb"])
    receipt = await submit_test(pool, "alice")
    revoked = (await wait_state(pool, receipt.job_id, {"running"}, fleet)).runner
    assert revoked is not None
    secret = await runner_secret(pool, revoked)
    row = await core_fleet.revoke(pool, revoked, "a test revokes it")
    assert row.state == "revoked"

    # Its credential is gone: a heartbeat signed with it is refused, and the runner stops taking jobs.
    path = f"/v1/runners/{row.id}/heartbeat"
    body = RunnerHeartbeat().model_dump_json().encode()
    headers = {"Content-Type": "application/json", **runner_sign_headers(row.id, secret, "POST", path, body)}
    async with aiohttp.ClientSession() as session:
        async with session.post(fleet.api_url + path, data=body, headers=headers) as response:
            assert response.status == 401

    async def refused() -> bool:
        return "no longer accepts this runner" in runners[revoked].log()

    await wait_until(refused, 60, "the revoked runner was not refused", fleet.logs)
    # The dispatcher dropped it: the job went back to the queue and ran on the other runner.
    job = await wait_final(pool, receipt.job_id, fleet)
    other = next(n for n in runners if n != revoked)
    assert (job.state, job.runner, job.attempts) == ("done", other, 2)
    await assert_ended_once(pool, [receipt])
