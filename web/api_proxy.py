"""The web's same-origin door to the public API: the few routes a signed-in page calls, forwarded with the user's
own personal token.

The web reads the store and never writes it; what a signed-in user does (submit, follow a run, read their own
result) goes to the API service (`ARENA_WEB_API_URL`), which checks the token, the quota, the upload and every
other rule, and answers RFC 9457 problem details that the page shows as they come. The browser never sees the
token: it lives in the session cookie (`web.session`), and this module adds it as `Authorization: Bearer`.

Only this allow-list is reachable, under `/api` (the rest of the API is not):

    POST /api/v1/submissions                 the CSRF header is required; the body is bounded as the API bounds it
    GET  /api/v1/submissions/{id}/events     streamed as it comes (Server-Sent Events), Last-Event-ID passed on
    GET  /api/v1/submissions/{id}            the submission and its result
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from api.app import MAX_BODY_BYTES
from web.session import CSRF_HEADER, WebSession, check_csrf, signed_in
from web.settings import WebSettings

log = logging.getLogger(__name__)

PREFIX = "/api"
# How long a forwarded request may take (not a stream, which lasts as long as its run).
TIMEOUT_S = 30.0
PROBLEM_CONTENT_TYPE = "application/problem+json"
# Headers of the API's answer that the browser needs; nothing else of the API's (its server, its cookies) passes.
PASSED_BACK = ("Content-Type", "Cache-Control", "Retry-After", "X-Accel-Buffering")
SUBMISSION_ID = r"{submission_id:[0-9]{1,18}}"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class ApiProxy:
    """The API's base URL and the HTTP client that calls it (opened with the app, closed with it)."""

    base_url: str
    timeout_s: float
    client: aiohttp.ClientSession | None = None

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


PROXY: web.AppKey[ApiProxy | None] = web.AppKey("api_proxy")


