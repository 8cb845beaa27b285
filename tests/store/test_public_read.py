"""The public API's read routes and its token authentication, over real HTTP (aiohttp's test server, the real
store): every answer, refusals included, is checked against the OpenAPI document the API serves; expired, revoked
and wrong-scope tokens, plain http from another machine and a brute force of guesses are refused with problem
details that leak nothing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import jsonschema
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from api.app import create_app, openapi_document
from api.problems_json import PROBLEM_CODES, problem_middleware
from api.read_models import MODELS as READ_MODELS
from api.settings import ApiSettings
from api.user_auth import authenticate, install_user_auth
from core.contests import ContestDraft, create_contest
from core.moderation import Actor, ban_user
from core.problems import ProblemSpec, sync_problem
from core.settings import RateLimitSettings, Settings
from core.store import users
from core.submit.intake import submit
from core.tokens import create_token, revoke_token
from runner.protocol import protocol_version
from tests.store.store_helpers import GPUS, MATMUL, MOD, VECTOR_ADD, add_problems, request, submit_scored

# A problem a moderator added: stored with its module, which the API reads statically and never runs.
SECRET_SOURCE = """
from problems.base import Param, Problem


class SecretSum(Problem):
    slug = "secret_sum"
    title = "Secret sum"
    description = "Add two vectors, in secret."
    dtypes = ("float32",)
    flops_formula = "n"
    bytes_formula = "12 n"
    parameters = (Param("a", "input"), Param("b", "input"), Param("c", "output"), Param("n", "scalar"))
