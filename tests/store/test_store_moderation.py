"""Moderator actions: audited, refused when they do not apply, and never deleting a submission."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from core.errors import (
    ModerationError,
    ProblemExistsError,
    SubmissionNotFoundError,
    UnknownProblemError,
    UserNotFoundError,
)
from core.moderation import (
    ban_user,
    create_problem,
    invalidate_submission,
    replace_problem,
    rerun_submission,
    set_problem_enabled,
    unban_user,
)
from core.problems import ProblemSpec
from core.store import jobs, moderation
from core.submit.intake import submit
from tests.store.store_helpers import MOD, ROOMY, VECTOR_ADD, add_problems, count, request, submission, submit_scored


async def test_every_moderator_action_is_in_the_audit_log(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit_scored(pool, "alice", 10.0)
    await ban_user(pool, MOD, "discord:alice", "spam")
    await unban_user(pool, MOD, "discord:alice", "appeal accepted")
    await invalidate_submission(pool, MOD, receipt.submission_id, "cheat")
    await rerun_submission(pool, MOD, receipt.submission_id)
    await set_problem_enabled(pool, MOD, "vector_add", False)
    await replace_problem(pool, MOD, "vector_add", source=None, dtypes=["float32"])
    entries = await moderation.audit_log(pool)
    assert [e.action for e in reversed(entries)] == [
        "ban",
        "unban",
        "invalidate",
        "rerun",
        "problem_disable",
        "problem_replace",
    ]
    mod_id = await pool.fetchval("SELECT id FROM users WHERE external_id = $1", MOD.external_id)
    assert {e.actor_id for e in entries} == {mod_id}
    assert entries[-1].reason == "spam" and entries[0].details == {"from_version": 1, "to_version": 2}
    on_submission = await moderation.audit_log(pool, target=f"submission:{receipt.submission_id}")
    assert [e.action for e in on_submission] == ["rerun", "invalidate"]


async def test_banning_twice_or_unbanning_an_unbanned_user_is_refused(pool: asyncpg.Pool):
    await add_problems(pool)
    await submit(pool, request("alice"), ROOMY)
    await ban_user(pool, MOD, "discord:alice", "spam")
    with pytest.raises(ModerationError, match="banned already"):
        await ban_user(pool, MOD, "discord:alice", "again")
    await unban_user(pool, MOD, "discord:alice")
    with pytest.raises(ModerationError, match="is not banned"):
        await unban_user(pool, MOD, "discord:alice")
    with pytest.raises(UserNotFoundError):
        await ban_user(pool, MOD, "discord:nobody", "spam")
    assert await count(pool, "bans") == 1, "the lifted ban stays on record"


async def test_invalidation_keeps_the_submission_and_cannot_be_repeated(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit_scored(pool, "alice", 10.0)
    await invalidate_submission(pool, MOD, receipt.submission_id, "cheat")
    with pytest.raises(ModerationError, match="invalidated already"):
        await invalidate_submission(pool, MOD, receipt.submission_id, "cheat")
    kept = await submission(pool, receipt.submission_id)
    assert kept.invalidated and kept.status == "passed"
    assert await moderation.invalidation_reason(pool, receipt.submission_id) == "cheat"
    with pytest.raises(SubmissionNotFoundError, match="no submission #999"):
        await invalidate_submission(pool, MOD, 999, "cheat")


async def test_a_rerun_is_refused_while_the_submission_has_a_live_job(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit(pool, request("alice"), ROOMY)
    with pytest.raises(ModerationError, match="already has job"):
        await rerun_submission(pool, MOD, receipt.submission_id)
    assert len(await jobs.jobs_of(pool, receipt.submission_id)) == 1


async def test_a_rerun_queues_a_new_job_and_resets_the_verdict(pool: asyncpg.Pool):
    await add_problems(pool)
    receipt = await submit_scored(pool, "alice", 10.0)
    job_id = await rerun_submission(pool, MOD, receipt.submission_id)
    history = await jobs.jobs_of(pool, receipt.submission_id)
    assert [(j.id, j.state) for j in history] == [(receipt.job_id, "done"), (job_id, "queued")]
    again = await submission(pool, receipt.submission_id)
    assert (again.status, again.score) == ("queued", None)


async def test_problems_are_created_once_and_replaced_with_numbered_versions(pool: asyncpg.Pool):
    spec = ProblemSpec("softmax", "Softmax", 1, ("float32",), source="class Softmax: ...")
    created = await create_problem(pool, MOD, spec)
    assert (created.slug, created.version, created.enabled, created.source) == ("softmax", 1, True, spec.source)
    with pytest.raises(ProblemExistsError, match="exists already"):
        await create_problem(pool, MOD, spec)
    v2 = await replace_problem(pool, MOD, "softmax", source="class Softmax2: ...", dtypes=["float32", "float16"])
    v3 = await replace_problem(pool, MOD, "softmax", source="class Softmax3: ...", dtypes=["float32"])
    assert (v2.version, v2.dtypes, v3.version, v3.current_version) == (2, ("float32", "float16"), 3, 3)
    with pytest.raises(UnknownProblemError, match="softmx"):
        await replace_problem(pool, MOD, "softmx", source=None, dtypes=["float32"])


async def test_registering_built_in_problems_follows_the_codes_version(pool: asyncpg.Pool):
    (v1,) = await add_problems(pool, VECTOR_ADD)
    (same,) = await add_problems(pool, VECTOR_ADD)
    assert same.version == v1.version == 1
    newer = ProblemSpec(VECTOR_ADD.slug, VECTOR_ADD.title, 2, VECTOR_ADD.dtypes)
    (v2,) = await add_problems(pool, newer)
    assert v2.version == 2
    (kept,) = await add_problems(pool, VECTOR_ADD)
    assert kept.version == 2, "an older build must not roll the problem back"


async def test_processes_registering_one_new_problem_at_once_all_succeed(pool: asyncpg.Pool):
    from core.problems import sync_problem

    registered = await asyncio.gather(*(sync_problem(pool, VECTOR_ADD) for _ in range(8)))
    assert {p.problem_id for p in registered} == {registered[0].problem_id}
    assert await count(pool, "problems") == 1
