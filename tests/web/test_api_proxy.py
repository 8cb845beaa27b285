"""The web's proxy of the public API (`web/api_proxy.py`) between a signed-in browser and a real API service, over
the test's database: what it forwards (as the user, with their token), what it refuses itself (signed out, no
CSRF token, a body over the API's bound), what it passes back as it comes (the API's problem details), the event
stream resumed with Last-Event-ID, and that nothing else of the API is reachable through it."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import asyncpg
from aiohttp.test_utils import TestClient

from api.app import MAX_BODY_BYTES
from core.members import external_id
from core.results import record_result
from core.store import jobs
from tests.store.conftest import db_dsn, pg_dsn, pool, template_db  # noqa: F401  (fixtures, found by name)
from tests.store.sse_frames import read_frames
from tests.store.store_helpers import add_problems, result_for
from tests.web.signin_helpers import NELLY, ROY, sign_in, signin_stack
from web.session import WebSession

SOURCE = b"import torch\n\n\ndef solution(a, b, c, n):\n    torch.add(a, b, out=c)\n"


def upload(data: bytes = SOURCE, name: str = "solution.py", **fields: str) -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("problem", fields.pop("problem", "vector_add"))
    for key, value in {"mode": "test", **fields}.items():
        form.add_field(key, value)
    form.add_field("file", data, filename=name, content_type="text/plain")
    return form


def csrf(session: WebSession) -> dict[str, str]:
    return {"X-CSRF-Token": session.csrf}


async def problem(response: aiohttp.ClientResponse, status: int, code: str) -> dict[str, Any]:
    """The RFC 9457 problem details of a refusal, checked for its status and stable code."""
    text = await response.text()
    assert response.status == status, text[:500]
    assert response.content_type == "application/problem+json", response.content_type
    body = json.loads(text)
    assert body["status"] == status and body["code"] == code, body
    return body


async def count(pool: asyncpg.Pool) -> int:  # noqa: F811
    return await pool.fetchval("SELECT count(*) FROM submissions")


async def submit(client: TestClient, session: WebSession, **fields: str) -> dict[str, Any]:
    response = await client.post("/api/v1/submissions", data=upload(**fields), headers=csrf(session))
    assert response.status == 202, await response.text()
    return await response.json()


async def read_events(response: aiohttp.ClientResponse, count: int | None = None) -> list[tuple[str | None, dict]]:
    """(SSE id, data) of each event, until `count` events or the end of the stream."""
    assert response.status == 200 and response.content_type == "text/event-stream", await response.text()
    events: list[tuple[str | None, dict]] = []
    for event_id, name, data in await read_frames(response, count):
        assert name == data["type"]
        events.append((event_id, data))
    return events


async def test_a_signed_in_user_submits_as_themselves_and_reads_their_submission(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        accepted = await submit(stack.client, session)
        assert accepted["problem"] == "vector_add" and accepted["mode"] == "test" and accepted["gpu_type"] == "cpu"
        assert accepted["queue_position"] == 1
        # Stored under the Discord member's own row: the one the bot's /submit uses.
        owner = await pool.fetchval(
            "SELECT u.external_id FROM submissions s JOIN users u ON u.id = s.user_id WHERE s.id = $1", accepted["id"]
        )
        assert owner == external_id(int(NELLY.id))

        read = await stack.client.get(f"/api/v1/submissions/{accepted['id']}")
        assert read.status == 200, await read.text()
        view = await read.json()
        assert view["id"] == accepted["id"] and view["status"] == "queued" and view["result"] is None


async def test_the_proxy_refuses_what_it_must_itself_and_nothing_reaches_the_api(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        # Signed out: no route answers anything but a refusal that says to sign in.
        refused = await problem(await client.post("/api/v1/submissions", data=upload()), 401, "signed_out")
        assert "Sign in" in refused["detail"]
        await problem(await client.get("/api/v1/submissions/1"), 401, "signed_out")
        await problem(await client.get("/api/v1/submissions/1/events"), 401, "signed_out")

        session = await sign_in(client, stack.fake, NELLY)
        # Without the CSRF header, or with another's, a signed-in browser's POST is refused: a cross-site form
        # carries the cookie but cannot know the token.
        await problem(await client.post("/api/v1/submissions", data=upload()), 403, "csrf_failed")
        wrong = {"X-CSRF-Token": "0" * 64}
        await problem(await client.post("/api/v1/submissions", data=upload(), headers=wrong), 403, "csrf_failed")
        # A body over the API's own bound is refused before any of it is sent on.
        big = upload(b"#" * (MAX_BODY_BYTES + 1))
        body = await problem(await client.post("/api/v1/submissions", data=big, headers=csrf(session)), 413,
                             "payload_too_large")  # fmt: skip
        assert f"{MAX_BODY_BYTES // 1024} KiB" in body["detail"]
        assert await count(pool) == 0


async def test_the_apis_refusals_reach_the_page_as_they_come(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        session = await sign_in(client, stack.fake, NELLY)
        wrong_extension = upload(name="solution.txt")
        body = await problem(await client.post("/api/v1/submissions", data=wrong_extension, headers=csrf(session)),
                             422, "bad_upload")  # fmt: skip
        assert "solution.txt" in body["detail"] and ".cu or .py" in body["detail"]
        unknown = upload(problem="no_such_problem")
        await problem(await client.post("/api/v1/submissions", data=unknown, headers=csrf(session)), 404,
                      "problem_not_found")  # fmt: skip
        await problem(await client.post("/api/v1/submissions", data=upload(dtype="int4"), headers=csrf(session)),
                      422, "unsupported_dtype")  # fmt: skip
        assert await count(pool) == 0

        # Another user's submission reads as the API says: not found.
        mine = await submit(client, session)
        await client.post("/signout", data={"csrf": session.csrf})
        await sign_in(client, stack.fake, ROY)
        await problem(await client.get(f"/api/v1/submissions/{mine['id']}"), 404, "submission_not_found")
        await problem(await client.get(f"/api/v1/submissions/{mine['id']}/events"), 404, "submission_not_found")


async def test_only_the_allow_list_of_the_api_is_reachable(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        session = await sign_in(client, stack.fake, NELLY)
        mine = await submit(client, session)
        # Each of these the API answers for this token; through the web, none is there.
        for path in (
            f"/api/v1/submissions/{mine['id']}/code",
            "/api/v1/submissions",
            "/api/v1/me/quota",
            "/api/v1/problems",
        ):
            assert (await client.get(path)).status in (404, 405), path  # 405: only POST is proxied there
            direct = await stack.api.get(path[len("/api") :], headers={"Authorization": f"Bearer {session.token}"})
            assert direct.status == 200, (path, direct.status)
        # Nor does the API's sign-out, nor a method the allow-list does not name.
        assert (await client.delete("/api/v1/sessions/current", headers=csrf(session))).status == 404
        assert (await client.delete(f"/api/v1/submissions/{mine['id']}", headers=csrf(session))).status == 405
        # The session still works: the sign-out above never reached the API.
        assert (await client.get(f"/api/v1/submissions/{mine['id']}")).status == 200


async def test_the_events_stream_through_as_they_come_and_resume_after_the_last_id(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        client = stack.client
        session = await sign_in(client, stack.fake, NELLY)
        accepted = await submit(client, session)
        sub_id = accepted["id"]
        job = (await jobs.jobs_of(pool, sub_id))[0]

        first = await client.get(f"/api/v1/submissions/{sub_id}/events")
        assert first.headers["Cache-Control"] == "no-store"
        head = await read_events(first, 1)
        assert [(i, e["type"], e["position"]) for i, e in head] == [("0", "submitted", 1)]
        # A move made while the stream is open reaches the browser through the proxy, not at the end.
        lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
        assert lease is not None
        head += await read_events(first, 1)
        assert head[-1][1]["type"] == "dispatched" and head[-1][1]["runner"] == "runner-a"
        first.close()

        assert await jobs.set_running(pool, lease)
        spec = await jobs.job_spec(pool, job.id)
        assert spec is not None
        assert await record_result(pool, lease, result_for(spec, 2.5), "runner-a")

        resumed = await client.get(f"/api/v1/submissions/{sub_id}/events", headers={"Last-Event-ID": head[-1][0] or ""})
        rest = await read_events(resumed)
        assert [e["type"] for _, e in rest] == ["running", "result"]
        final = rest[-1][1]
        assert final["state"] == "done" and final["result"]["status"] == "passed"
        ids = [int(i) for i, _ in head + rest if i is not None]
        moves = await pool.fetch("SELECT id FROM job_transitions WHERE job_id = $1 ORDER BY id", job.id)
        assert ids == [0, *(m["id"] for m in moves)], "every kept event once, in order"
        # `?after=` resumes too (a client that cannot set the header); after the result, nothing is left.
        after_end = await client.get(f"/api/v1/submissions/{sub_id}/events", params={"after": rest[-1][0] or ""})
        assert await read_events(after_end) == []


async def test_the_api_out_of_reach_is_a_problem_that_says_so(
    pool: asyncpg.Pool,  # noqa: F811
    db_dsn: str,  # noqa: F811
) -> None:
    await add_problems(pool)
    async with signin_stack(pool, db_dsn) as stack:
        session = await sign_in(stack.client, stack.fake, NELLY)
        await stack.api.close()  # the API service stops; the web still holds the session
        body = await problem(
            await stack.client.post("/api/v1/submissions", data=upload(), headers=csrf(session)), 503, "unavailable"
        )
        assert "did not answer" in body["detail"]
