"""No path or query string gets a 5xx: every route of the app, each path parameter and each query parameter in turn
given hostile values (unicode digits that `str.isdigit` accepts and `int` refuses, NUL, huge numbers, long strings,
bytes that are not UTF-8, markup).

The routes come from the app's own router, so a route added later is fuzzed without a change here; the query
parameters from every `query.get("…")` / `query["…"]` in web/, plus one that no handler reads. Path parameters that
the fuzz does not vary get a value that finds something in the seeded store, so that the query parameters reach
the code that reads them.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web import AbstractResource, Application
from yarl import URL

from core.store.pool import READER_ROLE, create_pool
from tests.web.conftest import web_settings
from tests.web.web_helpers import HOSTILE, Seeded
from web.app import create_app

# Written as they go on the wire (percent-encoded where they must be), so that the client sends them unchanged.
HOSTILE_VALUES = [
    *(urllib.parse.quote(v, safe="") for v in ("²", "⑦", "٣", "0", "-1", "+1", "1.5", "1e9", "NaN", "inf", " 1")),
    "9" * 19,  # past bigint
    "9" * 5000,  # past int()'s 4,300 digits
    "%00",
    "a%00b",
    "%ff%fe",  # not UTF-8
    "%ED%A0%80",  # a UTF-16 surrogate encoded as UTF-8
    urllib.parse.quote(HOSTILE, safe=""),
    urllib.parse.quote("'; DROP TABLE users; --", safe=""),
    urllib.parse.quote("../../../etc/passwd", safe=""),
    "..%2F..%2Fetc%2Fpasswd",
    urllib.parse.quote("\u202e\U0001f600é" * 300, safe=""),
    "x" * 6000,
    "%0d%0aSet-Cookie:%20a=b",
    "",
]


def _query_names() -> list[str]:
    """Every query parameter a handler in web/ reads, and one nobody reads."""
    found: set[str] = set()
    for source in Path(__file__).parents[2].joinpath("web").glob("*.py"):
        text = source.read_text(encoding="utf-8")
        found |= set(re.findall(r"""query(?:\.get\(|\[)\s*["']([^"']+)["']""", text))
        found |= set(re.findall(r"""_choice\(request,\s*["']([^"']+)["']""", text))
    return sorted(found | {"unread"})


def _routes(app: Application) -> list[tuple[str, str]]:
    """(method, path template) of every route: `{name}` marks a path parameter."""
    routes = []
    for route in app.router.routes():
        if route.method in ("HEAD", "OPTIONS"):
            continue
        resource: AbstractResource | None = route.resource
        assert resource is not None
        info = resource.get_info()
        template = info.get("path") or info.get("formatter") or f"{info['prefix']}/{{name}}"
        routes.append((route.method, template))
    return sorted(set(routes))


# Sign-in on, so that its routes are fuzzed past "sign-in is off"; Discord and the API at closed ports: a hostile
# request must be refused before anything is asked of them.
SIGNIN = {
    "secret": "s" * 40,
    "discord_client_id": "1234",
    "discord_client_secret": "not-a-secret",
    "public_url": "http://127.0.0.1:8080",
    "discord_url": "http://127.0.0.1:9",
    "api_url": "http://127.0.0.1:9",
}
# The router of an app built as `arena web` builds it (the store is opened only when it serves, never here).
ROUTES = _routes(create_app(web_settings("postgresql://unused@127.0.0.1:1/unused", **SIGNIN)))
QUERY_NAMES = _query_names()
PARAMETER = re.compile(r"\{(\w+)(?::[^}]*)?\}")


@pytest.fixture
async def client(pool: asyncpg.Pool, db_dsn: str) -> AsyncIterator[TestClient]:
    """The app as `arena web` serves it with sign-in on, over the read-only pool."""
    async with create_pool(db_dsn, min_size=1, max_size=4, command_timeout=30, role=READER_ROLE) as reader:
        app = create_app(web_settings(db_dsn, **SIGNIN), reader)
        async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
            yield test_client


def _real_values(seeded: Seeded) -> dict[str, str]:
    """A value per path parameter name that finds something in the seeded store."""
    return {
        "slug": "vector_add",
        "submission_id": str(seeded.ranked["bob"]),
        "user_id": "1",
        "name": "arena.css",
    }


def _fill(template: str, values: dict[str, str]) -> str:
    return PARAMETER.sub(lambda m: values.get(m.group(1), "x"), template)


async def _status(client: TestClient, method: str, path_and_query: str) -> int:
    url = URL(str(client.make_url("/")).rstrip("/") + path_and_query, encoded=True)
    async with client.session.request(method, url, allow_redirects=False) as response:
        await response.read()
        return response.status


def test_the_fuzz_covers_the_routes_and_the_query_parameters_the_pages_read() -> None:
    templates = {template for _, template in ROUTES}
    assert {"/", "/problems/{slug}", "/contests/{slug}", "/ratings", "/static/{name}"} <= templates
    assert any(t.startswith("/users/") for t in templates) and any(t.startswith("/submissions/") for t in templates)
    assert {"page", "gpu", "dtype", "lang", "method", "category", "difficulty"} <= set(QUERY_NAMES)


@pytest.mark.parametrize(("method", "template"), ROUTES, ids=[f"{m} {t}" for m, t in ROUTES])
async def test_no_hostile_path_or_query_value_gets_a_5xx(
    client: TestClient, seeded: Seeded, method: str, template: str
) -> None:
    real = _real_values(seeded)
    failures = []
    for name in PARAMETER.findall(template):
        for value in HOSTILE_VALUES:
            path = _fill(template, {**real, name: value})
            if (status := await _status(client, method, path)) >= 500:
                failures.append((status, path[:120]))
    base = _fill(template, real)
    for name in QUERY_NAMES:
        for value in HOSTILE_VALUES:
            query = f"{base}?{urllib.parse.quote(name)}={value}"
            if (status := await _status(client, method, query)) >= 500:
                failures.append((status, query[:120]))
    assert not failures, failures


def _unicode_digits(number: str, zero: int) -> str:
    """`number` written with the digits of another script, which `int` reads as the same number."""
    return "".join(chr(zero + int(d)) for d in number)


@pytest.mark.parametrize("kind", ["users", "submissions"])
async def test_a_number_in_a_path_is_ascii_digits_only(client: TestClient, seeded: Seeded, kind: str) -> None:
    number = _real_values(seeded)["user_id" if kind == "users" else "submission_id"]
    assert await _status(client, "GET", f"/{kind}/{number}") == 200
    for zero in (0xFF10, 0x0660):  # fullwidth and Arabic-Indic digits
        other = _unicode_digits(number, zero)
        assert int(other) == int(number)
        assert await _status(client, "GET", f"/{kind}/{urllib.parse.quote(other)}") == 404
