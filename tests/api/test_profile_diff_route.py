"""`GET /v1/profiles/diff` over real HTTP (aiohttp's test server, the real store), every answer checked against the
OpenAPI document: the diff of two recorded H100 profiles, B chosen when left out, and the refusals as problem
details with their stable codes: a missing or malformed id, someone else's run, a run that is not a profile,
another GPU type, nothing to compare with, no token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import asyncpg
import jsonschema
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api.app import create_app, openapi_document
from api.settings import ApiSettings
from core.tokens import create_token
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.profiled_runs import cuda, recorded, run_of
from tests.store.store_helpers import MATMUL, add_problems

DOCUMENT = openapi_document()
PATH = "/v1/profiles/diff"


async def answer(response: aiohttp.ClientResponse) -> Any:
    """The body, after checking it is what the document says the route answers with this status."""
    body = await response.json(content_type=None)
    declared = DOCUMENT["paths"][PATH]["get"]["responses"][str(response.status)]
    schema = declared["content"][response.content_type]["schema"]
    jsonschema.validate(body, {**schema, "components": DOCUMENT["components"]})
    return body


@pytest.fixture
async def client(pool: asyncpg.Pool) -> AsyncIterator[TestClient]:  # noqa: F811
    await add_problems(pool, MATMUL)
    async with TestClient(TestServer(create_app(pool, ApiSettings(dispatch=False)))) as test_client:
        yield test_client


async def bearer(db: asyncpg.Pool, who: str) -> dict[str, str]:
    made = await create_token(db, f"discord:{who}", who, f"{who}-laptop", scopes="read")
    return {"Authorization": f"Bearer {made.token}"}


async def test_the_route_answers_the_diff_and_chooses_b_when_left_out(
    client: TestClient,
    pool: asyncpg.Pool,  # noqa: F811
) -> None:
    naive = await run_of(pool, "ada", cuda("naive"), report=recorded("naive"))
    tiled = await run_of(pool, "ada", cuda("tiled"), report=recorded("tiled", kernel_name="matmul_kernel"))
    ada = await bearer(pool, "ada")

    response = await client.get(PATH, params={"a": str(naive), "b": str(tiled)}, headers=ada)
    assert response.status == 200 and response.headers["Cache-Control"] == "no-store"
    body = await answer(response)
    assert (body["a"]["submission_id"], body["b"]["submission_id"], body["b_chosen"]) == (naive, tiled, "given")
    kernel = body["kernels"][0]
    assert kernel["name"] == "matmul_kernel" and kernel["side"] == "both"
    assert kernel["duration_us"]["a"] == pytest.approx(47601.728)
    assert kernel["duration_us"]["change_pct"] == pytest.approx(-58.42, abs=0.01)
    assert body["totals"]["speedup"] == pytest.approx(2.405, abs=0.001)

    chosen = await answer(await client.get(PATH, params={"a": str(tiled)}, headers=ada))
    assert (chosen["b"]["submission_id"], chosen["b_chosen"]) == (naive, "own_fastest")


async def test_each_refusal_is_problem_details_with_its_code(
    client: TestClient,
    pool: asyncpg.Pool,  # noqa: F811
) -> None:
    mine = await run_of(pool, "ada", cuda("mine"), report=recorded("naive"))
    timed = await run_of(pool, "ada", cuda("timed"), mode="benchmark", score=10.0)
    elsewhere = await run_of(pool, "ada", cuda("a100"), report=recorded("tiled"), gpu="a100")
    theirs = await run_of(pool, "bob", cuda("bob"), report=recorded("tiled"))
    ada = await bearer(pool, "ada")

    async def refused(params: dict[str, str], headers: dict[str, str] = ada) -> tuple[int, str, str]:
        response = await client.get(PATH, params=params, headers=headers)
        assert response.content_type == "application/problem+json"
        body = await answer(response)
        return response.status, body["code"], body["detail"]

    assert (await refused({}))[:2] == (422, "validation_failed")
    assert (await refused({"a": "x1"}))[:2] == (422, "invalid_option")
    assert (await refused({"a": str(mine), "b": "0"}))[:2] == (422, "invalid_option")
    assert (await refused({"a": str(theirs), "b": str(mine)}))[:2] == (404, "submission_not_found")
    status, code, detail = await refused({"a": str(timed), "b": str(mine)})
    assert (status, code) == (422, "not_profiled") and "`--mode profile`" in detail
    status, code, detail = await refused({"a": str(mine), "b": str(elsewhere)})
    assert (status, code) == (422, "profiles_not_comparable") and "Profile B on `h100` too" in detail
    assert (await refused({"a": str(mine)}))[:2] == (404, "nothing_to_compare")
    assert (await refused({"a": str(mine)}, headers={}))[:2] == (401, "token_missing")
