"""`submit`: validation, one transaction for submission and job, idempotency, and concurrency."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from core.errors import (
    BadUploadError,
    BannedError,
    IdempotencyConflictError,
    InvalidSubmissionError,
    ProblemDisabledError,
    UnknownProblemError,
    UnsupportedDtypeError,
)
from core.moderation import ban_user, set_problem_enabled
from core.problems import ProblemSpec
from core.ratelimit import remaining
from core.store import jobs
from core.submit.intake import SubmitReceipt, SubmitRequest, persist_many, submit, validate_options
from core.submit.uploads import check_upload
from tests.store.store_helpers import MOD, ROOMY, add_problems, count, request, submission


async def test_submit_stores_the_submission_and_a_queued_job_before_answering(pool: asyncpg.Pool):
    await add_problems(pool)
    first = await submit(pool, request("alice"), ROOMY)
    second = await submit(pool, request("bob"), ROOMY)
    assert (first.queue_position, second.queue_position) == (1, 2)
    stored = await submission(pool, first.submission_id)
    assert (stored.status, stored.language, stored.mode, stored.gpu_type) == ("queued", "python", "ranked", "h100")
    job = await jobs.get_job(pool, first.job_id)
    assert job is not None and (job.state, job.submission_id, job.attempts) == ("queued", first.submission_id, 0)


async def test_queue_position_counts_only_jobs_for_the_same_gpu_type(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit(pool, request("alice", gpu="h100"), ROOMY)
    other = await submit(pool, request("bob", gpu="a100"), ROOMY)
    assert other.queue_position == 1


async def test_identical_sources_are_stored_once(pool: asyncpg.Pool):
    await add_problems(pool)
    for user in ("alice", "bob", "carol"):
        await submit(pool, request(user, unique=False), ROOMY)
    assert await count(pool, "submissions") == 3
    assert await count(pool, "sources") == 1


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"upload": ("solution.txt", b"x = 1\n")}, BadUploadError, "is not a .cu or .py file"),
        ({"upload": ("solution.py", b"\xff\xfe not utf-8")}, BadUploadError, "is not UTF-8"),
        ({"problem_slug": "vector_ad"}, UnknownProblemError, "Did you mean `vector_add`"),
        ({"dtype": "float16", "problem_slug": "matmul"}, UnsupportedDtypeError, "does not take float16"),
        ({"dtype": "int8"}, UnsupportedDtypeError, "is not a dtype"),
        ({"mode": "fast"}, InvalidSubmissionError, "is not a mode"),
        ({"gpu_type": "H100 SXM"}, InvalidSubmissionError, "is not a GPU type name"),
        ({"profile_case": 3}, InvalidSubmissionError, "only applies to mode `profile`"),
        ({"mode": "profile", "profile_case": -1}, InvalidSubmissionError, "is not a test case index"),
        ({"mode": "profile", "profile_case": 2**31}, InvalidSubmissionError, "is not a test case index"),
        ({"mode": "profile", "gpu_type": "cpu"}, InvalidSubmissionError, "Profiling needs Nsight Compute on a GPU"),
    ],
)
async def test_a_bad_submission_is_refused_with_what_to_fix_and_nothing_is_stored(
    pool: asyncpg.Pool, change: dict[str, object], error: type[Exception], message: str
):
    await add_problems(
        pool,
        ProblemSpec("vector_add", "Vector addition", 1, ("float32",)),
        ProblemSpec("matmul", "Matrix multiplication", 1, ("float32",)),
    )
    base = request("alice")
    with pytest.raises(error, match=message):
        # A bad file is refused where it comes in, by the one check every front end calls before the core.
        if "upload" in change:
            change = {"upload": check_upload(*change["upload"])}
        await submit(pool, SubmitRequest(**{**base.__dict__, **change}), ROOMY)
    assert await count(pool, "submissions") == 0 and await count(pool, "jobs") == 0


async def test_a_disabled_problem_refuses_submissions_until_enabled(pool: asyncpg.Pool):
    await add_problems(pool)
    await set_problem_enabled(pool, MOD, "vector_add", False, "broken reference")
    with pytest.raises(ProblemDisabledError, match="disabled"):
        await submit(pool, request("alice"), ROOMY)
    await set_problem_enabled(pool, MOD, "vector_add", True)
    assert (await submit(pool, request("alice"), ROOMY)).submission_id > 0


async def test_a_banned_user_cannot_submit_and_nothing_is_stored(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit(pool, request("mallory"), ROOMY)
    await ban_user(pool, MOD, "discord:mallory", "timer patching")
    with pytest.raises(BannedError):
        await submit(pool, request("mallory"), ROOMY)
    assert await count(pool, "submissions") == 1


async def test_200_concurrent_submits_are_all_persisted_and_none_duplicated(pool: asyncpg.Pool):
    await add_problems(pool)
    requests = [request(f"user{i % 40}", token=f"interaction-{i}") for i in range(200)]
    receipts = await asyncio.gather(*(submit(pool, r, ROOMY) for r in requests))
    ids = [r.submission_id for r in receipts]
    assert len(set(ids)) == 200 and not any(r.duplicate for r in receipts)
    assert len({r.job_id for r in receipts}) == 200
    assert await count(pool, "submissions") == 200
    rows = await pool.fetch("SELECT submission_id, count(*) AS n FROM jobs GROUP BY submission_id")
    assert {r["submission_id"] for r in rows} == set(ids) and all(r["n"] == 1 for r in rows)
    tokens = await pool.fetch("SELECT client_token FROM submissions")
    assert sorted(r["client_token"] for r in tokens) == sorted(f"interaction-{i}" for i in range(200))
    assert all(1 <= r.queue_position <= 200 for r in receipts)


async def test_concurrent_retries_with_one_token_store_one_submission(pool: asyncpg.Pool):
    await add_problems(pool)
    same = request("alice", token="interaction-42")
    receipts = await asyncio.gather(*(submit(pool, same, ROOMY) for _ in range(30)))
    assert len({r.submission_id for r in receipts}) == 1
    assert len({r.job_id for r in receipts}) == 1
    assert sum(not r.duplicate for r in receipts) == 1
    assert await count(pool, "submissions") == 1 and await count(pool, "jobs") == 1
    user_id = await pool.fetchval("SELECT id FROM users WHERE external_id = 'discord:alice'")
    assert await remaining(pool, user_id, "ranked", ROOMY) == 999, "one submission, one rate-limit token"


async def test_a_retried_submit_does_not_use_up_the_rate_limit(pool: asyncpg.Pool):
    await add_problems(pool)
    from core.settings import RateLimitSettings

    tight = RateLimitSettings(ranked_burst=1, ranked_per_hour=1)
    retried = request("alice", token="t-1")
    first = await submit(pool, retried, tight)
    again = await submit(pool, retried, tight)
    assert again.duplicate and again.submission_id == first.submission_id


async def test_a_token_sent_again_with_another_body_in_the_same_batch_is_refused_and_refunded(pool: asyncpg.Pool):
    """Two requests of one batch under one token, both past the checks before either is stored: the second round's
    insert meets the first's row, and the request that differs is refused instead of answered with that row."""
    await add_problems(pool)
    first = request("alice", token="interaction-7", mode="ranked")
    other = request("alice", token="interaction-7", mode="test")
    async with pool.acquire() as conn:
        validate_options(first)
        validate_options(other)
        stored, refused = await persist_many(conn, [first, other], ROOMY)
    assert isinstance(stored, SubmitReceipt) and not stored.duplicate
    assert isinstance(refused, IdempotencyConflictError)
    assert f"#{stored.submission_id}" in refused.message and "mode" in refused.message and "source" in refused.message
    assert await count(pool, "submissions") == 1 and await count(pool, "jobs") == 1
    user_id = await pool.fetchval("SELECT id FROM users WHERE external_id = 'discord:alice'")
    assert await remaining(pool, user_id, "test", ROOMY) == ROOMY.test_burst, "the refused request's token came back"


