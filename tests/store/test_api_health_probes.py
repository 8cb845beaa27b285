"""The API service's probes for machines over real HTTP (aiohttp's test server): `/healthz` and `/readyz` need no
signature and answer `ok` or `not ready`, nothing more; `/readyz` follows the store, `/healthz` only the process.
The documented `/v1/health` and `/v1/ready` answer as before. The `arena api` process through a store outage is in
test_fleet_health_probes.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api.app import create_app, openapi_document
from api.settings import ApiSettings
from tests.store.faults import free_port


async def _probe(client: TestClient, path: str) -> tuple[int, str]:
    response = await client.get(path)
    return response.status, await response.text()


@pytest.fixture
async def client(pool: asyncpg.Pool) -> AsyncIterator[TestClient]:
    async with TestClient(TestServer(create_app(pool, ApiSettings(dispatch=False)))) as test_client:
        yield test_client


@pytest.fixture
async def unreachable_client() -> AsyncIterator[TestClient]:
    """The API over a store nobody listens for: a DSN naming a closed port (the pool connects on first use)."""
    pool = await asyncpg.create_pool(f"postgresql://arena@127.0.0.1:{free_port()}/arena", min_size=0, max_size=2)
    try:
        async with TestClient(TestServer(create_app(pool, ApiSettings(dispatch=False)))) as test_client:
            yield test_client
    finally:
        await pool.close()


async def test_both_probes_answer_ok_and_nothing_more_while_the_store_answers(client: TestClient) -> None:
    for path in ("/healthz", "/readyz"):
        response = await client.get(path)
        assert response.status == 200 and await response.read() == b"ok", path
        assert response.content_type == "text/plain"
    # The documented routes are unchanged.
    assert (await client.get("/v1/health")).status == 200
    ready = await client.get("/v1/ready")
    assert ready.status == 200 and (await ready.json()) == {"status": "ok", "store": "ok"}


async def test_readiness_fails_while_the_store_is_unreachable_and_liveness_does_not(
    unreachable_client: TestClient,
) -> None:
    assert await _probe(unreachable_client, "/readyz") == (503, "not ready")
    assert await _probe(unreachable_client, "/healthz") == (200, "ok")
    # The documented readiness says so in its own words, as before.
    ready = await unreachable_client.get("/v1/ready")
    assert ready.status == 503 and (await ready.json())["error"]["code"] == "unavailable"


def test_the_openapi_document_marks_the_probes_unauthenticated() -> None:
    paths = openapi_document()["paths"]
    for path in ("/healthz", "/readyz"):
        assert paths[path]["get"]["security"] == [], path
    assert set(paths["/readyz"]["get"]["responses"]) == {"200", "503"}
    assert paths["/v1/runners/{runner_id}"]["put"]["security"] != [], "signed routes stay signed"
