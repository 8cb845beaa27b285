"""Live `case` events in a submission's Server-Sent Events, over real HTTP and the real store: the dispatcher's hook
(`case_publisher`, what `arena api` dispatches with) tells each case a runner finished on the store's notification
channel, and the stream of another app on the same store (another replica) says it, after the `running` before it
and before the `result`, each event checked against the OpenAPI document. Cases are live only: a stream resumed
after the end gets none, and events that report no case (accepted, compiling, done) become none."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api import public_events
from api.app import create_app
from api.settings import ApiSettings
from arena.commands.problems import find_problem
from contract import wire
from contract.wire import CaseTiming, JobEvent
from core import fleet
from core.problems import ProblemSpec, sync_problem
from core.results import record_result
from core.settings import Settings
from core.store import jobs
from core.store.submission_feed import CASE_CHANNEL
from core.submit.events import CasePublisher, FollowPace, case_progress_of, case_publisher, encode_case
from core.tokens import create_token
from tests.cli.harness import ROOT
from tests.store.fleet_processes import Fleet, wait_live
from tests.store.store_helpers import ROOMY, add_problems, result_for
from tests.store.test_public_submissions import bearer, read_events, submit
from tests.store.test_server_cli import arena, cli_env


def api_app(pool: asyncpg.Pool) -> TestServer:
    app = create_app(pool, ApiSettings(dispatch=False, arena=Settings(rate=ROOMY)))
    app[public_events.PACE] = FollowPace(poll_s=0.05, place_every_s=0.1)
    return TestServer(app)


@pytest.fixture
async def replicas(pool: asyncpg.Pool) -> AsyncIterator[tuple[TestClient, TestClient]]:
    """Two API apps on one store: one takes the submission, the other serves its events."""
    await add_problems(pool)
    await fleet.create_join_token(pool, "cpu", lifetime=timedelta(hours=1))
    async with TestClient(api_app(pool)) as first, TestClient(api_app(pool)) as second:
        yield first, second


def timing(index: int, name: str) -> CaseTiming:
    return CaseTiming(
        index=index,
        name=name,
        dims=[7],
        method="cpu",
        runtime_median_us=4.5,
        runtime_mean_us=6.0,
        gflops=0.0016,
        gflops_mean=0.0015,
        gbps=0.0186,
        flops=7,
        bytes=84,
        samples=1000,
        cv=0.3,
        converged=True,
    )


async def test_cases_told_by_the_dispatcher_reach_a_stream_on_another_replica(
    replicas: tuple[TestClient, TestClient], pool: asyncpg.Pool
) -> None:
    taker, server = replicas
    alice = await bearer(pool)
    accepted = await submit(taker, alice)
    stream = await server.get(accepted["events"], headers=alice)
    assert [e["type"] for _, e in await read_events(stream, 1)] == ["submitted"]

    job = (await jobs.jobs_of(pool, accepted["id"]))[0]
    lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
    assert lease is not None and await jobs.set_running(pool, lease)
    publish = case_publisher(pool)
    runner_events = [
        JobEvent(seq=1, type="accepted", message="cpu"),
        JobEvent(seq=2, type="compiling"),
        JobEvent(
            seq=3,
            type="test_case",
            index=0,
            count=2,
            test=wire.TestOutcome(index=0, name="n=7", dims=[7], passed=True, message="ok"),
        ),
        JobEvent(
            seq=4,
            type="test_case",
            index=1,
            count=2,
            test=wire.TestOutcome(index=1, name="n=1000", dims=[1000], passed=False, message="x" * 2000),
        ),
        JobEvent(seq=5, type="benchmark_case", index=0, count=1, timing=timing(0, "n=7")),
        JobEvent(seq=6, type="done"),
    ]
    for event in runner_events:
        await publish(accepted["id"], event)
    live = await read_events(stream, 5)
    assert [e["type"] for _, e in live] == ["dispatched", "running", "case", "case", "case"]
    cases = [e for _, e in live if e["type"] == "case"]
    assert all(i is None for i, e in live if e["type"] == "case"), "live only: no id to resume after"
    assert [(c["case"]["phase"], c["case"]["index"], c["case"]["name"], c["case"]["passed"]) for c in cases] == [
        ("test", 0, "n=7", True),
        ("test", 1, "n=1000", False),
        ("benchmark", 0, "n=7", None),
    ]
    assert len(cases[1]["case"]["message"]) == 500, "a long verdict is cut; the stored result has it whole"
    assert cases[2]["case"]["timing"]["runtime_median_us"] == 4.5
    assert all((c["state"], c["attempt"], c["runner"]) == ("running", 1, "runner-a") for c in cases)

    spec = await jobs.job_spec(pool, job.id)
    assert spec is not None and await record_result(pool, lease, result_for(spec, 2.5), "runner-a")
    rest = await read_events(stream)
    assert [e["type"] for _, e in rest] == ["result"]

    # Resumed from the start after the end: the kept events again, and no case.
    replay = await read_events(await server.get(accepted["events"], headers=alice))
    assert [e["type"] for _, e in replay] == ["submitted", "dispatched", "running", "result"]


def test_events_that_report_no_case_tell_nothing_and_a_case_fits_one_notification() -> None:
    assert case_progress_of(JobEvent(seq=1, type="accepted", message="cpu")) is None
    assert case_progress_of(JobEvent(seq=2, type="done")) is None
    profile = case_progress_of(
        JobEvent(seq=3, type="benchmark_case", phase="profile", index=0, count=1, message="profiling n=7")
    )
    assert profile is not None and (profile.phase, profile.message) == ("profile", "profiling n=7")
    huge = case_progress_of(JobEvent(seq=4, type="benchmark_case", index=0, count=1, timing=timing(0, "n" * 9000)))
    assert huge is not None and encode_case(1, huge) is None, "over PostgreSQL's payload limit: not told"


@contextlib.asynccontextmanager
async def _heard_cases(db_dsn: str) -> AsyncIterator[tuple[asyncpg.Connection, list[tuple[int, int]]]]:
    """A connection listening on the case channel, and the (submission, case index) of every case it hears."""
    heard: list[tuple[int, int]] = []
    listener = await asyncpg.connect(db_dsn)

    def hear(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        told = json.loads(payload)
        heard.append((told["s"], told["case"]["index"]))

    await listener.add_listener(CASE_CHANNEL, hear)
    try:
        yield listener, heard
    finally:
        await listener.close()


async def test_cases_go_out_in_batches_in_order_and_a_done_sends_what_waits(db_dsn: str, pool: asyncpg.Pool) -> None:
    """Cases told close together wait for their batch, then go out each as its own notification, in the order told;
    the cases waiting when a job's `done` comes are sent before the hook returns, so before its result is stored."""
    async with _heard_cases(db_dsn) as (listener, heard):
        publish = CasePublisher(pool, batch_s=0.5)
        for index in range(4):
            test = wire.TestOutcome(index=index, name=f"n={index}", dims=[index], passed=True, message="ok")
            await publish(7, JobEvent(seq=index + 1, type="test_case", index=index, count=5, test=test))
        await asyncio.sleep(0.1)
        assert heard == [], "held for the batch"
        for _ in range(100):
            if len(heard) == 4:
                break
            await asyncio.sleep(0.05)
        assert heard == [(7, 0), (7, 1), (7, 2), (7, 3)]

        test = wire.TestOutcome(index=4, name="n=4", dims=[4], passed=True, message="ok")
        await publish(8, JobEvent(seq=1, type="test_case", index=4, count=5, test=test))
        await publish(8, JobEvent(seq=2, type="done"))
        await listener.execute("SELECT 1")  # a round trip, so that a notification already sent has arrived
        assert heard[-1] == (8, 4), "the done sent the waiting case at once"
        await publish.close()


