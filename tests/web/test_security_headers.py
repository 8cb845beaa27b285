"""Every response carries the security headers: pages, images, the style sheet, redirects and every error page (400,
404, 405, and a 500 of ours), on every route of the app's router. And no page holds an inline script or style, which
the Content-Security-Policy would block: the style comes from the style sheet the app serves."""

from __future__ import annotations

import re

import asyncpg
import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer

from core.store.pool import READER_ROLE, create_pool
from tests.web.conftest import web_settings
from tests.web.test_hostile_routes import ROUTES, _fill, _real_values
from tests.web.web_helpers import Seeded
from web.app import create_app

EXPECTED = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
}
CSP_DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "frame-ancestors": "'none'",
    "base-uri": "'none'",
}


def assert_secured(response: ClientResponse) -> None:
    where = f"{response.method} {response.url.path} ({response.status})"
    for name, value in EXPECTED.items():
        assert response.headers.get(name) == value, (where, name, response.headers.get(name))
    csp = response.headers.get("Content-Security-Policy", "")
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    for name, value in CSP_DIRECTIVES.items():
        assert directives.get(name) == value, (where, name, csp)
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp, (where, csp)
    assert directives["form-action"].startswith("'self'"), (where, csp)


async def test_every_route_answers_with_the_security_headers(client: TestClient, seeded: Seeded) -> None:
    real = _real_values(seeded)
    seen = set()
    for method, template in ROUTES:
        async with client.request(method, _fill(template, real), allow_redirects=False) as response:
            await response.read()
            assert_secured(response)
            seen.add(response.status)
    assert 200 in seen


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/problems/matmul_nope", 404),  # our 404 page
        ("GET", "/no/such/page", 404),  # aiohttp's router, through our page
        ("GET", "/ratings?page=%C2%B2", 400),
        ("GET", "/static/../pyproject.toml", 404),
        ("GET", "/static/nope.css", 404),
        ("DELETE", "/ratings", 405),  # answered by aiohttp itself
        ("GET", "/problems/vector-addition", 200),
        ("GET", "/problems/conv2d", 301),  # a former slug moves
        ("GET", "/static/arena.css", 200),
        ("GET", "/healthz", 200),
    ],
)
async def test_errors_redirects_and_files_carry_the_security_headers_too(
    client: TestClient, seeded: Seeded, method: str, path: str, status: int
) -> None:
    async with client.request(method, path, allow_redirects=False) as response:
        await response.read()
        assert response.status == status
        assert_secured(response)


async def test_a_page_that_fails_on_our_side_carries_them(pool: asyncpg.Pool, db_dsn: str) -> None:
    # A store that went away: the reader pool is closed under the app, and the page is our apology, a 500.
    async with create_pool(db_dsn, min_size=1, max_size=2, command_timeout=30, role=READER_ROLE) as reader:
        app = create_app(web_settings(db_dsn), reader)
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            await reader.close()
            async with client.get("/ratings") as response:
                assert response.status == 500 and "incident" in await response.text()
                assert_secured(response)


async def test_no_page_holds_an_inline_script_or_style(client: TestClient, seeded: Seeded) -> None:
    real = _real_values(seeded)
    pages = [_fill(t, real) for m, t in ROUTES if m == "GET"] + ["/users/2", "/contests"]
    for path in pages:
        async with client.get(path, allow_redirects=False) as response:
            if response.content_type != "text/html":
                continue
            text = await response.text()
            assert "<style" not in text and " style=" not in text, path
            # A script only by its address under /static: never a body, never an event handler attribute.
            assert not re.search(r"<script(?![^>]*\bsrc=\"/static/)[^>]*>", text), path
            assert not re.search(r"\son[a-z]+=", text), path
            assert 'href="/static/arena.css' in text, path
    sheet = await client.get("/static/arena.css")
    assert sheet.status == 200 and sheet.content_type == "text/css" and "font" in await sheet.text()
