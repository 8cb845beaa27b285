"""The web board's probes for machines: `/healthz` answers `ok` while the process answers, `/readyz` `ok` while the
store answers and `not ready` (503) otherwise, and neither says anything more. Over real HTTP: the application on a
real server, and `arena web` as a process whose store (a PostgreSQL of this module's own) is stopped and started."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.cli.harness import arena_env, interrupt, start_arena
from tests.store.faults import PostgresUnderTest, free_port
from tests.web.conftest import web_settings
from web.app import create_app

pytestmark = pytest.mark.timeout(600)
# How long a test waits for a process to answer as expected: a bound that tells a stuck one from a busy host.
PATIENCE_S = 120.0


async def _probe(url: str) -> tuple[int, str]:
    """Status and body of a GET; (0, "") when nothing answers."""
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
                return response.status, await response.text()
    except (aiohttp.ClientError, TimeoutError):
        return 0, ""


async def _until(url: str, expected: tuple[int, str], describe: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while (answer := await _probe(url)) != expected:
        assert loop.time() < deadline, f"{url} answered {answer}, not {expected}; {describe}"
        await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[PostgresUnderTest]:
    started = await PostgresUnderTest.start_new()
    try:
        yield started
    finally:
        await started.close()


async def test_both_probes_answer_ok_and_nothing_more_while_the_store_answers(client: TestClient) -> None:
    for path in ("/healthz", "/readyz"):
        response = await client.get(path)
        assert response.status == 200 and await response.read() == b"ok", path
        assert response.content_type == "text/plain"


async def test_readiness_fails_while_the_store_is_unreachable_and_liveness_does_not(db_dsn: str) -> None:
    pool = await asyncpg.create_pool(f"postgresql://arena@127.0.0.1:{free_port()}/arena", min_size=0, max_size=2)
    try:
        app = create_app(web_settings(db_dsn), pool)
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            ready = await client.get("/readyz")
            assert ready.status == 503 and await ready.read() == b"not ready"
            alive = await client.get("/healthz")
            assert alive.status == 200 and await alive.read() == b"ok"
    finally:
        await pool.close()


async def test_arena_web_is_not_ready_while_its_store_is_down_and_alive_throughout(
    server: PostgresUnderTest, tmp_path: Path
) -> None:
    port = free_port()
    env = arena_env(tmp_path / "pg", DATABASE_URL=await server.new_database(), ARENA_WEB_PORT=str(port))
    process = start_arena("web", env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        await _until(base + "/readyz", (200, "ok"), "arena web did not become ready")
        await server.stop()
        try:
            await _until(base + "/readyz", (503, "not ready"), "a stopped store left it ready")
            assert await _probe(base + "/healthz") == (200, "ok")
        finally:
            await server.start()
        await _until(base + "/readyz", (200, "ok"), "it did not become ready again once the store was back")
        assert process.poll() is None
    finally:
        interrupt(process)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
