"""Moderator actions. Each runs in one transaction with its audit-log row; nothing is ever deleted.

Who may moderate is the caller's business (a Discord role check); the core records who did what.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import asyncpg

from core.errors import InvalidOptionError, ModerationError, UserNotFoundError
from core.problems import ProblemSpec, require_problem
from core.results import refresh_board
from core.store import jobs, leaderboard, moderation, problems, submissions, users
from core.store.moderation import AuditEntry, Ban
from core.store.pool import Conn
from core.submit.intake import get_submission

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Actor:
    """The moderator acting, as `core.store.users` keys them."""

    external_id: str
    display_name: str


async def _actor_id(conn: Conn, actor: Actor) -> int:
    return (await users.ensure_user(conn, actor.external_id, actor.display_name)).id


async def _target_user(conn: Conn, external_id: str) -> users.User:
    user = await users.find_user(conn, external_id)
    if user is None:
        raise UserNotFoundError(f"No user `{external_id}` has ever submitted; check the id.")
    return user


async def ban_user(pool: asyncpg.Pool, actor: Actor, external_id: str, reason: str) -> Ban:
    """Stop a user from submitting and hide them from every board (their submissions stay)."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        user = await _target_user(conn, external_id)
        ban = await moderation.insert_ban(conn, user.id, reason, actor_id)
        await leaderboard.refresh_user_everywhere(conn, user.id)
        await moderation.audit(conn, actor_id, "ban", f"user:{user.id}", reason, {"external_id": external_id})
    log.info("user %d banned by %d: %s", user.id, actor_id, reason)
    return ban


