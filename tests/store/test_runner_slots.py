"""A runner's slots are counted in the store (V016 `runner_has_room`), so that dispatchers of several API replicas,
each with its own view of the fleet, never send a runner more jobs at once than it has slots."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import asyncpg

from contract.wire import RunnerJoinRequest
from core import fleet
from core.dispatch import RunnerPool
from core.fleet import FleetSettings
from core.store import fleet as fleet_store
from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, ScriptedRunner, add_problems, request

LEASE_S = 60.0


async def _runner(pool: asyncpg.Pool, name: str, slots: int) -> None:
    made = await fleet.create_join_token(pool, "h100", lifetime=timedelta(hours=1))
    answer = await fleet.join(pool, RunnerJoinRequest(token=made.token, name=name), FleetSettings())
    await fleet_store.register(pool, answer.runner_id, f"http://127.0.0.1:1/{name}", slots, {})


async def _queue(pool: asyncpg.Pool, count: int) -> list[int]:
    return [(await submit(pool, request(f"user{i}"), ROOMY)).job_id for i in range(count)]


async def test_a_runner_full_by_another_dispatchers_jobs_gets_no_claim(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _runner(pool, "box-1", slots=2)
    await _queue(pool, 3)
    first = await jobs.claim_next(pool, "h100", "api-a", LEASE_S, "box-1")
    second = await jobs.claim_next(pool, "h100", "api-b", LEASE_S, "box-1")
    assert first is not None and second is not None
    assert await jobs.runner_has_room(pool, "box-1") is False
    # A third dispatcher, whose own count says box-1 is free, finds it full: the third job stays queued.
    assert await jobs.claim_next(pool, "h100", "api-c", LEASE_S, "box-1") is None
    assert await pool.fetchval("SELECT count(*) FROM jobs WHERE state = 'queued'") == 1
    # A job that ends frees its slot for whichever dispatcher claims next.
    assert await jobs.finish(pool, first, "done")
    assert await jobs.runner_has_room(pool, "box-1") is True
    assert await jobs.claim_next(pool, "h100", "api-c", LEASE_S, "box-1") is not None


async def test_a_claim_that_finds_nothing_says_whether_the_runner_was_full_or_the_queue_empty(
    pool: asyncpg.Pool,
) -> None:
    await add_problems(pool)
    await _runner(pool, "box-1", slots=1)
    empty = await jobs.claim_for_runner(pool, "h100", "api-a", LEASE_S, "box-1")
    assert empty.lease is None and not empty.full
    await _queue(pool, 2)
    taken = await jobs.claim_for_runner(pool, "h100", "api-a", LEASE_S, "box-1")
    assert taken.lease is not None and not taken.full
    assert taken.lease.runner == "box-1" and taken.lease.state == "dispatched"
    assert taken.spec is not None and taken.spec == await jobs.job_spec(pool, taken.lease.job_id), (
        "the claim reads what the runner is sent"
    )
    assert empty.spec is None
    # Another dispatcher's claim: a job is queued, but box-1's one slot is taken.
    refused = await jobs.claim_for_runner(pool, "h100", "api-b", LEASE_S, "box-1")
    assert refused.lease is None and refused.full
    assert await pool.fetchval("SELECT count(*) FROM jobs WHERE state = 'queued'") == 1


async def test_concurrent_claims_for_a_one_slot_runner_send_it_one_job(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _runner(pool, "box-1", slots=1)
    await _queue(pool, 6)
    leases = await asyncio.gather(*(jobs.claim_next(pool, "h100", f"api-{i}", LEASE_S, "box-1") for i in range(6)))
    assert sum(lease is not None for lease in leases) == 1
    assert await fleet_store.in_flight_on(pool, "box-1") == 1


async def test_a_runner_the_fleet_does_not_list_is_left_to_its_dispatcher(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _queue(pool, 3)
    # The local runner of a bot or the CLI: its one dispatcher counts its slots.
    leases = [await jobs.claim_next(pool, "h100", "bot", LEASE_S, "local") for _ in range(3)]
    assert all(lease is not None for lease in leases)
    assert await jobs.runner_has_room(pool, "local") is True


async def test_a_runner_that_left_has_no_room_counted_for_its_old_row(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _runner(pool, "box-1", slots=1)
    await _queue(pool, 2)
    assert await jobs.claim_next(pool, "h100", "api-a", LEASE_S, "box-1") is not None
    row = await fleet_store.find_runner(pool, "box-1")
    assert row is not None
    await fleet_store.set_state(pool, row.id, "left")
    # Joined again under the same name, with the first job still in flight on the machine: still full.
    await _runner(pool, "box-1", slots=1)
    assert await jobs.claim_next(pool, "h100", "api-b", LEASE_S, "box-1") is None


async def _never(key: str, request: object) -> object:
    raise AssertionError("no job runs in this test")


def test_a_dispatchers_pool_leaves_out_the_slots_other_dispatchers_fill() -> None:
    a, b = ScriptedRunner("box-a", _never, slots=2), ScriptedRunner("box-b", _never, slots=1)  # type: ignore[arg-type]
    pool = RunnerPool()
    pool.update([a, b], in_flight={"box-a": 2, "box-b": 0})
    # box-a's two slots run other dispatchers' jobs: only box-b is offered, once.
    assert pool.acquire("h100") is b
    assert pool.acquire("h100") is None
    # The next view of the store finds one of box-a's jobs done.
    pool.update([a, b], in_flight={"box-a": 1, "box-b": 1})
    assert pool.acquire("h100") is a
    assert pool.acquire("h100") is None
    # A claim that finds box-a full after all (its slot taken since the view) marks it until the next view.
    pool.release(a, wake=False)
    pool.mark_full("box-a")
    assert pool.acquire("h100") is None
