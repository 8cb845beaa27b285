"""`SubmitBatcher`: concurrent submissions stored together, each caller answered as if it had submitted alone."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from core.errors import BannedError, RateLimitedError, UnknownProblemError
from core.moderation import ban_user
from core.settings import RateLimitSettings
from core.store import jobs
from core.submit.batch import SubmitBatcher
from core.submit.intake import SubmitReceipt, SubmitRequest
from tests.store.store_helpers import MOD, ROOMY, add_problems, count, request, submission

ONE_RANKED = RateLimitSettings(ranked_burst=1, ranked_per_hour=1)


async def submit_together(batcher: SubmitBatcher, *requests: SubmitRequest) -> list[SubmitReceipt | BaseException]:
    """The requests sent at once. With one batch at a time, the first goes alone and the rest wait for it, and are
    then stored as one batch."""
    return await asyncio.gather(*(batcher.submit(r) for r in requests), return_exceptions=True)


def receipts(outcomes: list[SubmitReceipt | BaseException]) -> list[SubmitReceipt]:
    assert all(isinstance(o, SubmitReceipt) for o in outcomes), outcomes
    return [o for o in outcomes if isinstance(o, SubmitReceipt)]


async def test_concurrent_submissions_are_stored_in_batches_and_each_caller_gets_its_own_receipt(
    pool: asyncpg.Pool,
):
    await add_problems(pool)
    batcher = SubmitBatcher(pool, ROOMY, max_in_flight=1)
    users = [f"user{i}" for i in range(20)]
    modes = ["test", "benchmark", "ranked", "benchmark"]
    sent = [request(u, mode=modes[i % 4], gpu=("h100", "a100")[i % 2]) for i, u in enumerate(users)]
    got = receipts(await submit_together(batcher, *sent))
    assert batcher.sizes == {1: 1, 19: 1}
    for req, receipt in zip(sent, got, strict=True):
        stored = await submission(pool, receipt.submission_id)
        user = await pool.fetchval("SELECT external_id FROM users WHERE id = $1", stored.user_id)
        assert (user, stored.mode, stored.gpu_type) == (req.user_external_id, req.mode, req.gpu_type)
        job = await jobs.get_job(pool, receipt.job_id)
        assert job is not None and job.submission_id == receipt.submission_id and job.state == "queued"
    assert await count(pool, "submissions") == await count(pool, "jobs") == 20
    # Each receipt's place is the job's place as the queue stands once the whole batch is stored (nothing was
    # dispatched since): every job of a pool has its own.
    for gpu in ("h100", "a100"):
        mine = [r for r, req in zip(got, sent, strict=True) if req.gpu_type == gpu]
        now = [await jobs.queue_position(pool, r.job_id) for r in mine]
        assert sorted(now) == list(range(1, len(mine) + 1))
        assert [r.queue_position for r in mine[1:]] == now[1:]


async def test_a_lone_submission_is_stored_at_once_in_a_batch_of_its_own(pool: asyncpg.Pool):
    await add_problems(pool)
    batcher = SubmitBatcher(pool, ROOMY)
    first = await batcher.submit(request("alice"))
    second = await batcher.submit(request("bob"))
    assert batcher.sizes == {1: 2}
    assert (first.queue_position, second.queue_position) == (1, 2)


async def test_two_services_batches_of_the_same_users_in_opposite_orders_store_every_request(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
):
    await add_problems(pool)
    # Two API replicas: each batch takes the users' buckets and counts their waiting jobs; rows written in the
    # order the requests came would have each batch hold a row the other waits for.
    east, west = SubmitBatcher(pool, ROOMY, max_in_flight=1), SubmitBatcher(pool, ROOMY, max_in_flight=1)
    users = [f"user{i}" for i in range(30)]
    for _ in range(5):
        outcomes = await asyncio.gather(
            submit_together(east, *(request(u, gpu="h100") for u in users)),
            submit_together(west, *(request(u, gpu="h100") for u in reversed(users))),
        )
        assert len(receipts(outcomes[0] + outcomes[1])) == 60
    assert await count(pool, "submissions") == await count(pool, "jobs") == 300
    assert await pool.fetchval("SELECT sum(queued) FROM queue_waiters") == 300
    # None waited for the other's rows in a circle: no batch was broken up for a deadlock.
    assert not [r for r in caplog.records if "failed together" in r.getMessage()]


async def test_one_users_requests_in_one_batch_take_their_tokens_in_turn(pool: asyncpg.Pool):
    await add_problems(pool)
    batcher = SubmitBatcher(pool, ONE_RANKED, max_in_flight=1)
    outcomes = await submit_together(batcher, request("first"), request("alice"), request("alice"), request("bob"))
    assert batcher.sizes == {1: 1, 3: 1}
    assert isinstance(outcomes[1], SubmitReceipt) and isinstance(outcomes[3], SubmitReceipt)
    # Alice's bucket held one token: her second request is refused, and nothing of it is stored.
    assert isinstance(outcomes[2], RateLimitedError)
    assert await count(pool, "submissions") == 3


async def test_a_users_two_requests_with_one_token_in_one_batch_store_one_submission(pool: asyncpg.Pool):
    await add_problems(pool)
    batcher = SubmitBatcher(pool, ROOMY, max_in_flight=1)
    retried = request("alice", token="t")
    first, again = receipts((await submit_together(batcher, request("first"), retried, retried))[1:])
    assert again.submission_id == first.submission_id and again.duplicate and not first.duplicate
    assert await count(pool, "submissions") == 2
    # The repeat gave back the token it took.
    tokens = await pool.fetchval(
        "SELECT tokens FROM rate_limits r JOIN users u ON u.id = r.user_id WHERE u.external_id = 'discord:alice'"
    )
    assert tokens == pytest.approx(ROOMY.ranked_burst - 1, abs=0.01)


async def test_a_request_the_checks_refuse_fails_alone_and_its_batch_is_stored(pool: asyncpg.Pool):
    await add_problems(pool)
    batcher = SubmitBatcher(pool, ROOMY, max_in_flight=1)
    await batcher.submit(request("mallory"))
    await ban_user(pool, MOD, "discord:mallory", "spam")
    outcomes = await submit_together(
        batcher,
        request("first"),
        request("alice"),
        request("mallory"),
        request("bob", slug="no_such_problem"),
        request("carol"),
    )
    assert isinstance(outcomes[2], BannedError)
    assert isinstance(outcomes[3], UnknownProblemError)
    assert all(isinstance(outcomes[i], SubmitReceipt) for i in (0, 1, 4))
    assert await count(pool, "submissions") == 1 + 3


async def test_a_row_the_store_refuses_fails_alone_and_the_rest_of_its_batch_is_stored(pool: asyncpg.Pool):
    await add_problems(pool)
    # A fault of one row that no check before the insert can see: the whole statement fails, so the batch's rows
    # are stored again one at a time.
    await pool.execute(
        """CREATE FUNCTION refuse_bobs() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF NEW.user_id = (SELECT id FROM users WHERE external_id = 'discord:bob') THEN
               RAISE EXCEPTION 'refused for the test';
             END IF;
             RETURN NEW;
           END $$;
           CREATE TRIGGER refuse_bobs BEFORE INSERT ON submissions FOR EACH ROW EXECUTE FUNCTION refuse_bobs();"""
    )
    await pool.execute("INSERT INTO users (external_id, display_name) VALUES ('discord:bob', 'bob')")
    batcher = SubmitBatcher(pool, ROOMY, max_in_flight=1)
    outcomes = await submit_together(batcher, request("first"), request("alice"), request("bob"), request("carol"))
    assert batcher.sizes == {1: 1, 3: 1}
    assert isinstance(outcomes[2], asyncpg.RaiseError)
    stored = receipts([outcomes[i] for i in (0, 1, 3)])
    assert await count(pool, "submissions") == await count(pool, "jobs") == 3
    assert len({r.submission_id for r in stored}) == 3
    # Bob's failed statement took no token of his; the others' were each taken once.
    taken = dict(
        await pool.fetch(
            "SELECT u.display_name, r.tokens FROM rate_limits r JOIN users u ON u.id = r.user_id ORDER BY 1"
        )
    )
    assert set(taken) == {"first", "alice", "carol"}
    assert all(t == pytest.approx(ROOMY.ranked_burst - 1, abs=0.01) for t in taken.values())


async def test_closing_waits_for_the_batch_being_stored(pool: asyncpg.Pool):
    await add_problems(pool)
    batcher = SubmitBatcher(pool, ROOMY)
    sent = asyncio.gather(*(batcher.submit(request(f"user{i}")) for i in range(5)))
    await asyncio.sleep(0)  # the requests are with the batcher
    await batcher.close()
    assert await count(pool, "submissions") == 5
    assert len(receipts(list(await sent))) == 5
