"""The fleet's faults, each against real processes: `arena api` dispatching to runner daemons that joined their
pool (`tests/store/fleet_processes.py`), on a real PostgreSQL.

In every test each job ends exactly once: it reaches a final state once, is claimed once per attempt, its
result is stored once (a runner that finishes late stores nothing), and no user pays a rate-limit token for the
service's fault (`assert_ended_once`). Nothing here asserts a duration: every wait polls up to a generous
deadline, so a busy machine only makes the tests slower.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest

from api.public_events import RECONNECT_HINT
from contract.wire import JobRequest
from core.dispatch import job_key
from core.store import jobs, submissions
from core.store.pool import create_pool
from core.submit.intake import SubmitReceipt
from core.tokens import create_token
from runner.auth import sign_headers
from tests.store.faults import PostgresUnderTest
from tests.store.fleet_processes import (
    FAST_SOLUTION,
    HEARTBEAT_TIMEOUT_S,
    RATES,
    SLOW_SOLUTION,
    TEST_CASES,
    Fleet,
    assert_ended_once,
    available_tokens,
    fleet_on,
    free_port,
    live_names,
    runner_metrics,
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


async def _running_on(pool: asyncpg.Pool, job_id: int, fleet_: Fleet) -> str:
    """Once the job runs, the runner that holds it."""
    job = await wait_state(pool, job_id, {"running"}, fleet_)
    assert job.runner is not None
    return job.runner


def _other(runners: dict[str, object], name: str) -> str:
    return next(n for n in runners if n != name)


async def _left_its_pool(pool: asyncpg.Pool, job_id: int, runner: str) -> bool:
    return any(m.note == f"runner {runner} left its pool" for m in await jobs.transitions(pool, job_id))


@pytest.mark.parametrize("how", ["kill", "hang"])
async def test_a_runner_lost_mid_job_has_its_job_rerun_on_the_other_and_ended_once(
    pool: asyncpg.Pool, fleet: Fleet, how: str
):
    """Killed with SIGKILL, or hung (SIGSTOP, never resumed: no heartbeat, no answer): the core stops hearing
    from it, it leaves its pool, and its job goes back to the head of the queue and runs on the other runner."""
    await add_problems(pool)
    runners = await start_fleet(pool, fleet, ["ra", "rb"])
    receipt = await submit_test(pool, "alice")
    lost = await _running_on(pool, receipt.job_id, fleet)
    runners[lost].send(signal.SIGKILL if how == "kill" else signal.SIGSTOP)

    job = await wait_final(pool, receipt.job_id, fleet)
    assert (job.state, job.attempts, job.runner) == ("done", 2, _other(runners, lost))
    assert await _left_its_pool(pool, receipt.job_id, lost)
    assert (await runner_row(pool, lost)).state == "left"
    await assert_ended_once(pool, [receipt])


async def test_a_job_whose_runner_is_lost_on_its_last_attempt_fails_as_the_service_fault(
    pool: asyncpg.Pool, fleet: Fleet
):
    """With its attempts used up, a job whose runner is killed fails, once, as the service's fault: the user gets
    the rate-limit token back, and the job is not run again."""
    await add_problems(pool)
    runners = await start_fleet(pool, fleet, ["ra", "rb"], ARENA_DISPATCH_MAX_ATTEMPTS="1")
    receipt = await submit_test(pool, "alice")
    assert await available_tokens(pool, receipt.user_id) == pytest.approx(RATES.test_burst - 1, abs=0.5)
    runners[await _running_on(pool, receipt.job_id, fleet)].send(signal.SIGKILL)

    job = await wait_final(pool, receipt.job_id, fleet)
    assert (job.state, job.attempts) == ("failed", 1)
    await assert_ended_once(pool, [receipt], state="failed")
    assert await available_tokens(pool, receipt.user_id) == pytest.approx(RATES.test_burst, abs=0.5)


async def test_a_partitioned_runner_finishes_late_its_result_is_dropped_and_it_comes_back(
    pool: asyncpg.Pool, fleet: Fleet
):
    """The runner is cut off mid-job (SIGSTOP), its job is requeued and finished elsewhere; then it comes back
    (SIGCONT), finishes the job late, and that result is not stored. Told it left, it registers again and takes
    later jobs."""
    await add_problems(pool)
    runners = await start_fleet(pool, fleet, ["ra", "rb"])
    receipt = await submit_test(pool, "alice")
    cut = await _running_on(pool, receipt.job_id, fleet)
    runners[cut].send(signal.SIGSTOP)
    job = await wait_final(pool, receipt.job_id, fleet)
    assert (job.state, job.attempts, job.runner) == ("done", 2, _other(runners, cut))

    runners[cut].send(signal.SIGCONT)
    await wait_live(pool, fleet, {cut})
    # The late runner did finish the job: its own table says so, yet the store kept the other runner's result.
    late = await runner_metrics(pool, cut)
    assert late['arena_runner_jobs_total{outcome="passed"}'] == 1, late
    await assert_ended_once(pool, [receipt])
    assert "registering again" in runners[cut].log()

    # Back in its pool, it takes jobs again: with the other runner gone, the next job can only run there.
    runners[_other(runners, cut)].stop()
    later = await submit_test(pool, "bob", variant=1)
    assert (await wait_final(pool, later.job_id, fleet)).runner == cut
    await assert_ended_once(pool, [receipt, later])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
async def test_jobs_end_once_across_a_restart_of_the_api_service(pool: asyncpg.Pool, fleet: Fleet, sig: int):
    """The API service (and its dispatcher) stops mid-job and starts again on the same port: the runners keep
    (or regain) their place, and every job ends once."""
    await add_problems(pool)
    await start_fleet(pool, fleet, ["ra", "rb"])
    receipts = [await submit_test(pool, f"user{i}", variant=i) for i in range(3)]
    await wait_state(pool, receipts[0].job_id, {"running"}, fleet)
    api = fleet.procs[0]
    api.stop(sig)
    fleet.api(port=fleet.api_port).start()
    await fleet.wait_api()
    for receipt in receipts:
        await wait_final(pool, receipt.job_id, fleet)
    ended = await assert_ended_once(pool, receipts)
    # The job in flight across the restart is followed again on its runner (found there by its key), not run a
    # second time: one attempt.
    assert ended[receipts[0].job_id].attempts == 1, fleet.logs()
    assert "following job-" in fleet.procs[-1].log()
    await wait_live(pool, fleet, {"ra", "rb"})


_LOAD_REQUEUE = "too busy to check the timing"
# Jobs per batch of the two-dispatcher test: its two runners' slots and then some, all queued at once.
BATCH = 6


async def test_two_dispatchers_dispatch_each_job_once(pool: asyncpg.Pool, fleet: Fleet):
    """Two API services with dispatchers of their own over one store: each job is claimed once, by one of them."""
    await add_problems(pool)
    await start_fleet(pool, fleet, ["ra", "rb"])
    fleet.api("api-2", port=free_port()).start()
    await fleet.wait_api()
    # The dispatcher that followed a job hears first that its runner's slot is free and claims the next job at
    # once, while the other replica's view, read every ARENA_FLEET_REFRESH_S while the runners were busy, shows
    # them full: so within a batch one replica may take every job. Each batch starts once both views have seen the
    # runners idle (a pause of a few refreshes), so that its first jobs are raced for by both replicas: only those
    # are a race, so a batch is short. More batches go in until both have dispatched (at most twelve), and every job
    # of every batch must have ended once.
    receipts: list[SubmitReceipt] = []
    owners: set[str] = set()
    for batch in range(12):
        # Queued together, so that both replicas wake to a queue that holds more jobs than the runners have slots.
        new = list(
            await asyncio.gather(
                *(
                    submit_test(pool, f"user{i % 4}", FAST_SOLUTION, variant=i)
                    for i in range(BATCH * batch, BATCH * batch + BATCH)
                )
            )
        )
        for receipt in new:
            await wait_final(pool, receipt.job_id, fleet, timeout_s=400)
        receipts += new
        owners = {
            m.owner
            for r in receipts
            for m in await jobs.transitions(pool, r.job_id)
            if (m.from_state, m.to_state) == ("queued", "dispatched")
        }
        if owners == {"api-1", "api-2"}:
            break
        await asyncio.sleep(1.0)  # ARENA_FLEET_REFRESH_S is 0.3 s in these tests
    ended = await assert_ended_once(pool, receipts)
    # A second attempt is a fault here unless a requeue says it was the load of the test machine: a runner too busy
    # to check the timing, or one whose heartbeats came late and was swept out of its pool.
    for job in ended.values():
        if job.attempts > 1:
            notes = [m.note for m in await jobs.transitions(pool, job.id) if m.to_state == "queued" and m.from_state]
            assert len(notes) >= job.attempts - 1, notes
            assert all(n and (_LOAD_REQUEUE in n or "left its pool" in n) for n in notes), notes
    assert owners == {"api-1", "api-2"}, (owners, len(receipts))


# -- the database killed and started again ----------------------------------------------------------------------


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[PostgresUnderTest]:
    started = await PostgresUnderTest.start_new()
    try:
        yield started
    finally:
        await started.close()


async def _ready_status(url: str) -> int | None:
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url + "/v1/ready", timeout=aiohttp.ClientTimeout(total=10)) as response:
                return response.status
    except (aiohttp.ClientError, TimeoutError):
        return None


async def test_jobs_end_once_when_the_database_is_killed_and_started_again(server: PostgresUnderTest):
    """SIGKILL to the postmaster and its backends mid-job: the API answers 503 meanwhile, the runners keep sending
    heartbeats (and register again if the sweep moved them out), and every job ends once."""
    dsn = await server.new_database()
    async with create_pool(dsn, min_size=1, max_size=4, command_timeout=30) as pool, fleet_on(dsn) as fleet:
        await add_problems(pool)
        await start_fleet(pool, fleet, ["ra", "rb"])
        receipts = [await submit_test(pool, f"user{i}", variant=i) for i in range(3)]
        await wait_state(pool, receipts[0].job_id, {"running"}, fleet)
        await server.kill()
        try:

            async def unavailable() -> bool:
                return await _ready_status(fleet.api_url) == 503

            await wait_until(unavailable, 60, "the API did not answer 503 without its store", fleet.logs)
            # Past the heartbeat timeout: once the store is back, the runners look silent and may be swept out.
            await asyncio.sleep(2 * HEARTBEAT_TIMEOUT_S)
        finally:
            await server.start()
        for receipt in receipts:
            await wait_final(pool, receipt.job_id, fleet)
        await assert_ended_once(pool, receipts)
        await wait_live(pool, fleet, {"ra", "rb"})
        assert not [p.log_path.name for p in fleet.procs if not p.running]


async def test_arena_submit_fleet_waits_out_a_stopped_database_and_prints_the_result(server: PostgresUnderTest):
    """PostgreSQL stopped for a while under a running `arena submit --fleet`: the command says that it waits for
    the store instead of crashing, and prints the result once the store is back; the job ends once."""
    dsn = await server.new_database()
    async with create_pool(dsn, min_size=1, max_size=4, command_timeout=30) as pool, fleet_on(dsn) as fleet:
        await add_problems(pool)
        await start_fleet(pool, fleet, ["ra"])
        solution = fleet.tmp / "slow.py"
        solution.write_bytes(SLOW_SOLUTION)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "RUNNER_", "DATABASE_URL"))}
        cli = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena", "submit", "vector_add", str(solution), "--mode", "test", "--fleet", "cpu",
            env={**env, "DATABASE_URL": dsn},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:

            async def job_running() -> bool:
                return await pool.fetchval("SELECT count(*) FROM jobs WHERE state = 'running'") == 1

            await wait_until(job_running, 180, "the CLI's job never ran", fleet.logs)
            await server.stop()
            await asyncio.sleep(8.0)  # longer than the job has left: it ends while the store is away
        finally:
            await server.start()
        out, err = (b.decode() for b in await asyncio.wait_for(cli.communicate(), 300))
        assert cli.returncode == 0, err + fleet.logs()
        assert "the store is out of reach; waiting for it" in err and "the store is back after" in err, err
        assert "Traceback" not in err, "the outage is said in a line, not in the pool's reconnect tracebacks"
        assert "passed" in out, out
        [job] = await pool.fetch("SELECT id, submission_id, state FROM jobs")
        assert job["state"] == "done"
        moves = await jobs.transitions(pool, job["id"])
        assert [m.to_state for m in moves if m.to_state in jobs.FINAL_STATES] == ["done"], moves
        assert len(await submissions.case_results(pool, job["id"])) == TEST_CASES, "the result was stored once"


async def test_an_api_stopped_with_an_open_event_stream_ends_the_stream_with_a_reconnect_hint(
    pool: asyncpg.Pool, fleet: Fleet
):
    """SIGTERM to `arena api` while a client follows a queued submission's events: the stream ends at once with the
    hint to reconnect, and the API exits well inside aiohttp's 60 s shutdown timeout, which the stream used to hold
    (twice: 124 s, dispatching nothing meanwhile)."""
    await add_problems(pool)
    api = fleet.api()
    api.start()
    await fleet.wait_api()
    receipt = await submit_test(pool, "alice")  # no runner joins: it stays queued
    token = await create_token(pool, "discord:alice", "alice", "alice-laptop", scopes="read")
    url = f"{fleet.api_url}/v1/submissions/{receipt.submission_id}/events"
    async with aiohttp.ClientSession() as session:
        async with session.get(url, headers={"Authorization": f"Bearer {token.token}"}) as response:
            assert response.status == 200
            while not (await response.content.readline()).startswith(b"event: "):
                pass  # the first event (the queue place) has come: the stream is being followed
            api.send(signal.SIGTERM)
            rest = await asyncio.wait_for(response.content.read(), 45)
    assert RECONNECT_HINT in rest, rest
    assert api.exit_status(timeout_s=45) == 0, api.log()


# -- a captured request replayed --------------------------------------------------------------------------------


async def test_a_request_captured_on_its_way_to_one_runner_is_refused_by_another_and_by_itself(
    pool: asyncpg.Pool, fleet: Fleet
):
    """Each runner checks with its own secret, and remembers what it accepted: a dispatcher's signed `POST
    /v1/jobs` to runner A, replayed to runner B, is refused (B runs nothing), and replayed to A, refused too."""
    await add_problems(pool)
    await start_fleet(pool, fleet, ["ra", "rb"], ARENA_API_DISPATCH="false")
    receipt = await submit_test(pool, "alice", FAST_SOLUTION)
    spec = await jobs.job_spec(pool, receipt.job_id)
    assert spec is not None
    body = (
        JobRequest(
            submission_id=job_key(receipt.job_id),
            problem_slug=spec.slug,
            problem_version=spec.problem_version,
            language=spec.language,  # type: ignore[arg-type]
            file_name=spec.file_name,
            source=spec.source,
            dtype=spec.dtype,  # type: ignore[arg-type]
            mode=spec.mode,  # type: ignore[arg-type]
        )
        .model_dump_json()
        .encode()
    )
    headers = {
        "Content-Type": "application/json",
        **sign_headers(await runner_secret(pool, "ra"), "POST", "/v1/jobs", body),
    }
    urls = {name: (await runner_row(pool, name)).url for name in ("ra", "rb")}

    async def post(name: str) -> int:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{urls[name]}/v1/jobs", data=body, headers=headers) as response:
                return response.status

    assert await post("ra") == 202
    assert await post("rb") == 401
    assert await post("ra") == 401
    a, b = await runner_metrics(pool, "ra"), await runner_metrics(pool, "rb")
    assert (a["arena_runner_jobs_retained"], b["arena_runner_jobs_retained"]) == (1, 0)
    assert b['arena_runner_auth_failures_total{reason="bad_signature"}'] == 1, b
    assert a['arena_runner_auth_failures_total{reason="replayed"}'] == 1, a
    assert await live_names(pool) == {"ra", "rb"}
    assert await available_tokens(pool, receipt.user_id) == pytest.approx(49, abs=0.5)
