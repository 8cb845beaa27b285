"""The public API's submission routes over real HTTP (aiohttp's test server, the real store), each answer checked
against the OpenAPI document: submit (multipart, the same checks as /submit, the owner's quota), the events as
Server-Sent Events resumed with Last-Event-ID after a dropped connection, the result, the code, the paged list,
and what another user, a missing token or a read-only token gets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import aiohttp
import asyncpg
import jsonschema
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api import public_events, public_submit
from api.app import create_app, openapi_document
from api.settings import ApiSettings
from core import fleet
from core.results import record_result
from core.settings import RateLimitSettings, Settings
from core.store import jobs
from core.submit.events import FollowPace
from core.submit.intake import SubmitRequest
from core.submit.intake import submit as core_submit
from core.submit.uploads import check_upload
from core.tokens import create_token
from tests.store.sse_frames import read_frames
from tests.store.store_helpers import add_problems, result_for

SOURCE = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"
DOCUMENT = openapi_document()
RATES = RateLimitSettings(test_burst=2, test_per_hour=0.001)


def check(path: str, method: str, response_status: int, content_type: str, body: Any) -> None:
    """`body` is what the OpenAPI document says `method path` answers with this status and content type."""
    operation = DOCUMENT["paths"][path][method]
    answer = operation["responses"][str(response_status)]
    media = answer["content"][content_type]
    if content_type == "text/event-stream":  # `body` is one event's data: the schema its `data` field names
        schema = media["itemSchema"]["properties"]["data"]["contentSchema"]
    else:
        schema = media["schema"]
    jsonschema.validate(body, {**schema, "components": DOCUMENT["components"]})


async def checked(response: aiohttp.ClientResponse, path: str, method: str = "get") -> Any:
    """The JSON body of `response`, after checking it against the document."""
    body = await response.json(content_type=None)
    check(path, method, response.status, response.content_type, body)
    return body


@pytest.fixture
async def client(pool: asyncpg.Pool) -> AsyncIterator[TestClient]:
    await add_problems(pool)
    await fleet.create_join_token(pool, "cpu", lifetime=timedelta(hours=1))  # the pool `cpu` exists
    settings = ApiSettings(dispatch=False, arena=Settings(rate=RATES))
    async with TestClient(TestServer(create_app(pool, settings))) as test_client:
        yield test_client


async def bearer(pool: asyncpg.Pool, who: str = "alice", scopes: str = "read,submit") -> dict[str, str]:
    made = await create_token(pool, f"discord:{who}", who, f"{who}-laptop", scopes=scopes)
    return {"Authorization": f"Bearer {made.token}"}


def upload(data: bytes = SOURCE, name: str = "solution.py", **fields: str) -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("problem", fields.pop("problem", "vector_add"))
    for key, value in {"mode": "test", **fields}.items():
        form.add_field(key, value)
    form.add_field("file", data, filename=name, content_type="text/x-python")
    return form


async def submit(client: TestClient, headers: dict[str, str], **fields: str) -> dict[str, Any]:
    response = await client.post("/v1/submissions", data=upload(**fields), headers=headers)
    assert response.status == 202, await response.text()
    return await checked(response, "/v1/submissions", "post")


async def read_events(response: aiohttp.ClientResponse, count: int | None = None) -> list[tuple[str | None, dict]]:
    """(SSE id, data) of each event of the stream, each data checked against the document; stops after `count`
    events or at the end of the stream."""
    events: list[tuple[str | None, dict]] = []
    for event_id, name, data in await read_frames(response, count):
        check("/v1/submissions/{submission_id}/events", "get", 200, "text/event-stream", data)
        assert name == data["type"]
        assert event_id == (None if data["id"] is None else str(data["id"]))
        events.append((event_id, data))
    return events


async def test_submit_follow_with_a_dropped_connection_and_read_the_result(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    alice = await bearer(pool)
    accepted = await submit(client, alice)
    sub_id = accepted["id"]
    assert accepted["gpu_type"] == "cpu" and accepted["queue_position"] == 1 and not accepted["duplicate"]
    assert accepted["events"] == f"/v1/submissions/{sub_id}/events"
    job = (await jobs.jobs_of(pool, sub_id))[0]

    # The first connection reads `submitted`, then the job is claimed; the connection drops after `dispatched`.
    first = await client.get(accepted["events"], headers=alice)
    head = await read_events(first, 1)
    assert [(i, e["type"], e["position"]) for i, e in head] == [("0", "submitted", 1)]
    lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
    assert lease is not None
    head += await read_events(first, 1)
    assert head[-1][1]["type"] == "dispatched" and head[-1][1]["runner"] == "runner-a"
    first.close()

    # While nobody listens, the job runs and ends.
    assert await jobs.set_running(pool, lease)
    spec = await jobs.job_spec(pool, job.id)
    assert spec is not None
    assert await record_result(pool, lease, result_for(spec, 2.5), "runner-a")

    # Resumed after the last event it had: exactly the events after it, to the end.
    second = await client.get(accepted["events"], headers={**alice, "Last-Event-ID": head[-1][0] or ""})
    rest = await read_events(second)
    assert [e["type"] for _, e in rest] == ["running", "result"]
    ids = [int(i) for i, _ in head + rest if i is not None]
    moves = await pool.fetch("SELECT id FROM job_transitions WHERE job_id = $1 ORDER BY id", job.id)
    assert ids == [0, *(m["id"] for m in moves)], "every kept event once, in order"
    final = rest[-1][1]
    assert final["state"] == "done" and final["result"]["status"] == "passed"

    # Resuming after the end yields nothing and ends.
    after_end = await client.get(accepted["events"], headers={**alice, "Last-Event-ID": rest[-1][0] or ""})
    assert await read_events(after_end) == []

    view = await checked(
        await client.get(f"/v1/submissions/{sub_id}", headers=alice), "/v1/submissions/{submission_id}"
    )
    assert view["status"] == "passed" and view["owner"] == "alice"
    assert view["result"]["timings"][0]["gflops"] == 2.5
    code = await checked(
        await client.get(f"/v1/submissions/{sub_id}/code", headers=alice), "/v1/submissions/{submission_id}/code"
    )
    assert code["source"] == SOURCE.decode() and code["file_name"] == "solution.py"


async def test_another_users_submission_reads_as_not_found(client: TestClient, pool: asyncpg.Pool) -> None:
    accepted = await submit(client, await bearer(pool))
    bob = await bearer(pool, "bob")
    for suffix in ("", "/code", "/events"):
        path = "/v1/submissions/{submission_id}" + suffix
        response = await client.get(f"/v1/submissions/{accepted['id']}{suffix}", headers=bob)
        assert response.status == 404
        problem = await checked(response, path)
        assert problem["code"] == "submission_not_found"
        assert "solution" not in json.dumps(problem)


async def test_the_callers_submissions_come_a_page_at_a_time(client: TestClient, pool: asyncpg.Pool) -> None:
    alice = await bearer(pool)
    made = [(await submit(client, alice))["id"], (await submit(client, alice, mode="benchmark"))["id"]]
    await submit(client, await bearer(pool, "bob"))
    pages, before = [], None
    while True:
        query = "?limit=1" + (f"&before={before}" if before else "")
        page = await checked(await client.get("/v1/submissions" + query, headers=alice), "/v1/submissions")
        pages.append([s["id"] for s in page["items"]])
        before = page["next_before"]
        if before is None:
            break
    assert pages == [[made[1]], [made[0]]], "newest first, one per page, none of bob's"
    bad = await client.get("/v1/submissions?limit=1000", headers=alice)
    assert bad.status == 422 and (await checked(bad, "/v1/submissions"))["code"] == "invalid_option"


async def test_refusals_are_problem_details_with_stable_codes(client: TestClient, pool: asyncpg.Pool) -> None:
    alice = await bearer(pool)

    async def refused(status: int, code: str, **kw: Any) -> dict[str, Any]:
        response = await client.post("/v1/submissions", **kw)
        assert response.status == status, await response.text()
        assert response.content_type == "application/problem+json"
        problem = await checked(response, "/v1/submissions", "post")
        assert problem["code"] == code, problem
        return problem

    await refused(401, "token_missing", data=upload())
    await refused(403, "insufficient_scope", data=upload(), headers=await bearer(pool, "carol", "read"))
    await refused(415, "unsupported_media_type", json={"problem": "vector_add"}, headers=alice)
    await refused(413, "payload_too_large", data=upload(b"#" * (256 * 1024 + 1)), headers=alice)
    await refused(422, "bad_upload", data=upload(name="solution.txt"), headers=alice)
    await refused(422, "bad_upload", data=upload(b"\xff\xfe"), headers=alice)
    await refused(404, "problem_not_found", data=upload(problem="vector_ad"), headers=alice)
    await refused(422, "unsupported_dtype", data=upload(dtype="int4"), headers=alice)
    await refused(422, "validation_failed", data=upload(colour="blue"), headers=alice)
    garbled = {**alice, "Content-Type": "multipart/form-data; boundary=xyz"}
    await refused(400, "bad_request", data=b"--abc\r\nnot a part at all", headers=garbled)
    no_boundary = {**alice, "Content-Type": "multipart/form-data"}
    await refused(400, "bad_request", data=b"problem=vector_add", headers=no_boundary)
    missing = aiohttp.FormData(default_to_multipart=True)
    missing.add_field("problem", "vector_add")
    await refused(422, "validation_failed", data=missing, headers=alice)
    # One quota: a Discord run (the bot's core call, under the same user) and an API run share the burst of 2.
    discord_run = SubmitRequest(
        "discord:alice", "alice", "vector_add", check_upload("solution.py", SOURCE), "cpu", "float32", "test"
    )
    await core_submit(pool, discord_run, RATES)
    await submit(client, alice)
    response = await client.post("/v1/submissions", data=upload(), headers=alice)
    assert response.status == 429 and int(response.headers["Retry-After"]) > 0
    assert (await checked(response, "/v1/submissions", "post"))["code"] == "rate_limited"


async def test_an_idempotency_key_answers_the_first_submission_again(client: TestClient, pool: asyncpg.Pool) -> None:
    alice = {**await bearer(pool), "Idempotency-Key": "retry-1"}
    first = await submit(client, alice)
    again = await submit(client, alice)
    assert again["id"] == first["id"] and again["duplicate"] and not first["duplicate"]
    assert (again["mode"], again["file_name"]) == (first["mode"], first["file_name"])


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"mode": "benchmark"}, "mode"),
        ({"data": SOURCE + b"# another body\n"}, "source"),
        ({"name": "other.py"}, "file name"),
    ],
)
async def test_an_idempotency_key_sent_again_with_another_body_is_refused(
    client: TestClient, pool: asyncpg.Pool, changed: dict[str, Any], named: str
) -> None:
    alice = {**await bearer(pool), "Idempotency-Key": "retry-2"}
    first = await submit(client, alice)
    response = await client.post("/v1/submissions", data=upload(**changed), headers=alice)
    problem = await checked(response, "/v1/submissions", "post")
    assert response.status == 409 and problem["code"] == "idempotency_conflict"
    assert f"#{first['id']}" in problem["detail"] and named in problem["detail"]
    stored = await pool.fetch("SELECT id, mode, file_name FROM submissions WHERE client_token = 'api:retry-2'")
    assert [(r["id"], r["mode"], r["file_name"]) for r in stored] == [(first["id"], "test", "solution.py")]


async def test_concurrent_submissions_of_many_users_go_through_the_batches_and_each_is_answered_as_its_own(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    users = [f"user{i}" for i in range(16)]
    headers = [await bearer(pool, who) for who in users]
    answers = await asyncio.gather(*(submit(client, {**h, "Idempotency-Key": f"k-{i}"}) for i, h in enumerate(headers)))
    for who, answer in zip(users, answers, strict=True):
        owner = await pool.fetchval(
            "SELECT u.external_id FROM submissions s JOIN users u ON u.id = s.user_id WHERE s.id = $1", answer["id"]
        )
        assert owner == f"discord:{who}" and not answer["duplicate"]
    # Two batches run at once, so a receipt's place may miss a job ahead whose batch committed just after its own
    # read: it is never behind its place as the queue now stands, and those places are 1 to 16.
    job_ids = [await pool.fetchval("SELECT id FROM jobs WHERE submission_id = $1", a["id"]) for a in answers]
    now = [await jobs.queue_position(pool, job_id) for job_id in job_ids]
    assert sorted(now) == list(range(1, 17))
    assert all(1 <= a["queue_position"] <= place for a, place in zip(answers, now, strict=True))
    # Every one went through the service's batches (how many shared one depends on when each arrived: the batches
    # themselves are tested in tests/store/test_submit_batch.py).
    sizes = client.server.app[public_submit.SERVICE].submitter.sizes
    assert sum(n * k for n, k in sizes.items()) == len(users)


async def test_a_waiting_submission_hears_its_place_as_it_moves(pool: asyncpg.Pool) -> None:
    """`queue` events say the place while it changes; they carry no id, so a resumed stream does not replay them."""
    await add_problems(pool)
    await fleet.create_join_token(pool, "cpu", lifetime=timedelta(hours=1))
    app = create_app(pool, ApiSettings(dispatch=False, arena=Settings(rate=RATES)))
    app[public_events.PACE] = FollowPace(poll_s=0.05, place_every_s=0.1)
    async with TestClient(TestServer(app)) as client:
        ahead = await submit(client, await bearer(pool, "bob"))
        alice = await bearer(pool)
        mine = await submit(client, alice)
        assert mine["queue_position"] == 2
        stream = await client.get(mine["events"], headers=alice)
        assert [(i, e["position"]) for i, e in await read_events(stream, 1)] == [("0", 2)]
        first = (await jobs.jobs_of(pool, ahead["id"]))[0]
        assert await jobs.claim_job(pool, first.id, "test-owner", 30.0, "runner-a") is not None
        [(event_id, moved)] = await read_events(stream, 1)
        assert event_id is None and (moved["type"], moved["position"], moved["attempt"]) == ("queue", 1, 1)
        stream.close()
