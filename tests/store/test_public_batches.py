"""Batches over real HTTP (aiohttp's test server, the real store), each answer checked against the OpenAPI document:
three variants sent at once, each its own submission and job; the table that ranks them once their results are in;
one event stream for the batch, resumed after a dropped connection with the stream's own cursor; and the refusals:
too many files, a name twice, a quota that cannot hold them all, another user's batch, a retry with the same key."""

from __future__ import annotations

import aiohttp
import asyncpg
from aiohttp.test_utils import TestClient

from core.results import record_result
from core.store import jobs
from tests.store.sse_frames import read_frames
from tests.store.store_helpers import result_for
from tests.store.test_public_submissions import SOURCE, bearer, check, checked, client  # noqa: F401

BATCHES = "/v1/submissions/batches"
BATCH = "/v1/submissions/batches/{batch_id}"
EVENTS = "/v1/submissions/batches/{batch_id}/events"


def variants(*names: str, mode: str = "benchmark", **fields: str) -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("problem", "vector_add")
    form.add_field("mode", mode)
    for key, value in fields.items():
        form.add_field(key, value)
    for name in names:
        form.add_field("file", SOURCE + f"# {name}\n".encode(), filename=name, content_type="text/x-python")
    return form


async def finish(pool: asyncpg.Pool, submission_id: int, score: float | None, status: str = "passed") -> None:
    job = (await jobs.jobs_of(pool, submission_id))[0]
    lease = await jobs.claim_job(pool, job.id, "test-owner", 30.0, "runner-a")
    assert lease is not None and await jobs.set_running(pool, lease)
    spec = await jobs.job_spec(pool, job.id)
    assert spec is not None and await record_result(pool, lease, result_for(spec, score, status), "runner-a")


async def test_a_batch_of_three_is_three_submissions_ranked_in_one_table(
    client: TestClient,  # noqa: F811
    pool: asyncpg.Pool,
) -> None:
    alice = await bearer(pool)
    response = await client.post(BATCHES, data=variants("tile16.py", "tile32.py", "tile64.py"), headers=alice)
    assert response.status == 202, await response.text()
    accepted = await checked(response, BATCHES, "post")
    ids = [v["id"] for v in accepted["variants"]]
    assert [v["file_name"] for v in accepted["variants"]] == ["tile16.py", "tile32.py", "tile64.py"]
    assert len(set(ids)) == 3 and [v["queue_position"] for v in accepted["variants"]] == [1, 2, 3]
    assert response.headers["Location"] == accepted["status"] == f"{BATCHES}/{accepted['id']}"
    for sub_id in ids:  # each its own job, and its own charge on alice's benchmark bucket (6 at once)
        assert len(await jobs.jobs_of(pool, sub_id)) == 1
    assert await pool.fetchval("SELECT tokens FROM rate_limits WHERE mode = 'benchmark'") < 4

    queued = await checked(await client.get(accepted["status"], headers=alice), BATCH)
    assert queued["state"] == "queued" and queued["counts"] == {"queued": 3}

    # The stream: the three `submitted` events, then the connection drops.
    first = await client.get(accepted["events"], headers=alice)
    head = await read_frames(first, 3)
    assert sorted(data["submission_id"] for _, _, data in head) == sorted(ids)
    assert all(event == "submitted" for _, event, _ in head)
    for _, _, data in head:
        check("/v1/submissions/{submission_id}/events", "get", 200, "text/event-stream", data)
    first.close()

    await finish(pool, ids[0], 2.0)
    await finish(pool, ids[1], 5.0)
    await finish(pool, ids[2], None, "failed")

    # Resumed with the last id it had: the rest of every variant's events, once each, then the table.
    rest = await read_frames(await client.get(accepted["events"], headers={**alice, "Last-Event-ID": head[-1][0]}))
    assert rest[-1][1] == "batch"
    moves = [(d["submission_id"], d["type"]) for _, _, d in rest[:-1]]
    assert sorted(moves) == sorted((s, t) for s in ids for t in ("dispatched", "running", "result"))
    table = rest[-1][2]
    check(BATCH, "get", 200, "application/json", table)
    assert table["state"] == "done" and table["counts"] == {"passed": 2, "failed": 1}
    assert [(v["rank"], v["submission"]["file_name"]) for v in table["variants"]] == [
        (1, "tile32.py"),
        (2, "tile16.py"),
        (None, "tile64.py"),
    ]
    assert table == await checked(await client.get(accepted["status"], headers=alice), BATCH)

    # After the end, a resume gives only the table again.
    again = await read_frames(await client.get(accepted["events"], headers={**alice, "Last-Event-ID": rest[-2][0]}))
    assert [event for _, event, _ in again] == ["batch"]


async def test_a_retry_with_the_same_key_answers_the_first_batch(
    client: TestClient,  # noqa: F811
    pool: asyncpg.Pool,
) -> None:
    alice = {**await bearer(pool), "Idempotency-Key": "sweep-1"}
    first = await checked(await client.post(BATCHES, data=variants("a.py", "b.py"), headers=alice), BATCHES, "post")
    second = await client.post(BATCHES, data=variants("a.py", "b.py"), headers=alice)
    assert second.status == 202
    again = await second.json()
    assert again["id"] == first["id"] and all(v["duplicate"] for v in again["variants"])
    assert [v["id"] for v in again["variants"]] == [v["id"] for v in first["variants"]]
    assert await pool.fetchval("SELECT count(*) FROM submissions") == 2


async def test_a_batch_that_cannot_be_sent_whole_is_refused_before_anything_is_stored(
    client: TestClient,  # noqa: F811
    pool: asyncpg.Pool,
) -> None:
    alice = await bearer(pool)
    refusals = [
        (variants(*(f"v{i}.py" for i in range(17))), 422, "validation_failed", "at most 16"),
        (variants("same.py", "same.py"), 422, "invalid_option", "name each file differently"),
        (variants("ok.py", "bad.txt"), 422, "bad_upload", ".txt"),
        (variants("a.py", "b.py", "c.py", mode="test"), 429, "rate_limited", "needs 3 test submissions"),
        (variants("a.py", mode="profile"), 422, "validation_failed", "not profiled"),
    ]
    for form, status, code, words in refusals:
        response = await client.post(BATCHES, data=form, headers=alice)
        body = await checked(response, BATCHES, "post")
        assert (response.status, body["code"]) == (status, code), body
        assert words in body["detail"], body
    assert await pool.fetchval("SELECT count(*) FROM submissions") == 0


async def test_another_users_batch_reads_as_not_found(client: TestClient, pool: asyncpg.Pool) -> None:  # noqa: F811
    alice, bob = await bearer(pool), await bearer(pool, "bob")
    made = await checked(await client.post(BATCHES, data=variants("a.py"), headers=alice), BATCHES, "post")
    for path in (made["status"], made["events"], f"{BATCHES}/999999", f"{BATCHES}/x1"):
        response = await client.get(path, headers=bob)
        assert response.status == 404 and (await response.json())["code"] == "submission_not_found"
    bad_cursor = await client.get(made["events"], headers={**alice, "Last-Event-ID": "12:zz"})
    assert bad_cursor.status == 422 and (await bad_cursor.json())["code"] == "invalid_option"