"""
SECRET = ProblemSpec("secret_sum", "Secret sum", 1, ("float32",), source=SECRET_SOURCE)

TARGETS = (("h100", "float32"),)
ROUTE_TEMPLATES = [
    "/v1/problems/{slug}",
    "/v1/leaderboards/{slug}",
    "/v1/contests/{slug}",
    "/v1/problems",
    "/v1/contests",
    "/v1/ratings",
    "/v1/me/quota",
]


def _template(path: str) -> str:
    for template in ROUTE_TEMPLATES:
        if re.fullmatch(re.sub(r"\{[a-z_]+\}", "[^/]+", template), path):
            return template
    raise AssertionError(f"{path} is not a read route")


class Api:
    """A client of the read routes that checks every answer against the served OpenAPI document."""

    def __init__(self, client: TestClient, document: dict[str, Any]) -> None:
        self.client = client
        self.document = document
        self.checked = 0

    async def get(self, path: str, token: str | None = None, **kw: Any) -> tuple[int, Any, aiohttp.ClientResponse]:
        headers = dict(kw.pop("headers", {}))
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        response = await self.client.get(path, headers=headers, **kw)
        body = await response.json(content_type=None)
        self.check(_template(path.split("?")[0]), response, body)
        return response.status, body, response

    def check(self, template: str, response: aiohttp.ClientResponse, body: Any) -> None:
        """The status is documented for the route, and the body matches the schema documented for it."""
        operation = self.document["paths"][template]["get"]
        assert str(response.status) in operation["responses"], (template, response.status, body)
        media = operation["responses"][str(response.status)]["content"]
        assert response.content_type in media, (template, response.status, response.content_type)
        schema = media[response.content_type]["schema"]
        jsonschema.validate(body, {**schema, "components": self.document["components"]})
        self.checked += 1


@pytest.fixture
async def api(pool: asyncpg.Pool) -> AsyncIterator[Api]:
    await add_problems(pool, VECTOR_ADD, MATMUL)
    settings = ApiSettings(dispatch=False, auth_failures_burst=5, auth_failures_per_minute=6.0)
    async with TestClient(TestServer(create_app(pool, settings))) as client:
        document = await (await client.get("/v1/openapi.json")).json()
        yield Api(client, document)


async def token_for(pool: asyncpg.Pool, who: str = "alice", scopes: str = "read,submit", **kw: Any) -> str:
    return (await create_token(pool, f"discord:{who}", who, f"{who}-cli", scopes=scopes, **kw)).token


def assert_problem(status: int, body: dict[str, Any], expected_status: int, code: str) -> None:
    assert (status, body["code"], body["status"]) == (expected_status, code, expected_status), body
    assert body["type"].endswith(":" + code) and body["title"] == PROBLEM_CODES[code].title


async def test_problems_are_listed_and_one_shows_its_full_interface(api: Api, pool: asyncpg.Pool) -> None:
    token = await token_for(pool)
    status, body, _ = await api.get("/v1/problems", token)
    assert status == 200 and {p["slug"] for p in body["problems"]} == {"vector_add", "matmul"}

    status, body, _ = await api.get("/v1/problems/vector_add?dtype=float16", token)
    assert status == 200 and body["dtype"] == "float16" and body["enabled"]
    assert body["cuda_signature"].startswith('extern "C" void solution(') and "half" in body["cuda_signature"]
    assert body["python_signature"].startswith("def solution(")
    assert [p["role"] for p in body["parameters"]][-1] == "scalar"
    assert body["check"]["exact"] is False and body["check"]["rtol"] > 0 and body["check"]["atol"] > 0
    assert body["flops_formula"] and body["bytes_formula"]
    assert body["gpu_cases"] and all(case["shapes"] and case["megabytes"] > 0 for case in body["gpu_cases"])
    assert {s["language"] for s in body["starters"]} == {"cuda", "python", "triton"}
    # The same again (built once) reads the same.
    assert (await api.get("/v1/problems/vector_add?dtype=float16", token))[1] == body

    status, body, _ = await api.get("/v1/problems/vector_add?dtype=float64", token)
    assert_problem(status, body, 422, "unsupported_dtype")
    status, body, _ = await api.get("/v1/problems/no_such_problem", token)
    assert_problem(status, body, 404, "problem_not_found")


async def test_a_board_pages_and_shows_the_callers_own_row(api: Api, pool: asyncpg.Pool) -> None:
    for i, user in enumerate(["ann", "bob", "cid", "dee", "eve"]):
        await submit_scored(pool, user, 10.0 * (i + 1))
    token = await token_for(pool, "ann")
    status, body, _ = await api.get("/v1/leaderboards/vector_add?gpu_type=h100&dtype=float32&page_size=2", token)
    assert status == 200 and body["method"] is not None and body["unit"] == "GFLOPS"
    assert body["world_size"] == 1  # a one-device problem's board
    assert [e["user"] for e in body["entries"]] == ["eve", "dee"] and body["has_next"]
    assert body["caller"]["user"] == "ann" and body["caller"]["rank"] == 5
    assert body["boards"] == [{"gpu_type": "h100", "dtype": "float32", "method": body["method"], "entries": 5}]
    assert body["protocol"] == protocol_version()
    assert [(e["protocol"], e["older_protocol"]) for e in body["entries"]] == [(protocol_version(), False)] * 2
    # Recorded before versions existed: each entry is due to be re-judged.
    await pool.execute("UPDATE submissions SET protocol = NULL")
    status, body, _ = await api.get("/v1/leaderboards/vector_add?gpu_type=h100&dtype=float32&page_size=2", token)
    assert all(e["protocol"] is None and e["older_protocol"] for e in body["entries"])
    status, body, _ = await api.get("/v1/leaderboards/vector_add?page_size=2&page=3", token)
    assert [e["rank"] for e in body["entries"]] == [5] and not body["has_next"]
    # No board yet for this problem: the default dtype, no rows.
    status, body, _ = await api.get("/v1/leaderboards/matmul", token)
    assert status == 200 and body["gpu_type"] is None and body["entries"] == [] and body["caller"] is None
    assert body["world_size"] == 1
    for query, code in [
        ("page=0", "invalid_option"),
        ("page_size=1000", "invalid_option"),
        ("language=cobol", "invalid_option"),
    ]:
        status, body, _ = await api.get(f"/v1/leaderboards/vector_add?{query}", token)
        assert_problem(status, body, 422, code)


async def test_contests_hide_their_problems_until_the_start_and_show_a_board_once_running(
    api: Api, pool: asyncpg.Pool
) -> None:
    now = datetime.now(UTC)
    await sync_problem(pool, SECRET)
    running = ContestDraft(
        "live", "Live", now - timedelta(minutes=30), now + timedelta(days=1), ("vector_add",), TARGETS
    )
    await create_contest(pool, MOD, running, now=now - timedelta(hours=2), gpus=GPUS)
    upcoming = ContestDraft(
        "later", "Later", now + timedelta(days=2), now + timedelta(days=3), ("secret_sum",), TARGETS
    )
    await create_contest(pool, MOD, upcoming, now=now, gpus=GPUS)
    await submit_scored(pool, "ann", 42.0)
    token = await token_for(pool)

    status, body, _ = await api.get("/v1/contests", token)
    assert status == 200
    by_slug = {c["slug"]: c for c in body["contests"]}
    assert by_slug["live"]["state"] == "running" and by_slug["later"]["state"] == "upcoming"
    assert by_slug["later"]["problems"] == [] and by_slug["later"]["hidden_problems"] == 1
    # The hidden problem is neither listed nor shown.
    assert "secret_sum" not in {p["slug"] for p in (await api.get("/v1/problems", token))[1]["problems"]}
    status, body, _ = await api.get("/v1/problems/secret_sum", token)
    assert_problem(status, body, 404, "problem_not_found")
    # It reads exactly as a problem that does not exist.
    unknown = (await api.get("/v1/problems/secret_sun", token))[1]
    assert body["detail"] == unknown["detail"].replace("secret_sun", "secret_sum") and "contest" not in body["detail"]

    status, body, _ = await api.get("/v1/contests/live", token)
    assert status == 200 and body["board"]["phase"] == "contest"
    assert [(line["user"], line["place"]) for line in body["board"]["lines"]] == [("ann", 1)]
    assert body["board"]["columns"] == [
        {"problem": "vector_add", "gpu_type": "h100", "dtype": "float32", "entrants": 1}
    ]
    # Once the contest started, the problem shows, from its stored module: no cases (only runners know them).
    await pool.execute("UPDATE contests SET starts_at = now() - interval '1 minute' WHERE slug = 'later'")
    status, body, _ = await api.get("/v1/problems/secret_sum", token)
    assert status == 200 and body["gpu_cases"] == [] and [p["name"] for p in body["parameters"]] == ["a", "b", "c", "n"]
    assert body["cuda_signature"].startswith('extern "C" void solution(const float* a')
    await pool.execute("UPDATE contests SET starts_at = now() + interval '1 day' WHERE slug = 'later'")
    status, body, _ = await api.get("/v1/contests/later", token)
    assert status == 200 and body["board"] is None
    status, body, _ = await api.get("/v1/contests/live?phase=upsolve", token)
    assert status == 200 and body["board"]["phase"] == "upsolve"
    status, body, _ = await api.get("/v1/contests/live?phase=final", token)
    assert_problem(status, body, 422, "invalid_option")
    for missing in ("nope", "%00", "NOPE"):
        status, body, _ = await api.get(f"/v1/contests/{missing}", token)
        assert_problem(status, body, 404, "contest_not_found")


async def test_ratings_page_and_leave_banned_players_out(api: Api, pool: asyncpg.Pool) -> None:
    now = datetime.now(UTC)
    draft = ContestDraft("past", "Past", now - timedelta(days=2), now - timedelta(days=1), ("vector_add",), TARGETS)
    await create_contest(pool, MOD, draft, now=now - timedelta(days=3), gpus=GPUS)
    contest_id = await pool.fetchval("SELECT id FROM contests WHERE slug = 'past'")
    for i, name in enumerate(["ann", "bob", "cid"]):
        user = await users.ensure_user(pool, f"discord:{name}", name)
        await pool.execute(
            """INSERT INTO ratings (user_id, rating, rd, volatility, contests, last_contest_id)
            VALUES ($1, $2, 50, 0.06, 1, $3)""",
            user.id,
            1500.0 + 100 * i,
            contest_id,
        )
    await ban_user(pool, Actor("local:mod", "mod"), "discord:bob", "cheating")
    token = await token_for(pool)
    status, body, _ = await api.get("/v1/ratings?page_size=1", token)
    assert status == 200 and body["total"] == 2 and body["has_next"]
    assert [(e["place"], e["user"], e["conservative"]) for e in body["entries"]] == [(1, "cid", 1600.0)]
    status, body, _ = await api.get("/v1/ratings?page_size=1&page=2", token)
    assert [e["user"] for e in body["entries"]] == ["ann"] and not body["has_next"]


async def test_the_quota_is_the_same_buckets_as_discord_runs(pool: asyncpg.Pool) -> None:
    await add_problems(pool, VECTOR_ADD)
    rate = RateLimitSettings(test_burst=3, test_per_hour=1.0)
    # A run from Discord, by the same member, draws on the bucket the API shows.
    await submit(pool, request("ann", mode="test"), rate)
    settings = ApiSettings(dispatch=False, arena=Settings(rate=rate))
    async with TestClient(TestServer(create_app(pool, settings))) as client:
        api = Api(client, await (await client.get("/v1/openapi.json")).json())
        status, body, _ = await api.get("/v1/me/quota", await token_for(pool, "ann", scopes="read"))
    assert status == 200 and body["user"] == "ann"
    test = next(b for b in body["buckets"] if b["mode"] == "test")
    assert (test["left"], test["burst"]) == (2, 3) and test["next_in_s"] > 0
    assert body["queued_total"] == 1 and body["queued"][0]["problem"] == "vector_add"
    assert body["queued"][0]["place"] == 1


async def test_missing_unknown_expired_revoked_and_wrong_scope_tokens_are_refused(api: Api, pool: asyncpg.Pool) -> None:
    good = await token_for(pool, "ann", scopes="submit")
    expired = await token_for(pool, "ann", lifetime=timedelta(hours=1), now=datetime.now(UTC) - timedelta(hours=2))
    revoked = await token_for(pool, "bob")
    await revoke_token(pool, "discord:bob", "bob-cli")
    cases: list[tuple[dict[str, str], int, str]] = [
        ({}, 401, "token_missing"),
        ({"Authorization": "Basic YWxpY2U6c2VjcmV0"}, 401, "token_missing"),
        ({"Authorization": "Bearer arena_pat_" + "x" * 43}, 401, "token_invalid"),
        ({"Authorization": f"Bearer {expired}"}, 401, "token_expired"),
        ({"Authorization": f"Bearer {revoked}"}, 401, "token_revoked"),
        ({"Authorization": f"Bearer {good}"}, 403, "insufficient_scope"),
    ]
    for headers, status_expected, code in cases:
        status, body, response = await api.get("/v1/problems", headers=headers)
        assert_problem(status, body, status_expected, code)
        assert response.content_type == "application/problem+json"
        if status_expected == 401:
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
        # Nothing secret or internal in the answer.
        text = repr(body) + repr(dict(response.headers))
        for secret in (good, expired, revoked):
            assert secret not in text
        assert "Traceback" not in text and "127.0.0.1" not in text and "postgres" not in text.lower()


async def test_a_banned_users_token_reads_but_may_not_submit(api: Api, pool: asyncpg.Pool) -> None:
    token = await token_for(pool, "ann")
    await ban_user(pool, Actor("local:mod", "mod"), "discord:ann", "spam")
    status, _, _ = await api.get("/v1/problems", token)
    assert status == 200
    # The scope `submit` refuses a banned user, before any upload is read.
    app = web.Application(middlewares=[problem_middleware])
    install_user_auth(app, pool, ApiSettings(dispatch=False))

    async def needs_submit(request: web.Request) -> web.Response:
        await authenticate(request, "submit")
        return web.json_response({})

    app.router.add_post("/v1/needs-submit", needs_submit)
    async with TestClient(TestServer(app)) as client:
        response = await client.post("/v1/needs-submit", headers={"Authorization": f"Bearer {token}"})
        body = await response.json(content_type=None)
    assert_problem(response.status, body, 403, "banned")


async def test_a_brute_force_of_guesses_gets_429_with_retry_after(api: Api, pool: asyncpg.Pool) -> None:
    good = await token_for(pool)
    # The limiter's burst is 5 in this app: five guesses are answered 401, the sixth 429.
    for i in range(5):
        status, body, _ = await api.get("/v1/problems", headers={"Authorization": f"Bearer arena_pat_{i:043d}"})
        assert_problem(status, body, 401, "token_invalid")
    status, body, response = await api.get("/v1/problems", headers={"Authorization": "Bearer arena_pat_" + "z" * 43})
    assert_problem(status, body, 429, "auth_rate_limited")
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= 10 and body["retry_after_s"] == retry_after
    # While refused, even a good token is not looked at: guessing learns nothing.
    status, body, _ = await api.get("/v1/problems", good)
    assert_problem(status, body, 429, "auth_rate_limited")


async def test_expired_revoked_and_missing_tokens_are_not_counted_as_guesses(api: Api, pool: asyncpg.Pool) -> None:
    good = await token_for(pool)
    expired = await token_for(pool, lifetime=timedelta(hours=1), now=datetime.now(UTC) - timedelta(hours=2))
    for _ in range(8):  # more than the burst of 5
        assert (await api.get("/v1/problems", expired))[0] == 401
        assert (await api.get("/v1/problems"))[0] == 401
    assert (await api.get("/v1/problems", good))[0] == 200


async def test_plain_http_from_another_machine_is_refused_unless_a_trusted_proxy_says_https(pool: asyncpg.Pool) -> None:
    await add_problems(pool, VECTOR_ADD)
    token = await token_for(pool)
    headers = {"Authorization": f"Bearer {token}", "X-Forwarded-For": "203.0.113.7"}
    # The test server's peer is 127.0.0.1; listed as the TLS proxy, the client it names is another machine.
    settings = ApiSettings(dispatch=False, trusted_proxies=["127.0.0.1/32"])
    async with TestClient(TestServer(create_app(pool, settings))) as client:
        api = Api(client, await (await client.get("/v1/openapi.json")).json())
        status, body, _ = await api.get("/v1/problems", headers=headers)
        assert_problem(status, body, 403, "https_required")
        assert "203.0.113.7" not in repr(body)
        status, _, _ = await api.get("/v1/problems", headers={**headers, "X-Forwarded-Proto": "https"})
        assert status == 200
        # A loopback client may use http://, proxied or not.
        status, _, _ = await api.get("/v1/problems", headers={**headers, "X-Forwarded-For": "127.0.0.1"})
        assert status == 200
    # An untrusted peer's forwarding headers are not believed: loopback peer, loopback client.
    async with TestClient(TestServer(create_app(pool, ApiSettings(dispatch=False)))) as client:
        response = await client.get("/v1/problems", headers=headers)
        assert response.status == 200


async def test_unknown_routes_and_methods_under_v1_are_problem_details(api: Api, pool: asyncpg.Pool) -> None:
    token = await token_for(pool)
    response = await api.client.get("/v1/nothing-here", headers={"Authorization": f"Bearer {token}"})
    body = await response.json(content_type=None)
    assert response.content_type == "application/problem+json"
    assert_problem(response.status, body, 404, "not_found")
    response = await api.client.delete("/v1/problems", headers={"Authorization": f"Bearer {token}"})
    assert_problem(response.status, await response.json(content_type=None), 405, "method_not_allowed")
    # The runners' protocol keeps its own error body.
    response = await api.client.put("/v1/runners/1", data=b"{}")
    assert response.status == 401 and "error" in await response.json()


async def test_every_read_route_is_in_the_document_and_was_checked(api: Api, pool: asyncpg.Pool) -> None:
    """Each read route answers a good token with 200 and a body that matches its documented model."""
    now = datetime.now(UTC)
    draft = ContestDraft("live", "Live", now - timedelta(minutes=5), now + timedelta(days=1), ("vector_add",), TARGETS)
    await create_contest(pool, MOD, draft, now=now - timedelta(hours=1), gpus=GPUS)
    token = await token_for(pool)
    paths = {
        "/v1/problems/{slug}": "/v1/problems/matmul",
        "/v1/leaderboards/{slug}": "/v1/leaderboards/vector_add",
        "/v1/contests/{slug}": "/v1/contests/live",
    }
    for template in ROUTE_TEMPLATES:
        assert template in api.document["paths"], template
        status, _, _ = await api.get(paths.get(template, template), token)
        assert status == 200, template
    assert api.checked == len(ROUTE_TEMPLATES)


def test_the_guide_lists_every_problem_code_with_its_status() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    listed = dict(re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", guide, re.MULTILINE))
    assert listed == {code: str(entry.status) for code, entry in PROBLEM_CODES.items()}


def test_the_read_models_are_valid_json_schema_in_the_document() -> None:
    document = openapi_document()
    for model in READ_MODELS:
        schema = document["components"]["schemas"][model.__name__]
        jsonschema.Draft202012Validator.check_schema(schema)
    assert document["components"]["schemas"]["Problem"]["required"] == ["type", "title", "status", "detail", "code"]
