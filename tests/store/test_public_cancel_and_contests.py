"""The public API's contest line and cancel, over real HTTP and the real store, each answer checked against the
OpenAPI document: a ranked run made before a contest's start hears at once (the 202) and with its result
(GET /v1/submissions/{id}) that it counts for nothing there, and why; a run that is not ranked says nothing of
contests; the author withdraws a waiting submission with DELETE, which ends its job and its stream; another user,
a read-only token and a finished submission are refused with their stable codes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from aiohttp.test_utils import TestClient, TestServer

from api import public_events
from api.app import create_app
from api.settings import ApiSettings
from core import fleet
from core.contests import ContestDraft, create_contest
from core.results import record_result
from core.settings import Settings
from core.store import jobs
from core.submit.events import FollowPace
from tests.store.store_helpers import GPUS, MOD, ROOMY, add_problems, result_for
from tests.store.test_public_submissions import bearer, checked, read_events, submit

ONE = "/v1/submissions/{submission_id}"


@pytest.fixture
async def client(pool: asyncpg.Pool) -> AsyncIterator[TestClient]:
    await add_problems(pool)
    await fleet.create_join_token(pool, "cpu", lifetime=timedelta(hours=1))  # the pool `cpu` exists
    app = create_app(pool, ApiSettings(dispatch=False, arena=Settings(rate=ROOMY)))
    app[public_events.PACE] = FollowPace(poll_s=0.05, place_every_s=0.1)
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


async def sprint_starting_in(pool: asyncpg.Pool, delay: timedelta) -> datetime:
    now = datetime.now(UTC)
    start = now + delay
    draft = ContestDraft(
        "sprint", "The sprint", start, start + timedelta(hours=1), ("vector_add",), (("cpu", "float32"),)
    )
    await create_contest(pool, MOD, draft, now=now, gpus=GPUS)
    return start


async def test_a_ranked_run_before_the_start_says_so_at_once_and_with_its_result(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    await sprint_starting_in(pool, timedelta(hours=2))
    alice = await bearer(pool)
    accepted = await submit(client, alice, mode="ranked")
    receipt = accepted["contests"]
    assert receipt["counts_for"] == [] and [e["status"] for e in receipt["entries"]] == ["not_started"]
    assert receipt["line"].startswith("this run counts for no contest: `sprint` starts in 1 h 59 min") or receipt[
        "line"
    ].startswith("this run counts for no contest: `sprint` starts in 2 h"), receipt["line"]

    job = (await jobs.jobs_of(pool, accepted["id"]))[0]
    lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
    assert lease is not None and await jobs.set_running(pool, lease)
    spec = await jobs.job_spec(pool, job.id)
    assert spec is not None and await record_result(pool, lease, result_for(spec, 2.5), "runner-a")
    view = await checked(await client.get(f"/v1/submissions/{accepted['id']}", headers=alice), ONE)
    assert view["status"] == "passed" and view["contests"]["counts_for"] == []
    assert "made" in view["contests"]["line"] or "starts in" in view["contests"]["line"]

    # Not ranked: nothing to say of contests, in the 202 and in the view.
    practice = await submit(client, alice, mode="benchmark")
    assert practice["contests"] is None
    again = await checked(await client.get(f"/v1/submissions/{practice['id']}", headers=alice), ONE)
    assert again["contests"] is None


async def test_the_author_cancels_a_waiting_submission_and_its_stream_ends(
    client: TestClient, pool: asyncpg.Pool
) -> None:
    alice = await bearer(pool)
    accepted = await submit(client, alice)
    stream = await client.get(accepted["events"], headers=alice)
    assert [e["type"] for _, e in await read_events(stream, 1)] == ["submitted"]

    # Someone else, and the author's read-only token, may not; neither changes anything.
    bob = await client.delete(f"/v1/submissions/{accepted['id']}", headers=await bearer(pool, "bob"))
    assert bob.status == 404 and (await checked(bob, ONE, "delete"))["code"] == "submission_not_found"
    reader = await client.delete(f"/v1/submissions/{accepted['id']}", headers=await bearer(pool, "alice", "read"))
    assert reader.status == 403 and (await checked(reader, ONE, "delete"))["code"] == "insufficient_scope"
    assert (await jobs.jobs_of(pool, accepted["id"]))[0].state == "queued"

    cancelled = await client.delete(f"/v1/submissions/{accepted['id']}", headers=alice)
    assert cancelled.status == 200, await cancelled.text()
    assert await checked(cancelled, ONE, "delete") == {"id": accepted["id"], "cancelled": True, "status": "failed"}
    [job] = await jobs.jobs_of(pool, accepted["id"])
    assert job.state == "failed"
    assert await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a") is None, "no dispatcher runs it"

    # The open stream ends with the result: failed, error code `cancelled`.
    rest = await read_events(stream)
    final = rest[-1][1]
    assert final["type"] == "result" and final["state"] == "failed"
    assert final["result"]["error"]["code"] == "cancelled"

    # Cancelling again: it has finished.
    twice = await client.delete(f"/v1/submissions/{accepted['id']}", headers=alice)
    assert twice.status == 409 and (await checked(twice, ONE, "delete"))["code"] == "submission_finished"
    view = await checked(await client.get(f"/v1/submissions/{accepted['id']}", headers=alice), ONE)
    assert view["status"] == "failed" and view["error_code"] == "cancelled"