async def unban_user(pool: asyncpg.Pool, actor: Actor, external_id: str, reason: str | None = None) -> Ban:
    """Lift a ban: the user may submit again and their best submissions are back on the boards."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        user = await _target_user(conn, external_id)
        ban = await moderation.lift_ban(conn, user.id, actor_id)
        if ban is None:
            raise ModerationError(f"`{external_id}` is not banned.")
        await leaderboard.refresh_user_everywhere(conn, user.id)
        await moderation.audit(conn, actor_id, "unban", f"user:{user.id}", reason, {"ban_id": ban.id})
    log.info("user %d unbanned by %d", user.id, actor_id)
    return ban


async def invalidate_submission(
    pool: asyncpg.Pool, actor: Actor, submission_id: int, reason: str
) -> submissions.Submission:
    """Take a submission off the boards (the user's next best takes its place); it stays stored for audit."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        sub = await _locked_submission(conn, submission_id)
        await moderation.insert_invalidation(conn, sub.id, reason, actor_id)
        await refresh_board(conn, sub)
        await moderation.audit(conn, actor_id, "invalidate", f"submission:{sub.id}", reason, {"score": sub.score})
    log.info("submission %d invalidated by %d: %s", submission_id, actor_id, reason)
    return await get_submission(pool, submission_id)


async def restore_submission(
    pool: asyncpg.Pool, actor: Actor, submission_id: int, reason: str | None = None
) -> submissions.Submission:
    """Undo an invalidation."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        sub = await _locked_submission(conn, submission_id)
        if not await moderation.delete_invalidation(conn, sub.id):
            raise ModerationError(f"Submission #{submission_id} is not invalidated.")
        await refresh_board(conn, sub)
        await moderation.audit(conn, actor_id, "restore", f"submission:{sub.id}", reason, {})
    return await get_submission(pool, submission_id)


async def rerun_submission(pool: asyncpg.Pool, actor: Actor, submission_id: int, reason: str | None = None) -> int:
    """Queue a new job for a submission; its current verdict is cleared until the job finishes.

    The earlier jobs keep their per-case results. Returns the new job's id.
    """
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        sub = await _locked_submission(conn, submission_id)
        live = [j for j in await jobs.jobs_of(conn, sub.id) if j.state in jobs.LIVE_STATES]
        if live:
            raise ModerationError(f"Submission #{submission_id} already has job {live[0].id} {live[0].state}.")
        await submissions.set_status(conn, sub.id, "queued")
        await refresh_board(conn, sub)
        job_id = await jobs.enqueue(conn, sub.id, sub.gpu_type)
        await moderation.audit(conn, actor_id, "rerun", f"submission:{sub.id}", reason, {"job_id": job_id})
    log.info("submission %d rerun as job %d by %d", submission_id, job_id, actor_id)
    return job_id


async def _locked_submission(conn: Conn, submission_id: int) -> submissions.Submission:
    # Lock order: no job row is locked before this in these transactions, so this cannot deadlock a recording.
    sub = await submissions.get_submission(conn, submission_id, lock=True)
    if sub is None:
        await get_submission(conn, submission_id)  # raises SubmissionNotFoundError
    assert sub is not None
    return sub


AUDIT_TARGET = re.compile(r"(user|submission|problem|contest):[A-Za-z0-9_.-]{1,64}")
MAX_AUDIT_ENTRIES = 25


async def audit_entries(pool: asyncpg.Pool, target: str | None = None, count: int = 10) -> list[AuditEntry]:
    """The latest moderator actions, newest first, optionally on one target (`submission:42`, `contest:spring`,
    `problem:matmul`, `user:7`)."""
    if target is not None and not AUDIT_TARGET.fullmatch(target):
        raise InvalidOptionError(
            f"`{target[:80]}` is not an audit target: use `submission:<number>`, `contest:<slug>`, "
            "`problem:<slug>` or `user:<number>`."
        )
    if not 1 <= count <= MAX_AUDIT_ENTRIES:
        raise InvalidOptionError(f"Ask for 1 to {MAX_AUDIT_ENTRIES} entries, not {count}.")
    return await moderation.audit_log(pool, target, count)


async def set_problem_enabled(
    pool: asyncpg.Pool, actor: Actor, slug: str, enabled: bool, reason: str | None = None
) -> problems.ProblemVersion:
    """Open or close a problem for new submissions; its boards stay visible either way."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        problem = await require_problem(conn, slug)
        await problems.set_enabled(conn, slug, enabled)
        action = "problem_enable" if enabled else "problem_disable"
        await moderation.audit(conn, actor_id, action, f"problem:{slug}", reason, {})
        return await require_problem(conn, problem.slug)


async def create_problem(pool: asyncpg.Pool, actor: Actor, spec: ProblemSpec) -> problems.ProblemVersion:
    """Add a problem at `spec.version` (the runners' admission self-test comes first, in the caller)."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        created = await problems.create_problem(
            conn,
            slug=spec.slug,
            title=spec.title,
            version=spec.version,
            source=spec.source,
            dtypes=spec.dtypes,
            score_metric=spec.score_metric,
            created_by=actor_id,
            data_types=spec.data_types,
        )
        target = f"problem:{spec.slug}"
        await moderation.audit(conn, actor_id, "problem_create", target, None, {"version": spec.version})
    return created


async def replace_problem(
    pool: asyncpg.Pool,
    actor: Actor,
    slug: str,
    *,
    source: str | None,
    dtypes: Sequence[str],
    score_metric: str = "gflops",
    title: str | None = None,
    reason: str | None = None,
    data_types: Mapping[str, str] | None = None,
) -> problems.ProblemVersion:
    """Publish a new version of a problem. New submissions and the default boards use it; submissions and
    boards of earlier versions stay attached to those versions."""
    async with pool.acquire() as conn, conn.transaction():
        actor_id = await _actor_id(conn, actor)
        current = await problems.lock_problem(conn, slug)
        if current is None:
            await require_problem(conn, slug)  # raises UnknownProblemError with suggestions
        assert current is not None
        version = await problems.latest_version(conn, current.problem_id) + 1
        await problems.insert_version(
            conn,
            current.problem_id,
            version,
            source=source,
            dtypes=dtypes,
            score_metric=score_metric,
            created_by=actor_id,
            data_types=data_types,
        )
        await problems.set_current_version(conn, current.problem_id, version, title)
        details = {"from_version": current.version, "to_version": version}
        await moderation.audit(conn, actor_id, "problem_replace", f"problem:{slug}", reason, details)
        replaced = await require_problem(conn, slug)
    log.info("problem %s replaced: v%d -> v%d by %d", slug, current.version, version, actor_id)
    return replaced
