"""The parts of the public API's authentication that need no store: the failed-authentication bucket over a
clock the test moves, who the client is behind a chain of proxies, and a failure of a route that becomes a 500
problem without a word of what failed."""

from __future__ import annotations

import logging

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request

from api.problems_json import ProblemError, problem_middleware
from api.settings import ApiSettings
from api.user_auth import FailedAuthLimiter, client_of


def test_the_bucket_refuses_after_the_burst_and_refills_with_time() -> None:
    now = [1000.0]
    limiter = FailedAuthLimiter(burst=3, per_minute=6.0, clock=lambda: now[0])  # one back every 10 s
    for _ in range(3):
        assert limiter.refused_for_s("198.51.100.1") is None
        limiter.failed("198.51.100.1")
    wait = limiter.refused_for_s("198.51.100.1")
    assert wait == pytest.approx(10.0)
    assert limiter.refused_for_s("198.51.100.2") is None  # another address is not affected
    now[0] += 9.0
    assert limiter.refused_for_s("198.51.100.1") == pytest.approx(1.0)
    now[0] += 1.0
    assert limiter.refused_for_s("198.51.100.1") is None


def test_the_client_is_the_first_untrusted_hop_and_only_trusted_proxies_are_believed() -> None:
    settings = ApiSettings(dispatch=False, trusted_proxies=["10.0.0.0/8"])

    def request(peer: str, **headers: str) -> web.Request:
        return make_mocked_request("GET", "/v1/problems", headers=headers).clone(remote=peer)

    # Through two listed proxies: the address the outer proxy saw connect, and its word on https.
    chained = request(
        "10.0.0.2", **{"X-Forwarded-For": "192.0.2.9, 203.0.113.4, 10.0.0.1", "X-Forwarded-Proto": "https"}
    )
    client = client_of(chained, settings)
    assert (client.address, client.secure, client.loopback) == ("203.0.113.4", True, False)
    # An untrusted peer's headers say nothing.
    spoofed = request("198.51.100.7", **{"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Proto": "https"})
    client = client_of(spoofed, settings)
    assert (client.address, client.secure, client.loopback) == ("198.51.100.7", False, False)
    assert client_of(request("::1"), settings).loopback


class _LeakyError(Exception):
    pass


async def test_an_unexpected_failure_is_a_500_problem_that_says_nothing_of_it(caplog: pytest.LogCaptureFixture) -> None:
    async def failing(request: web.Request) -> web.Response:
        raise _LeakyError("connection to postgres://arena:hunter2@10.2.3.4:5432/arena failed")

    async def refusing(request: web.Request) -> web.Response:
        raise ProblemError("rate_limited", "Slow down.", retry_after_s=2.2)

    app = web.Application(middlewares=[problem_middleware])
    app.router.add_get("/v1/fails", failing)
    app.router.add_get("/v1/refuses", refusing)
    async with TestClient(TestServer(app)) as client:
        with caplog.at_level(logging.ERROR, logger="api.problems_json"):
            response = await client.get("/v1/fails")
            text = await response.text()
        refused = await client.get("/v1/refuses")
        refused_body = await refused.json(content_type=None)
    assert response.status == 500 and response.content_type == "application/problem+json"
    assert '"code":"internal"' in text
    for secret in ("hunter2", "10.2.3.4", "postgres", "Traceback", "_LeakyError"):
        assert secret not in text
    # The log keeps what the answer leaves out.
    assert "hunter2" in caplog.text
    assert refused.status == 429 and refused.headers["Retry-After"] == "3" and refused_body["retry_after_s"] == 3
