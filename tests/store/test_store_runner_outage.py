"""The dispatcher waits for a runner that does not answer, and tells a runner that is away from one that lost a job.

The runner is a `RunnerDouble` (a runner-shaped HTTP daemon with made-up verdicts) reached by the bot's real
`RemoteRunner` and `RunnerClient` over TCP; the queue is the real store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable

import aiohttp
import asyncpg
import pytest

from contract.errors import RunnerRefusedError
from contract.wire import ValidateRequest
from core.dispatch import Dispatcher, RunnerPool
from core.progress import ProgressHub
from core.settings import DispatchSettings
from core.store import jobs
from core.submit.intake import submit
from runner.clients.http import RunnerClient
from runner.clients.remote import RemoteRunner
from tests.store.faults import RunnerDouble
from tests.store.store_helpers import ROOMY, add_problems, request, submission, wait_for_state

pytestmark = pytest.mark.timeout(240)

FINAL = set(jobs.FINAL_STATES)
SECRET = secrets.token_hex(16)
SETTINGS = DispatchSettings(
    owner="runner-outage", lease_s=30.0, retry_backoff_s=0.0, poll_s=0.2, runner_probe_s=0.3, runner_outage_s=600.0
)


@contextlib.asynccontextmanager
async def remote(double: RunnerDouble) -> AsyncIterator[RemoteRunner]:
    """The bot's view of the double: a RemoteRunner over a RunnerClient with quick client-side retries."""
    async with aiohttp.ClientSession() as session:
        client = RunnerClient(double.url, SECRET.encode(), session=session, retry_delay_s=0.1)
        yield RemoteRunner("h100-box", "h100", 1, client)


@contextlib.asynccontextmanager
async def dispatching(
    pool: asyncpg.Pool, runner: RemoteRunner, settings: DispatchSettings = SETTINGS, hub: ProgressHub | None = None
) -> AsyncIterator[Dispatcher]:
    hook = hub.on_runner_state if hub is not None else None
    dispatcher = Dispatcher(pool, RunnerPool([runner]), settings, on_runner_state=hook)
    task = asyncio.create_task(dispatcher.run())
    try:
        yield dispatcher
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def wait_until(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.05)


async def test_jobs_submitted_while_the_runner_is_down_wait_for_it_and_cost_no_attempt(pool: asyncpg.Pool):
    await add_problems(pool)
    double = RunnerDouble(SECRET)  # not started: connections are refused
    hub = ProgressHub()
    async with remote(double) as runner, dispatching(pool, runner, hub=hub):
        receipts = [await submit(pool, request(f"user{i}"), ROOMY) for i in range(3)]
        await wait_until(lambda: hub.runner_outage_s("h100") is not None)
        # Long enough for the old behaviour (three quick dispatches, then `failed`) to show many times over.
        await asyncio.sleep(4.0)
        for receipt in receipts:
            job = await jobs.get_job(pool, receipt.job_id)
            assert job is not None and (job.state, job.attempts) == ("queued", 0), "waiting costs no attempt"
        await double.start()
        try:
            for receipt in receipts:
                assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
        finally:
            await double.stop()
        assert hub.runner_outage_s("h100") is None, "users hear that the runner is back"
    for receipt in receipts:
        job = await jobs.get_job(pool, receipt.job_id)
        assert job is not None and job.attempts == 1
        assert (await submission(pool, receipt.submission_id)).status == "passed"
    assert sorted(double.posts) == sorted(f"job-{r.job_id}" for r in receipts), "each job reached the runner once"


async def test_a_job_the_runner_holds_through_an_outage_is_followed_again_not_retried(pool: asyncpg.Pool):
    await add_problems(pool)
    hold = asyncio.Event()
    double = RunnerDouble(SECRET, hold=hold)
    await double.start()
    async with remote(double) as runner, dispatching(pool, runner):
        receipt = await submit(pool, request("alice"), ROOMY)
        await wait_for_state(pool, receipt.job_id, {"running"})
        await double.stop()  # the network goes away; the runner keeps the job
        await asyncio.sleep(2.0)
        await double.start()
        hold.set()
        try:
            assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
        finally:
            await double.stop()
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.attempts == 1
    assert double.posts == [f"job-{receipt.job_id}"], "followed again, never posted twice"
    moves = [(t.from_state, t.to_state) for t in await jobs.transitions(pool, receipt.job_id)]
    assert moves == [("queued", "dispatched"), ("dispatched", "running"), ("running", "done")]


async def test_a_runner_that_comes_back_without_the_job_has_lost_it_and_that_costs_an_attempt(pool: asyncpg.Pool):
    await add_problems(pool)
    hold = asyncio.Event()
    double = RunnerDouble(SECRET, hold=hold)
    await double.start()
    async with remote(double) as runner, dispatching(pool, runner):
        receipt = await submit(pool, request("alice"), ROOMY)
        await wait_for_state(pool, receipt.job_id, {"running"})
        await double.stop(lose_jobs=True)  # the daemon restarts and forgets its jobs
        await asyncio.sleep(1.0)
        await double.start()
        await wait_until(lambda: len(double.posts) == 2)
        hold.set()
        try:
            assert await wait_for_state(pool, receipt.job_id, FINAL) == "done"
        finally:
            await double.stop()
    job = await jobs.get_job(pool, receipt.job_id)
    assert job is not None and job.attempts == 2
    requeued = [t.note or "" for t in await jobs.transitions(pool, receipt.job_id) if t.to_state == "queued"]
    assert len(requeued) == 1 and "answered HTTP 404 not_found" in requeued[0]


async def test_jobs_fail_only_after_a_long_outage_and_the_message_names_no_address(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
):
    await add_problems(pool)
    hold = asyncio.Event()
    double = RunnerDouble(SECRET, hold=hold)
    await double.start()
    short = SETTINGS.model_copy(update={"runner_outage_s": 3.0})
    caplog.set_level(logging.INFO)
    async with remote(double) as runner, dispatching(pool, runner, short):
        running = await submit(pool, request("alice"), ROOMY)
        await wait_for_state(pool, running.job_id, {"running"})
        await double.stop()  # and never comes back
        queued = await submit(pool, request("bob"), ROOMY)
        for receipt in (running, queued):
            assert await wait_for_state(pool, receipt.job_id, FINAL) == "failed"
    for receipt in (running, queued):
        stored = await submission(pool, receipt.submission_id)
        assert stored.status == "error"
        message = stored.error_message or ""
        assert message.startswith("No `h100` runner answered for ") and "Resubmit it when the runner is back" in message
        assert_no_address(message, double)
    assert double.url in caplog.text, "the address is in the log, for the operator"


async def test_moderator_and_admin_texts_about_an_unreachable_runner_name_no_address(pool: asyncpg.Pool):
    double = RunnerDouble(SECRET)  # never started
    async with remote(double) as runner:
        with pytest.raises(RunnerRefusedError) as refused:
            await runner.validate(ValidateRequest(problem_source="x = 1\n"))
        assert "`h100-box` is not answering" in refused.value.message
        assert_no_address(refused.value.message, double)
        # /mod runners says "no answer" for a fleet runner, without its address: tests/bot/test_e2e_runner_outage.py.
        assert await runner.probe() is False
        await double.start()
        try:
            assert await runner.probe() is True
        finally:
            await double.stop()


def assert_no_address(text: str, double: RunnerDouble) -> None:
    for leak in (double.url, "127.0.0.1", str(double.port), "http://", "localhost"):
        assert leak not in text, f"{leak!r} in {json.dumps(text)}"
