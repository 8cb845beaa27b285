"""The API service's runner endpoints over real HTTP (aiohttp's test server, the real store): unauthenticated
liveness, join, signed registration and heartbeats, refusals with a real status and a clear message, replays,
the OpenAPI document and the fleet's metrics."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api.app import create_app, openapi_document
from api.settings import ApiSettings
from contract.wire import GpuHardware, RunnerHardware, RunnerHeartbeat, RunnerJoined, RunnerRegistration
from core import fleet
from runner.auth import runner_sign_headers

H100 = GpuHardware(index=0, name="NVIDIA H100 80GB HBM3", uuid="GPU-1", gpu_type="h100")
REGISTRATION = RunnerRegistration(
    url="http://10.1.2.3:8700",
    hardware=RunnerHardware(device="gpu", gpu_type="h100", gpus=[H100], slots=1, sandbox="full"),
)


@pytest.fixture
async def client(pool: asyncpg.Pool) -> AsyncIterator[TestClient]:
    async with TestClient(TestServer(create_app(pool, ApiSettings(dispatch=False)))) as test_client:
        yield test_client


async def join(client: TestClient, pool: asyncpg.Pool, name: str = "box-1", gpu_type: str = "h100") -> RunnerJoined:
    made = await fleet.create_join_token(pool, gpu_type, lifetime=timedelta(hours=1))
    response = await client.post("/v1/runners/join", json={"token": made.token, "name": name})
    assert response.status == 201, await response.text()
    return RunnerJoined.model_validate_json(await response.read())


async def signed(
    client: TestClient, joined: RunnerJoined, method: str, path: str, body: bytes = b""
) -> tuple[int, dict]:
    headers = runner_sign_headers(joined.runner_id, joined.secret.encode(), method, path, body)
    headers["Content-Type"] = "application/json"
    response = await client.request(method, path, data=body, headers=headers)
    return response.status, await response.json()


async def test_liveness_needs_no_signature_and_readiness_asks_the_store(client: TestClient) -> None:
    assert (await client.get("/v1/health")).status == 200
    ready = await client.get("/v1/ready")
    assert ready.status == 200 and (await ready.json())["store"] == "ok"


async def test_a_runner_joins_registers_and_sends_heartbeats(client: TestClient, pool: asyncpg.Pool) -> None:
    joined = await join(client, pool)
    path = f"/v1/runners/{joined.runner_id}"
    status, body = await signed(client, joined, "PUT", path, REGISTRATION.model_dump_json().encode())
    assert status == 200 and body["state"] == "active" and body["gpu_type"] == "h100"
    status, body = await signed(
        client, joined, "POST", path + "/heartbeat", RunnerHeartbeat().model_dump_json().encode()
    )
    assert status == 200 and body["state"] == "active"
    metrics = await (await client.get("/metrics")).text()
    assert 'arena_fleet_runners{pool="h100",state="active"} 1' in metrics
    assert "10.1.2.3" not in metrics and joined.secret not in metrics
    status, body = await signed(client, joined, "DELETE", path)
    assert status == 200 and body["state"] == "left"


async def test_unsigned_replayed_and_foreign_requests_are_refused(client: TestClient, pool: asyncpg.Pool) -> None:
    a = await join(client, pool, "box-a")
    b = await join(client, pool, "box-b")
    path = f"/v1/runners/{a.runner_id}"
    body = REGISTRATION.model_dump_json().encode()
    unsigned = await client.put(path, data=body)
    assert unsigned.status == 401 and "Sign the request" in (await unsigned.json())["error"]["message"]
    # Signed with box-b's secret, claiming box-a.
    headers = runner_sign_headers(a.runner_id, b.secret.encode(), "PUT", path, body)
    foreign = await client.put(path, data=body, headers=headers)
    assert foreign.status == 401 and "signature does not match" in (await foreign.json())["error"]["message"]
    headers = runner_sign_headers(a.runner_id, a.secret.encode(), "PUT", path, body)
    assert (await client.put(path, data=body, headers=headers)).status == 200
    replayed = await client.put(path, data=body, headers=headers)
    assert replayed.status == 401 and "replay" in (await replayed.json())["error"]["message"]


async def test_a_gpu_not_of_the_pool_is_refused_with_403(client: TestClient, pool: asyncpg.Pool) -> None:
    joined = await join(client, pool, "h200-box")
    h200 = GpuHardware(index=0, name="NVIDIA H200", uuid="GPU-2", gpu_type="h200")
    wrong = RunnerRegistration(
        url="http://10.1.2.4:8700",
        hardware=RunnerHardware(device="gpu", gpu_type="h200", gpus=[h200], slots=1, sandbox="full"),
    )
    status, body = await signed(
        client, joined, "PUT", f"/v1/runners/{joined.runner_id}", wrong.model_dump_json().encode()
    )
    assert status == 403 and body["error"]["code"] == "forbidden"
    assert "NVIDIA H200 (`h200`), and the pool is `h100`" in body["error"]["message"]


async def test_bad_input_gets_400_and_a_bad_token_401(client: TestClient) -> None:
    malformed = await client.post("/v1/runners/join", data=b"{not json")
    assert malformed.status == 400 and (await malformed.json())["error"]["code"] == "bad_request"
    unknown = await client.post("/v1/runners/join", json={"token": "arena-join-" + "x" * 30, "name": "box"})
    assert unknown.status == 401 and "unknown, expired or revoked" in (await unknown.json())["error"]["message"]
    assert (await client.put("/v1/runners/%F0%9F%98%80", data=b"{}")).status == 404


async def test_join_guesses_are_limited_per_address_like_token_guesses(pool: asyncpg.Pool) -> None:
    """Unknown bootstrap tokens count as failed authentications of the caller's address: past the burst, every join
    from it is answered 429 with Retry-After, a real token's too, until the bucket refills."""
    settings = ApiSettings(dispatch=False, auth_failures_burst=2, auth_failures_per_minute=1.0)
    async with TestClient(TestServer(create_app(pool, settings))) as client:
        guess = {"token": "arena-join-" + "x" * 30, "name": "box"}
        assert [(await client.post("/v1/runners/join", json=guess)).status for _ in range(2)] == [401, 401]
        made = await fleet.create_join_token(pool, "h100", lifetime=timedelta(hours=1))
        limited = await client.post("/v1/runners/join", json={"token": made.token, "name": "box"})
        assert limited.status == 429 and int(limited.headers["Retry-After"]) > 0
        assert (await limited.json())["error"]["code"] == "rate_limited"
        assert await pool.fetchval("SELECT count(*) FROM runners") == 0


