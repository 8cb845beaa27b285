"""The runner's probes for machines: `/healthz` and `/readyz` answer without a signature and say `ok` or `not ready`,
nothing more; every other path, `/v1/health` included, still refuses an unsigned call, whatever the path's disguise.

The daemon runs as a real process (`arena runner serve`, the session's `daemon`), or as the real application on a
real port where a test changes its state (draining, its standing in a pool).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

from contract.wire import RunnerJoined, RunnerStanding
from runner.auth import SIGNATURE_HEADER, sign_headers
from runner.daemon.membership import Membership
from runner.daemon.server import JOBS, create_app, openapi_document
from runner.settings import RunnerSettings
from tests.runner.conftest import Daemon, free_port, settings_for

# Paths that a lax public-path check could mistake for a probe while the router serves something else.
DISGUISES = (
    "/healthz/../v1/health",
    "/readyz/../v1/health",
    "/healthz/%2e%2e/v1/health",
    "/healthz/..%2fv1/health",
    "/healthz%2f..%2fv1/health",
    "/healthz;/../v1/health",
    "/./v1/health",
    "//healthz/../v1/health",
    "/v1/health?/healthz",
    "/v1/health#/healthz",
    "/v1/health/../healthz/../v1/health",
    "/HEALTHZ",
    "/healthz/",
    "/v1/%68ealth",
    "http://127.0.0.1/v1/health",
)


async def _raw_get(url: str, target: str, method: str = "GET") -> tuple[int, bytes]:
    """Send `target` byte for byte (no client normalises it) and read the status and body."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        request = f"{method} {target} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n"
        writer.write(request.encode())
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 60)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        body = _unchunk(body)
    return status, body


def _unchunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out, body = out + rest[:size], rest[size + 2 :]
    return out


async def _get(url: str, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url + path) as response:
        return response.status, await response.text()


@asynccontextmanager
async def _serving(
    settings: RunnerSettings, membership: Membership | None = None
) -> AsyncIterator[tuple[str, web.Application]]:
    """The real application on a free port of 127.0.0.1; yields its base URL and the application."""
    app = create_app(settings, membership=membership)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        await runner.cleanup()


async def test_the_probes_answer_ok_without_a_signature_and_say_nothing_more(daemon: Daemon) -> None:
    for path in ("/healthz", "/readyz"):
        status, body = await _raw_get(daemon.url, path)
        assert (status, body) == (200, b"ok"), (path, status, body)
    # The signed health of the same daemon does describe the hardware: the probes leave all of it out.
    signed = sign_headers(daemon.secret.encode(), "GET", "/v1/health")
    async with aiohttp.ClientSession() as session, session.get(daemon.url + "/v1/health", headers=signed) as response:
        assert response.status == 200 and "slots" in await response.json()


async def test_every_other_path_still_refuses_an_unsigned_call_whatever_its_disguise(daemon: Daemon) -> None:
    for path in ("/v1/health", "/metrics", "/v1/jobs?submission_id=x", "/v1/jobs/abc"):
        status, body = await _raw_get(daemon.url, path)
        assert status == 401, (path, status, body)
    assert (await _raw_get(daemon.url, "/v1/health", "HEAD"))[0] == 401
    for target in DISGUISES:
        status, body = await _raw_get(daemon.url, target)
        # Either the router served a probe (and said only `ok`), or the call was refused: never the health data.
        assert status != 200 or body == b"ok", (target, status, body)
        assert b"slots" not in body and b"gpu" not in body.lower() and b"torch" not in body, (target, body)
    # A probe takes no other method, and its refusal says nothing about the runner either.
    status, body = await _raw_get(daemon.url, "/healthz", "POST")
    assert status == 405 and b"slots" not in body


async def test_a_draining_runner_is_alive_but_not_ready(state_dir: Path, secret: str) -> None:
    async with _serving(settings_for(state_dir, secret)) as (url, app):
        assert await _get(url, "/readyz") == (200, "ok")
        app[JOBS].draining = True  # what SIGTERM does to a runner in a pool, and its pool's refusal
        assert await _get(url, "/readyz") == (503, "not ready")
        assert await _get(url, "/healthz") == (200, "ok")
        app[JOBS].draining = False
        assert await _get(url, "/readyz") == (200, "ok")


async def test_a_runner_in_a_pool_is_ready_only_while_registered_there_and_not_leaving(
    state_dir: Path, secret: str
) -> None:
    async with aiohttp.ClientSession() as session:
        membership = Membership("http://127.0.0.1:9", "box-1", "http://127.0.0.1:8700", session)
        membership.joined = RunnerJoined(
            runner_id=7, secret=secret, gpu_type="cpu", heartbeat_s=5.0, heartbeat_timeout_s=20.0
        )
        async with _serving(settings_for(state_dir, secret), membership) as (url, _):
            # Joined, slots up, not registered yet: dispatchers cannot know its address, so it is not ready.
            assert await _get(url, "/readyz") == (503, "not ready")
            membership.standing = RunnerStanding(runner_id=7, state="active", gpu_type="cpu")
            assert await _get(url, "/readyz") == (200, "ok")
            membership.standing = RunnerStanding(runner_id=7, state="refused", gpu_type="cpu", note="not its pool")
            assert await _get(url, "/readyz") == (503, "not ready")
            membership.standing = RunnerStanding(runner_id=7, state="active", gpu_type="cpu")
            membership.draining = True  # SIGTERM: it finishes its jobs, then leaves
            assert await _get(url, "/readyz") == (503, "not ready")
            assert await _get(url, "/healthz") == (200, "ok")


def test_the_openapi_document_marks_the_probes_unauthenticated() -> None:
    document = openapi_document()
    assert document["security"] == [{"signature": [], "timestamp": []}]
    for path in ("/healthz", "/readyz"):
        assert document["paths"][path]["get"]["security"] == [], path
    assert "security" not in document["paths"]["/v1/health"]["get"], "the signed health stays signed"
    assert SIGNATURE_HEADER in str(document["components"]["securitySchemes"])