class ProxyRefusedError(Exception):
    """A refusal of the web's own, before anything reaches the API: signed out, CSRF, the body too large."""

    def __init__(self, status: int, code: str, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.code, self.title, self.detail = status, code, title, detail

    def response(self) -> web.Response:
        body = {
            "type": f"urn:kernel-arena:problem:{self.code}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
        }
        return web.Response(
            text=json.dumps(body),
            status=self.status,
            content_type=PROBLEM_CONTENT_TYPE,
            headers={"Cache-Control": "no-store"},
        )


def proxy_of(app: web.Application) -> ApiProxy | None:
    """The proxy, or None where no API is configured (the pages then offer no submitting)."""
    return app.get(PROXY)


def _proxy(request: web.Request) -> ApiProxy:
    proxy = proxy_of(request.app)
    if proxy is None or proxy.client is None:
        raise ProxyRefusedError(
            503, "unavailable", "Unavailable", "Submitting from the web is off here: the site has no API service set."
        )
    return proxy


async def _session(request: web.Request) -> WebSession:
    session = await signed_in(request)
    if session is None:
        raise ProxyRefusedError(
            401, "signed_out", "Signed out", "Sign in with Discord first; your session may have ended."
        )
    return session


def _forward_headers(request: web.Request, session: WebSession) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {session.token}", "Accept": request.headers.get("Accept", "*/*")}
    # The API counts failed authentications per client address; where it lists this web as a trusted proxy, this
    # names the browser's address instead of the web's.
    if request.remote:
        headers["X-Forwarded-For"] = request.remote
    return headers


def _passed_back(upstream: aiohttp.ClientResponse) -> dict[str, str]:
    return {name: upstream.headers[name] for name in PASSED_BACK if name in upstream.headers}


async def _read_bounded(request: web.Request) -> bytes:
    """The request's body, refused past MAX_BODY_BYTES (the API's own bound) without reading the rest."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise _too_large()
    body = bytearray()
    async for chunk in request.content.iter_chunked(64 * 1024):
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise _too_large()
    return bytes(body)


def _too_large() -> ProxyRefusedError:
    limit = MAX_BODY_BYTES // 1024
    return ProxyRefusedError(
        413, "payload_too_large", "Payload too large", f"The submission is over {limit} KiB; the limit is {limit} KiB."
    )


async def post_submission(request: web.Request) -> web.StreamResponse:
    proxy = _proxy(request)
    session = await _session(request)
    try:
        check_csrf(request, session, request.headers.get(CSRF_HEADER, ""))
    except web.HTTPForbidden as refused:
        raise ProxyRefusedError(403, "csrf_failed", "Forbidden", refused.text or "Reload the page.") from None
    body = await _read_bounded(request)
    headers = {**_forward_headers(request, session), "Content-Type": request.headers.get("Content-Type", "")}
    if key := request.headers.get("Idempotency-Key"):
        headers["Idempotency-Key"] = key
    assert proxy.client is not None
    timeout = aiohttp.ClientTimeout(total=proxy.timeout_s)
    async with proxy.client.post(proxy.url("/v1/submissions"), data=body, headers=headers, timeout=timeout) as upstream:
        return web.Response(body=await upstream.read(), status=upstream.status, headers=_passed_back(upstream))


async def get_submission(request: web.Request) -> web.StreamResponse:
    proxy = _proxy(request)
    session = await _session(request)
    assert proxy.client is not None
    path = f"/v1/submissions/{request.match_info['submission_id']}"
    timeout = aiohttp.ClientTimeout(total=proxy.timeout_s)
    async with proxy.client.get(proxy.url(path), headers=_forward_headers(request, session), timeout=timeout) as up:
        return web.Response(body=await up.read(), status=up.status, headers=_passed_back(up))


async def get_events(request: web.Request) -> web.StreamResponse:
    """The event stream, passed on chunk by chunk as the API writes it: the browser sees each event at once."""
    proxy = _proxy(request)
    session = await _session(request)
    assert proxy.client is not None
    headers = _forward_headers(request, session)
    if last := request.headers.get("Last-Event-ID"):
        headers["Last-Event-ID"] = last
    params = {"after": request.query["after"]} if "after" in request.query else None
    path = f"/v1/submissions/{request.match_info['submission_id']}/events"
    # No total timeout: a run may wait long in its queue. The API writes a comment every 15 s, so a read that
    # waits a minute means the API is gone, and the browser reconnects with Last-Event-ID.
    timeout = aiohttp.ClientTimeout(total=None, connect=proxy.timeout_s, sock_read=60)
    async with proxy.client.get(proxy.url(path), headers=headers, params=params, timeout=timeout) as upstream:
        if upstream.status != 200:
            return web.Response(body=await upstream.read(), status=upstream.status, headers=_passed_back(upstream))
        response = web.StreamResponse(status=200, headers=_passed_back(upstream))
        await response.prepare(request)
        async for chunk in upstream.content.iter_any():
            await response.write(chunk)
        await response.write_eof()
        return response


def _answering_refusals(handler: Handler) -> Handler:
    """`handler`, with a refusal of the proxy's own, or the API out of reach, answered as problem details (the
    page shows their `detail`)."""

    @functools.wraps(handler)
    async def answer(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except ProxyRefusedError as refusal:
            return refusal.response()
        except (aiohttp.ClientConnectionError, TimeoutError) as exc:
            proxy = request.app[PROXY]
            log.warning("the API at %s did not answer %s %s: %s", proxy and proxy.base_url, request.method,
                        request.path, exc)  # fmt: skip
            return ProxyRefusedError(
                503, "unavailable", "Unavailable", "The arena's API did not answer; try again in a moment."
            ).response()

    return answer


async def _client_context(app: web.Application) -> AsyncIterator[None]:
    proxy = app[PROXY]
    if proxy is None:
        yield
        return
    # One connection pool for every forwarded request; no cookie jar: nothing of the API's is kept here.
    proxy.client = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
    try:
        yield
    finally:
        await proxy.client.close()
        proxy.client = None


def add_api_proxy(app: web.Application, settings: WebSettings) -> None:
    """Add the allow-listed API routes under /api to `app` (calling `settings.api_url`), and the HTTP client they
    share to its life."""
    app[PROXY] = ApiProxy(settings.api_url, TIMEOUT_S) if settings.api_url else None
    app.cleanup_ctx.append(_client_context)
    app.add_routes(
        [
            web.post(f"{PREFIX}/v1/submissions", _answering_refusals(post_submission)),
            web.get(f"{PREFIX}/v1/submissions/{SUBMISSION_ID}/events", _answering_refusals(get_events)),
            web.get(f"{PREFIX}/v1/submissions/{SUBMISSION_ID}", _answering_refusals(get_submission)),
        ]
    )