def test_the_openapi_document_names_every_route_and_its_security() -> None:
    document = openapi_document()
    assert document["openapi"] == "3.1.0"
    assert set(document["paths"]) >= {
        "/v1/health",
        "/v1/runners/join",
        "/v1/runners/{runner_id}",
        "/v1/runners/{runner_id}/heartbeat",
        "/v1/runners/{runner_id}/canaries",
    }
    assert document["paths"]["/v1/runners/{runner_id}"]["put"]["security"] == [
        {"runner": [], "signature": [], "timestamp": []}
    ]
    assert "RunnerHardware" in document["components"]["schemas"]


# Values a client may send by mistake or on purpose: unicode digits (`isdigit()` true, `int()` fails or reads them),
# a NUL, huge numbers, markup, path tricks, and malformed or oversized bodies.
HOSTILE_IDS = ["²", "⑦", "%00", "9" * 40, "-1", "0x10", "..%2F..%2Fetc", "%3Cscript%3E", "1e3", "%20"]
HOSTILE_BODIES = [
    b"",
    b"\x00",
    b"[]",
    b"null",
    b'{"token": null}',
    b'{"token": "' + b"x" * 300 + b'", "name": "a"}',
    b'{"token": "arena-join-xxxxxxxxxxxxxxxx", "name": "\\u0000"}',
    b'{"url": "javascript:alert(1)", "hardware": {}}',
    b"\xff\xfe",
]


async def test_no_hostile_path_or_body_gets_a_server_error(client: TestClient, pool: asyncpg.Pool) -> None:
    joined = await join(client, pool)
    answers: list[tuple[str, str, int]] = []
    for raw in HOSTILE_IDS:
        for method, suffix in (("PUT", ""), ("POST", "/heartbeat"), ("POST", "/canaries"), ("DELETE", "")):
            response = await client.request(method, f"/v1/runners/{raw}{suffix}", data=b"{}")
            answers.append((method, raw + suffix, response.status))
    for body in HOSTILE_BODIES:
        response = await client.post("/v1/runners/join", data=body)
        answers.append(("POST", f"join {body[:20]!r}", response.status))
        for method, suffix in (("PUT", ""), ("POST", "/heartbeat"), ("POST", "/canaries")):
            path = f"/v1/runners/{joined.runner_id}{suffix}"
            status, _ = await signed(client, joined, method, path, body)
            answers.append((method, f"{suffix or 'register'} {body[:20]!r}", status))
    server_errors = [a for a in answers if a[2] >= 500]
    assert not server_errors, server_errors
    assert {status for *_, status in answers} <= {400, 401, 403, 404, 405, 409, 413}, answers


async def test_a_request_line_too_long_to_parse_is_logged_as_one_warning_line(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """aiohttp's parser refuses a 20 KB request line with its bare 400; the service logs it as the client's fault,
    one WARNING line without a traceback, never as an ERROR."""
    assert client.server.host is not None and client.server.port is not None
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    with caplog.at_level(logging.INFO, logger="aiohttp.server"):
        writer.write(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        answer = await reader.read(200)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 400") or answer.startswith(b"HTTP/1.0 400"), answer
    records = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert records and all(r.levelno == logging.WARNING and r.exc_info is None for r in records), records
    assert "refused a malformed request from" in records[0].getMessage() and "8190 bytes" in records[0].getMessage()
