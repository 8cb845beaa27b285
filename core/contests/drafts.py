"""What moderators do before and while a contest runs: create, edit, cancel and invite, with the checks on what they
give (slug, title, window, problems, targets, limit, reserved share)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from core.contests.clock import as_utc, format_when
from core.contests.lookup import ContestView, actor_user_id, locked_contest, view_of
from core.contests.targets import GpuCatalog, check_targets
from core.errors import ContestError, InvalidOptionError
from core.moderation import Actor
from core.problems import SLUG, require_problem, shown
from core.store import contests, moderation, users
from core.store.contests import Target
from core.store.pool import Conn
from core.store.problems import ProblemVersion

log = logging.getLogger(__name__)

VISIBILITIES = ("public", "invite_only")
MAX_TITLE_CHARS = 200


@dataclass(frozen=True)
class ContestDraft:
    """A contest as a moderator describes it. `targets` are (GPU type, dtype) pairs; times must carry a zone."""

    slug: str
    title: str
    starts_at: datetime
    ends_at: datetime
    problems: tuple[str, ...]
    targets: tuple[tuple[str, str], ...]
    visibility: str = "public"
    # Its own limit on ranked runs while it runs, (burst, per hour); None keeps the practice limit.
    ranked_limit: tuple[int, float] | None = None
    # The share of its targets' runner slots kept for its ranked runs while it runs, in (0, 1]; None or 0: none.
    reserve_share: float | None = None


def _check_title(title: str) -> str:
    if not title.strip() or len(title) > MAX_TITLE_CHARS or shown(title, MAX_TITLE_CHARS) != title:
        raise InvalidOptionError(
            f"`{shown(title)}` cannot be a contest's title: use 1 to {MAX_TITLE_CHARS} characters of text, "
            "without control characters."
        )
    return title


def _check_limit(limit: tuple[int, float] | None) -> tuple[int, float] | None:
    if limit is None:
        return None
    burst, per_hour = limit
    if burst < 1 or not per_hour > 0:
        raise InvalidOptionError(
            f"A contest's limit needs at least 1 ranked run at once and a positive rate, not {burst} and {per_hour:g}."
        )
    return burst, float(per_hour)


def _check_share(share: float | None) -> float | None:
    """The share as stored: None for none (0 says "none" too, so that an edit can take a share away)."""
    if share is None or share == 0:
        return None
    if not 0 < share <= 1:
        raise InvalidOptionError(
            f"A contest's reserved share is a fraction of its pool's runner slots, more than 0 and at most 1 "
            f"(0.25 keeps a quarter), not {share:g}; 0 reserves nothing."
        )
    return float(share)


def _check_visibility(visibility: str) -> str:
    if visibility not in VISIBILITIES:
        raise InvalidOptionError(f"`{shown(visibility)}` is not a visibility; choose one of {', '.join(VISIBILITIES)}.")
    return visibility


def _check_window(starts_at: datetime, ends_at: datetime, now: datetime, *, start_moves: bool) -> None:
    if start_moves and starts_at < now:
        raise ContestError(
            f"The start {format_when(starts_at)} has passed (it is {format_when(now)}); choose a start from now on."
        )
    if ends_at <= starts_at:
        raise ContestError(f"The end {format_when(ends_at)} must come after the start {format_when(starts_at)}.")
    if ends_at <= now:
        raise ContestError(
            f"The end {format_when(ends_at)} has passed (it is {format_when(now)}); choose an end after now."
        )


async def _resolve_problems(conn: Conn, slugs: Sequence[str], targets: Sequence[Target]) -> list[ProblemVersion]:
    if not slugs:
        raise ContestError("A contest needs at least one problem.")
    found: list[ProblemVersion] = []
    for slug in slugs:
        problem = await require_problem(conn, slug)
        if any(p.problem_id == problem.problem_id for p in found):
            raise ContestError(f"`{problem.slug}` is listed twice; list each problem once.")
        missing = sorted({t.dtype for t in targets} - set(problem.dtypes))
        if missing:
            raise ContestError(
                f"`{problem.slug}` does not take {', '.join(missing)}; drop that target or choose among "
                f"{', '.join(problem.dtypes)}."
            )
        found.append(problem)
    return found


async def _store_problems(conn: Conn, contest_id: int, found: Sequence[ProblemVersion]) -> None:
    rows = [(p.problem_id, p.version, await contests.problem_is_public(conn, p.problem_id)) for p in found]
    await contests.set_problems(conn, contest_id, rows)


# -- moderators: create, edit, cancel, invite -------------------------------------------------------------------


async def create_contest(
    pool: asyncpg.Pool, actor: Actor, draft: ContestDraft, *, now: datetime, gpus: GpuCatalog
) -> ContestView:
    """Create a contest that starts at or after `now`, on GPU types `gpus` knows (`unserved_warning` says which of
    them no runner serves)."""
    if not SLUG.fullmatch(draft.slug):
        raise InvalidOptionError(
            f"`{shown(draft.slug)}` cannot be a contest's slug: use 1 to 64 lower-case letters, digits, '_' or '-', "
            "starting with a letter or digit (e.g. `spring-2030`)."
        )
    title = _check_title(draft.title)
    visibility = _check_visibility(draft.visibility)
    now = as_utc(now, "current time")
    starts_at, ends_at = as_utc(draft.starts_at, "start"), as_utc(draft.ends_at, "end")
    _check_window(starts_at, ends_at, now, start_moves=True)
    targets = check_targets(draft.targets, gpus)
    async with pool.acquire() as conn, conn.transaction():
        found = await _resolve_problems(conn, draft.problems, targets)
        actor_id = await actor_user_id(conn, actor)
        contest = await contests.insert_contest(
            conn,
            slug=draft.slug,
            title=title,
            starts_at=starts_at,
            ends_at=ends_at,
            visibility=visibility,
            created_by=actor_id,
            ranked_limit=_check_limit(draft.ranked_limit),
            reserve_share=_check_share(draft.reserve_share),
        )
        await _store_problems(conn, contest.id, found)
        await contests.set_targets(conn, contest.id, targets)
        details: dict[str, object] = {
            "starts_at": starts_at.isoformat(),
            "ends_at": ends_at.isoformat(),
            "visibility": visibility,
        }
        if contest.reserve_share is not None:
            details["reserve_share"] = contest.reserve_share
        await moderation.audit(conn, actor_id, "contest_create", f"contest:{contest.slug}", None, details)
        created = await view_of(conn, contest)
    log.info("contest %s created by %d: %s to %s", contest.slug, actor_id, format_when(starts_at), format_when(ends_at))
    return created


async def edit_contest(
    pool: asyncpg.Pool,
    actor: Actor,
    slug: str,
    *,
    now: datetime,
    gpus: GpuCatalog,
    title: str | None = None,
    starts_at: datetime | None = None,
    ends_at: datetime | None = None,
    visibility: str | None = None,
    problems: Sequence[str] | None = None,
    targets: Sequence[tuple[str, str]] | None = None,
    reserve_share: float | None = None,
    reason: str | None = None,
) -> ContestView:
    """Change a contest. Before its start anything may change; while it runs only its title, its end (never to
    a time already past) and its reserved share of the pool (0 takes it away: it changes how soon runs are judged,
    never what counts); after its end nothing. New targets are checked against `gpus`, as on creation."""
    now = as_utc(now, "current time")
    async with pool.acquire() as conn, conn.transaction():
        contest = await locked_contest(conn, slug)
        if contest.cancelled_at is not None:
            raise ContestError(f"`{contest.slug}` was cancelled; create a new contest instead.")
        if contest.frozen_at is not None or now >= contest.ends_at:
            raise ContestError(
                f"`{contest.slug}` ended at {format_when(contest.ends_at)}; an ended contest cannot change."
            )
        started = now >= contest.starts_at
        fixed = {"start": starts_at, "visibility": visibility, "problems": problems, "targets": targets}
        if started and any(value is not None for value in fixed.values()):
            named = ", ".join(name for name, value in fixed.items() if value is not None)
            raise ContestError(
                f"`{contest.slug}` started at {format_when(contest.starts_at)}; while it runs only its title, its "
                f"end and its reserved share can change, not its {named}."
            )
        new_start = as_utc(starts_at, "start") if starts_at is not None else contest.starts_at
        new_end = as_utc(ends_at, "end") if ends_at is not None else contest.ends_at
        _check_window(new_start, new_end, now, start_moves=starts_at is not None)
        new_targets = (
            check_targets(targets, gpus) if targets is not None else await contests.targets_of(conn, contest.id)
        )
        if problems is not None or targets is not None:
            slugs = problems if problems is not None else [p.slug for p in await contests.problems_of(conn, contest.id)]
            await _store_problems(conn, contest.id, await _resolve_problems(conn, slugs, new_targets))
        if targets is not None:
            await contests.set_targets(conn, contest.id, new_targets)
        if targets is not None or starts_at is not None:
            # The warning before the start is about these targets at this start: check the changed contest again.
            await contests.clear_start_warning(conn, contest.id)
        updated = await contests.update_contest(
            conn,
            contest.id,
            title=_check_title(title) if title is not None else contest.title,
            starts_at=new_start,
            ends_at=new_end,
            visibility=_check_visibility(visibility) if visibility is not None else contest.visibility,
            reserve_share=_check_share(reserve_share) if reserve_share is not None else contest.reserve_share,
        )
        details: dict[str, object] = {}
        if title is not None:
            details["title"] = updated.title
        if starts_at is not None:
            details["starts_at"] = new_start.isoformat()
        if ends_at is not None:
            details["ends_at"] = new_end.isoformat()
        if visibility is not None:
            details["visibility"] = updated.visibility
        if problems is not None:
            details["problems"] = list(problems)
        if targets is not None:
            details["targets"] = [f"{t.gpu_type}/{t.dtype}" for t in new_targets]
        if reserve_share is not None:
            details["reserve_share"] = updated.reserve_share
        actor_id = await actor_user_id(conn, actor)
        await moderation.audit(conn, actor_id, "contest_edit", f"contest:{contest.slug}", reason, details)
        return await view_of(conn, updated)


async def cancel_contest(pool: asyncpg.Pool, actor: Actor, slug: str, reason: str, *, now: datetime) -> ContestView:
    """Call a contest off: it never freezes nor rates, hides no problem, and its runs stay on the problem boards."""
    now = as_utc(now, "current time")
    async with pool.acquire() as conn, conn.transaction():
        contest = await locked_contest(conn, slug)
        if contest.cancelled_at is not None:
            raise ContestError(f"`{contest.slug}` is cancelled already.")
        if contest.frozen_at is not None:
            raise ContestError(
                f"`{contest.slug}` is over and its board frozen; it cannot be cancelled. A moderator can amend the "
                "frozen board instead."
            )
        actor_id = await actor_user_id(conn, actor)
        cancelled = await contests.cancel_contest(conn, contest.id, actor_id, now)
        await moderation.audit(conn, actor_id, "contest_cancel", f"contest:{contest.slug}", reason, {})
        result = await view_of(conn, cancelled)
    log.info("contest %s cancelled by %d: %s", slug, actor_id, reason)
    return result


async def invite(
    pool: asyncpg.Pool, actor: Actor, slug: str, invitees: Sequence[Actor], reason: str | None = None
) -> list[int]:
    """Let these users enter an invite-only contest (recorded as users first if they never submitted). Returns
    the user ids newly invited."""
    async with pool.acquire() as conn, conn.transaction():
        contest = await locked_contest(conn, slug)
        if contest.visibility != "invite_only":
            raise ContestError(f"`{contest.slug}` is public: everyone may enter. Make it invite-only to invite people.")
        if contest.cancelled_at is not None or contest.frozen_at is not None:
            raise ContestError(f"`{contest.slug}` is over; invitations no longer change anything.")
        ids = [(await users.ensure_user(conn, i.external_id, i.display_name)).id for i in invitees]
        actor_id = await actor_user_id(conn, actor)
        added = await contests.invite(conn, contest.id, ids, actor_id)
        details = {"user_ids": added}
        await moderation.audit(conn, actor_id, "contest_invite", f"contest:{contest.slug}", reason, details)
    return added
