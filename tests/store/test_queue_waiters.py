"""The waiting users the fair claim reads (V015 `queue_waiters`): each row counts its user's queued jobs of a mode on
a GPU type through every way a job enters or leaves the queue, and follows the user's turn, so that the claim's
one index probe finds exactly the users whose jobs wait."""

from __future__ import annotations

import asyncpg

from core.store import jobs
from core.submit.intake import submit
from tests.store.store_helpers import ROOMY, add_problems, request

LEASE_S = 60.0


async def _waiting(pool: asyncpg.Pool) -> dict[tuple[str, str], tuple[int, int]]:
    """{(user, mode): (queued, of them re-runs)} of the rows on h100 whose count is above 0."""
    rows = await pool.fetch(
        """SELECT u.external_id, w.mode, w.queued, w.reruns FROM queue_waiters w JOIN users u ON u.id = w.user_id
        WHERE w.gpu_type = 'h100' AND w.queued > 0"""
    )
    return {(r["external_id"].removeprefix("discord:"), r["mode"]): (r["queued"], r["reruns"]) for r in rows}


async def _counted(pool: asyncpg.Pool) -> dict[tuple[str, str], tuple[int, int]]:
    """The same, counted from the queued jobs themselves."""
    rows = await pool.fetch(
        """SELECT u.external_id, j.mode, count(*) AS n, count(*) FILTER (WHERE j.requeued) AS reruns
        FROM jobs j JOIN users u ON u.id = j.user_id
        WHERE j.gpu_type = 'h100' AND j.state = 'queued' GROUP BY u.external_id, j.mode"""
    )
    return {(r["external_id"].removeprefix("discord:"), r["mode"]): (r["n"], r["reruns"]) for r in rows}


async def _queue(pool: asyncpg.Pool, user: str, count: int, mode: str = "ranked") -> list[int]:
    return [(await submit(pool, request(user, mode=mode), ROOMY)).job_id for _ in range(count)]


async def test_the_counts_follow_every_way_in_and_out_of_the_queue(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    await _queue(pool, "ann", 3)
    (bob_test,) = await _queue(pool, "bob", 1, mode="test")
    await _queue(pool, "bob", 2)
    assert await _waiting(pool) == {("ann", "ranked"): (3, 0), ("bob", "test"): (1, 0), ("bob", "ranked"): (2, 0)}

    first = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")  # bob's test run: the mode goes first
    assert first is not None and first.job_id == bob_test
    second = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")
    assert second is not None
    assert await jobs.requeue(pool, second, "runner lost", 0.0)  # back in: counted again
    withdrawn, deleted = await _queue(pool, "cid", 2)
    assert await jobs.withdraw(pool, withdrawn, "cancelled by the user")
    assert await pool.execute("DELETE FROM jobs WHERE id = $1 AND state = 'queued'", deleted) == "DELETE 1"
    # The requeued job is one of bob's or ann's ranked runs, counted as a re-run of its user's.
    waiting = await _waiting(pool)
    assert waiting == await _counted(pool)
    assert {key: queued for key, (queued, _) in waiting.items()} == {("ann", "ranked"): 3, ("bob", "ranked"): 2}
    assert sum(reruns for _, reruns in waiting.values()) == 1
    # Claimed again, the re-run no longer counts; requeued once more, it counts again.
    rerun = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")
    assert rerun is not None and rerun.job_id == second.job_id
    assert sum(reruns for _, reruns in (await _waiting(pool)).values()) == 0
    assert await jobs.requeue(pool, rerun, "runner lost", 0.0)
    assert await _waiting(pool) == await _counted(pool)

    while (lease := await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")) is not None:
        await jobs.finish(pool, lease, "done")
    assert await _waiting(pool) == {}


async def test_a_user_whose_queue_emptied_is_found_again_with_their_turn(pool: asyncpg.Pool) -> None:
    await add_problems(pool)
    (ann,) = await _queue(pool, "ann", 1)
    lease = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")
    assert lease is not None and lease.job_id == ann
    await _queue(pool, "bob", 2)
    (again,) = await _queue(pool, "ann", 1)
    row = await pool.fetchrow(
        """SELECT w.queued, w.turn, w.since, t.turn AS last_turn FROM queue_waiters w
        JOIN queue_turns t ON t.gpu_type = w.gpu_type AND t.user_id = w.user_id
        WHERE w.gpu_type = 'h100' AND w.mode = 'ranked' AND w.user_id = (SELECT user_id FROM jobs WHERE id = $1)""",
        again,
    )
    assert (row["queued"], row["since"], row["turn"]) == (1, again, row["last_turn"])
    # Bob was never served, so his first job goes before ann's second; then ann's, whose turn is older than bob's.
    order = []
    while (lease := await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")) is not None:
        order.append(lease.job_id)
    assert order.index(again) == 1


async def test_each_claim_counts_its_job_out_and_a_fair_claim_turns_every_mode_of_its_user(pool: asyncpg.Pool) -> None:
    # V028: a claim (a move to `dispatched` naming a runner) keeps the rows itself; the triggers keep the rest.
    await add_problems(pool)
    (cli,) = await _queue(pool, "ann", 1, mode="test")
    await _queue(pool, "ann", 2, mode="benchmark")
    stranded, _ = await _queue(pool, "bob", 2)
    assert await jobs.claim_job(pool, cli, "cli", LEASE_S, "local") is not None  # a CLI's own job: no turn
    assert await pool.fetchval("SELECT count(*) FROM queue_turns") == 0
    assert await _waiting(pool) == await _counted(pool)

    lease = await jobs.claim_next(pool, "h100", "d1", LEASE_S, "r1")  # ann's benchmark run: a turn for her
    assert lease is not None and lease.runner == "r1"
    turns = await pool.fetch(
        """SELECT w.mode, w.turn, t.turn AS last FROM queue_waiters w
        JOIN queue_turns t ON t.gpu_type = w.gpu_type AND t.user_id = w.user_id
        WHERE w.gpu_type = 'h100' AND w.user_id = (SELECT user_id FROM jobs WHERE id = $1)""",
        lease.job_id,
    )
    assert sorted(r["mode"] for r in turns) == ["benchmark", "test"]
    assert all(r["turn"] == r["last"] for r in turns), "every mode's row of the user has the new turn"

    # Leased to be failed (no runner answers, no runner named): the trigger counts it out.
    await pool.execute("UPDATE jobs SET created_at = now() - interval '1 hour' WHERE id = $1", stranded)
    failing = await jobs.claim_stranded(pool, "h100", "d1", LEASE_S, 600.0)
    assert stranded in [f.job_id for f in failing]
    assert await _waiting(pool) == await _counted(pool)