async def test_an_upload_is_decoded_once_on_its_way_from_a_front_end_to_the_store(
    pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
):
    """The service's submit (the bot's and the API's one core call) checks and decodes the file once, and the
    ticket's language is that check's: nothing on the way decodes it again."""
    from core.settings import Settings
    from core.submit import uploads
    from core.submit.service import ArenaService

    await add_problems(pool)
    decoded: list[str] = []
    real = uploads._decoded

    def counted(name: str, data: bytes) -> tuple[str, str]:
        decoded.append(name)
        return real(name, data)

    monkeypatch.setattr(uploads, "_decoded", counted)
    service = ArenaService(pool, Settings(rate=ROOMY), lambda: ["h100"])
    source = b"import triton\n\ndef solution(a, b, c, n):\n    pass\n"
    ticket = await service.submit(
        user_external_id="discord:alice",
        user_name="alice",
        slug="vector_add",
        file_name="dir/kernel.py",
        data=source,
        dtype="float32",
        mode="test",
        gpu=None,
        client_token=None,
    )
    assert decoded == ["kernel.py"]
    assert (ticket.file_name, ticket.language) == ("kernel.py", "triton")
    stored = await submission(pool, ticket.receipt.submission_id)
    assert (stored.file_name, stored.language) == ("kernel.py", "triton")