async def test_a_batch_on_its_way_when_the_publisher_closes_still_goes_out(db_dsn: str) -> None:
    """Closing (at a shutdown) waits for the batch already taken from the queue, rather than cancel it with its
    cases; here that batch waits for the pool's one connection, held meanwhile."""
    async with _heard_cases(db_dsn) as (listener, heard):
        async with asyncpg.create_pool(db_dsn, min_size=1, max_size=1) as one:
            publish = CasePublisher(one, batch_s=0.01)
            async with one.acquire():
                test = wire.TestOutcome(index=0, name="n=0", dims=[0], passed=True, message="ok")
                await publish(9, JobEvent(seq=1, type="test_case", index=0, count=1, test=test))
                await asyncio.sleep(0.2)  # the batch left the queue and waits for a connection
                closing = asyncio.create_task(publish.close())
                await asyncio.sleep(0.2)
            await closing
        await listener.execute("SELECT 1")  # a round trip, so that a notification already sent has arrived
        assert heard == [(9, 0)]


@pytest.mark.timeout(600)
async def test_a_real_run_streams_its_cases_live_through_arena_api(
    pool: asyncpg.Pool, db_dsn: str, tmp_path: Path
) -> None:
    """The whole chain: a CPU runner that joined its pool, `arena api` dispatching with the case hook, and
    `arena submit --server --stream`: every test and benchmark case of the run comes as a `case` line, each before
    the `result`, after `running`, and the same cases as the stored result."""
    fleet = Fleet(db_dsn, tmp_path)
    try:
        fleet.api().start()
        await fleet.wait_api()
        fleet.runner("case-runner", await fleet.token(pool, "cpu")).start()
        await wait_live(pool, fleet, {"case-runner"})
        await sync_problem(pool, ProblemSpec.builtin(find_problem("vector_add")))
        made = await create_token(pool, "discord:77", "lin", "agent")
        env = cli_env(tmp_path, db_dsn, ARENA_TOKEN=made.token)
        example = ROOT / "examples" / "vector_add.py"
        argv = ("submit", "vector_add", str(example), "--mode", "benchmark", "--server", fleet.api_url, "--stream")
        streamed = await asyncio.to_thread(arena, env, *argv)
        assert streamed.returncode == 0, streamed.stderr + fleet.logs()
        events = [json.loads(line) for line in streamed.stdout.splitlines()]
        types = [e["type"] for e in events]
        assert types.index("running") < types.index("case") and types[-1] == "result", types
        cases = [(e["case"]["phase"], e["case"]["index"], e["case"]["name"]) for e in events if e["type"] == "case"]
        result = events[-1]["result"]
        stored = [("test", t["index"], t["name"]) for t in result["tests"]]
        stored += [("benchmark", t["index"], t["name"]) for t in result["timings"]]
        assert cases == stored, "every case live, in the runner's order, as the result holds them"
    finally:
        fleet.close()
