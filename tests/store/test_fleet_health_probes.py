"""The probes of real processes, as Kubernetes reads them: `arena api` and a runner that joined its pool
(`arena runner serve --join`), on a PostgreSQL server of this module's own so that a test may stop it.

- The runner is ready once it has registered in its pool, and not ready while it drains (SIGTERM, a job in hand),
  though still alive; its signed routes refuse unsigned calls throughout.
- The API is ready while its store answers: stopped, `/readyz` says `not ready` and `/healthz` still `ok`; started
  again, ready again.
Every answer is exactly `ok` or `not ready`.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator

import aiohttp
import asyncpg
import pytest

from core.store.pool import create_pool
from tests.store.faults import PostgresUnderTest
from tests.store.fleet_processes import Fleet, fleet_on, runner_row, submit_test, wait_live, wait_state, wait_until
from tests.store.store_helpers import add_problems

pytestmark = pytest.mark.timeout(600)

SLOWER_SOLUTION = b"""import time
import torch


def solution(input_a, input_b, output_c, n):
    time.sleep(4)
    torch.add(input_a, input_b, out=output_c)
"""


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[PostgresUnderTest]:
    started = await PostgresUnderTest.start_new()
    try:
        yield started
    finally:
        await started.close()


@pytest.fixture
async def store(server: PostgresUnderTest) -> AsyncIterator[tuple[str, asyncpg.Pool]]:
    dsn = await server.new_database()
    async with create_pool(dsn, min_size=1, max_size=4, command_timeout=30) as pool:
        yield dsn, pool


@pytest.fixture
async def fleet(store: tuple[str, asyncpg.Pool]) -> AsyncIterator[Fleet]:
    async with fleet_on(store[0]) as made:
        yield made


async def probe(url: str) -> tuple[int, str]:
    """The status and body of a GET, with no credential; (0, "") when nothing answers."""
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
                return response.status, await response.text()
    except (aiohttp.ClientError, TimeoutError):
        return 0, ""


async def wait_probe(url: str, expected: tuple[int, str], fleet: Fleet, timeout_s: float = 120.0) -> None:
    async def check() -> bool:
        return await probe(url) == expected

    await wait_until(check, timeout_s, f"{url} did not answer {expected}", fleet.logs)


async def test_a_runner_in_a_pool_is_ready_once_registered_and_not_while_it_drains(
    store: tuple[str, asyncpg.Pool], fleet: Fleet
) -> None:
    _, pool = store
    await add_problems(pool)
    fleet.api().start()
    await fleet.wait_api()
    # Calls slow enough that the drain outlasts many polls of a loaded machine.
    runner = fleet.runner("ra", await fleet.token(pool, "cpu"), RUNNER_TEST_TIMEOUT_S="60")
    runner.start()
    await wait_live(pool, fleet, {"ra"})
    url = (await runner_row(pool, "ra")).url
    assert url is not None
    assert await probe(url + "/readyz") == (200, "ok")  # registered: start_fleet waited for it to be active
    assert await probe(url + "/healthz") == (200, "ok")
    assert (await probe(url + "/v1/health"))[0] == 401
    receipt = await submit_test(pool, "alice", SLOWER_SOLUTION)
    await wait_state(pool, receipt.job_id, {"running"}, fleet)
    runner.send(signal.SIGTERM)
    # Draining: its job finishes there and no new one comes; alive, not ready.
    await wait_probe(url + "/readyz", (503, "not ready"), fleet)
    assert await probe(url + "/healthz") == (200, "ok")
    assert (await probe(url + "/v1/health"))[0] == 401
    assert await asyncio.to_thread(runner.exit_status, 120) == 0  # it leaves by itself once drained


async def test_the_api_is_not_ready_while_its_store_is_down_and_alive_throughout(
    server: PostgresUnderTest, fleet: Fleet
) -> None:
    fleet.api(dispatch=False).start()
    await fleet.wait_api()
    await wait_probe(fleet.api_url + "/readyz", (200, "ok"), fleet)
    await server.stop()
    try:
        await wait_probe(fleet.api_url + "/readyz", (503, "not ready"), fleet)
        assert await probe(fleet.api_url + "/healthz") == (200, "ok")
    finally:
        await server.start()
    await wait_probe(fleet.api_url + "/readyz", (200, "ok"), fleet)
