"""Read-only views for the bot's browsing commands: problems, leaderboard pages, a submission, a user's stats.

Each function takes the pool and returns frozen dataclasses; nothing here knows Discord.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import asyncpg

from contract.names import SUBMISSION_STATUSES
from contract.wire import SubmissionResult
from core.contests import code_revealed, visible_problems
from core.errors import InvalidOptionError, SubmissionNotFoundError, UnknownProblemError
from core.leaderboard import Board, get_leaderboard, get_rank
from core.problems import SLUG, ProblemSpec, find_problem, require_problem, shown
from core.ratelimit import remaining
from core.results import load_result
from core.settings import RateLimitSettings
from core.store import jobs, leaderboard, problems, submissions, users
from core.store.leaderboard import BoardRow
from core.store.problems import ProblemVersion
from core.submit.intake import MODES, get_submission
from problems.catalog import CatalogError, ProblemInfo, describe, starter
from problems.distributed.registry import distributed_problems
from problems.registry import builtin_problems, canonical_slug

log = logging.getLogger(__name__)

AUTOCOMPLETE_LIMIT = 25
DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2}


# -- problems --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProblemEntry:
    """A problem as the store has it (enabled, version) with its description from the catalogue."""

    stored: ProblemVersion
    info: ProblemInfo | None
    in_store: bool = True
    """False for a problem of the built-in library that no process has registered in the store yet: it has no
    submissions and no boards (its `stored.problem_id` is 0), but it can be read and solved."""

    @property
    def category(self) -> str:
        return self.info.category if self.info is not None else "general"

    @property
    def difficulty(self) -> str:
        return self.info.difficulty if self.info is not None else "unrated"


@lru_cache(maxsize=512)
def _described(slug: str, source: str | None) -> ProblemInfo:
    """A problem's description, kept: describing the whole library takes tens of milliseconds, and a built-in
    problem (source None) or a stored module's text never changes under the same key."""
    return describe(slug, source)


def _entry(stored: ProblemVersion) -> ProblemEntry:
    try:
        info = _described(stored.slug, stored.source)
    except CatalogError as exc:
        log.warning("problem %s v%d cannot be described: %s", stored.slug, stored.version, exc)
        info = None
    return ProblemEntry(stored, info)


async def _listed(pool: asyncpg.Pool, now: datetime | None) -> list[ProblemVersion]:
    """Every problem at its current version, less those a contest hides until its start."""
    return await visible_problems(pool, await problems.list_problems(pool), now or datetime.now(UTC))


async def list_problems(pool: asyncpg.Pool, *, now: datetime | None = None) -> list[ProblemEntry]:
    """Every problem at its current version that is not hidden at `now` (default: the clock), by category, then
    difficulty, then slug."""
    return _sorted([_entry(p) for p in await _listed(pool, now)])


def _unregistered(spec: ProblemSpec) -> ProblemEntry:
    """A built-in problem the store does not know yet, as an entry with no store row (problem id 0)."""
    stored = ProblemVersion(
        problem_id=0, slug=spec.slug, title=spec.title, enabled=True, current_version=spec.version,
        version=spec.version, source=None, dtypes=spec.dtypes, score_metric=spec.score_metric,
        created_at=_LIBRARY_EPOCH, data_types=spec.data_types,
    )  # fmt: skip
    return ProblemEntry(stored, _described(spec.slug, None), in_store=False)


_LIBRARY_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def library_entry(slug: str) -> ProblemEntry | None:
    """The built-in problem `slug` (or the one a former slug names) as an entry not yet in the store; None when
    the library has no such problem. Only for a slug the store does not have: the store's row is the truth."""
    problem = builtin_problems().get(canonical_slug(slug))
    if problem is not None:
        return _unregistered(ProblemSpec.builtin(problem))
    distributed = distributed_problems().get(slug)
    return _unregistered(ProblemSpec.distributed(distributed)) if distributed is not None else None


def _sorted(entries: list[ProblemEntry]) -> list[ProblemEntry]:
    return sorted(entries, key=lambda e: (e.category, DIFFICULTY_ORDER.get(e.difficulty, 9), e.stored.slug))


async def library_problems(pool: asyncpg.Pool, *, now: datetime) -> list[ProblemEntry]:
    """Every problem a competitor may open at `now`: the store's that no contest hides, and the built-in library's
    that no process has registered yet (the bot registers them as it starts; the web never writes), by category,
    difficulty and slug. `arena problems` lists the same library."""
    listed = [_entry(p) for p in await _listed(pool, now)]
    # Every slug the store has, hidden ones included: a hidden problem must not come back as a library entry, nor
    # one stored under a former slug (the bot renames it when it next starts).
    known = set(await problems.list_slugs(pool))
    library = [
        _unregistered(ProblemSpec.builtin(p))
        for slug, p in builtin_problems().items()
        if known.isdisjoint((slug, *p.aliases))
    ]
    library += [
        _unregistered(ProblemSpec.distributed(d)) for slug, d in distributed_problems().items() if slug not in known
    ]
    return _sorted(listed + library)


async def get_problem_entry(pool: asyncpg.Pool, slug: str, *, now: datetime | None = None) -> ProblemEntry:
    """The problem's statement, unless a contest hides it until its start: then it reads as unknown, with no hint
    that would name it (as at submit)."""
    stored = await require_problem(pool, slug)
    if not await visible_problems(pool, [stored], now or datetime.now(UTC)):
        raise UnknownProblemError(f"There is no problem called `{shown(slug)}`.")
    return _entry(stored)


async def match_problems(
    pool: asyncpg.Pool, typed: str, *, enabled_only: bool = False, now: datetime | None = None
) -> list[ProblemVersion]:
    """At most 25 listed problems whose slug or title contains `typed` (autocomplete: suggestions, re-validated
    later)."""
    needle = typed.strip().lower()
    found = [
        p
        for p in await _listed(pool, now)
        if (not enabled_only or p.enabled) and (needle in p.slug or needle in p.title.lower())
    ]
    found.sort(key=lambda p: (not p.slug.startswith(needle), p.slug))
    return found[:AUTOCOMPLETE_LIMIT]


async def starter_file(pool: asyncpg.Pool, slug: str, language: str, dtype: str) -> tuple[str, str]:
    """(file name, text) of starter code for `slug`."""
    stored = await require_problem(pool, slug)
    try:
        return starter(stored.slug, stored.source, language, dtype)  # type: ignore[arg-type]
    except CatalogError as exc:
        raise InvalidOptionError(f"No starter for `{slug}`: {exc}.") from exc


# -- leaderboards ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardPage:
    board: Board
    page: int
    page_size: int
    has_next: bool
    caller: BoardRow | None

    @property
    def first_rank(self) -> int:
        return self.page * self.page_size + 1


async def leaderboard_page(
    pool: asyncpg.Pool,
    slug: str,
    gpu_type: str,
    dtype: str,
    language: str,
    *,
    page: int,
    page_size: int,
    caller_external_id: str | None,
    method: str | None = None,
) -> LeaderboardPage:
    """Page `page` (from 0) of a board, whether another page follows, and the caller's own row on that board
    (none for an anonymous reader, `caller_external_id` None: the web leaderboard's)."""
    board = await get_leaderboard(
        pool, slug, gpu_type, dtype, language=language, limit=page_size + 1, offset=page * page_size, method=method
    )
    caller = None
    if board.method is not None and caller_external_id is not None:
        caller = await get_rank(pool, slug, gpu_type, dtype, caller_external_id, language=language, method=board.method)
    rows = board.rows[:page_size]
    trimmed = Board(board.problem, board.gpu_type, board.dtype, board.language, rows, board.method)
    return LeaderboardPage(trimmed, page, page_size, len(board.rows) > page_size, caller)


async def board_gpu_types(pool: asyncpg.Pool, slug: str) -> list[str]:
    """GPU types that have a board for `slug` (for autocomplete); empty for an unknown slug."""
    if not SLUG.fullmatch(slug):
        return []
    stored = await find_problem(pool, slug)
    if stored is None:
        return []
    return sorted({b.gpu_type for b in await leaderboard.boards(pool, stored.problem_id, stored.version)})


async def job_counts(pool: asyncpg.Pool) -> dict[str, int]:
    """Jobs in the store by state (the queue, as moderators see it)."""
    return await jobs.count_by_state(pool)


# -- one submission --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubmissionDetail:
    submission: submissions.Submission
    owner_name: str
    source: str
    result: SubmissionResult | None
    """None while the submission is queued or running."""


async def submission_detail(
    pool: asyncpg.Pool,
    submission_id: int,
    caller_external_id: str,
    *,
    moderator: bool = False,
    now: datetime | None = None,
) -> SubmissionDetail:
    """The caller's own submission with its code and result. Someone else's reads as not found, so that
    ids reveal nothing, unless the caller is a moderator or it is contest code revealed at `now` (default: the
    clock; `core.contests.code_revealed`)."""
    sub = await get_submission(pool, submission_id)
    owner = await users.get_user(pool, sub.user_id)
    assert owner is not None
    mine = owner.external_id == caller_external_id
    if not mine and not moderator and not await code_revealed(pool, sub, now or datetime.now(UTC)):
        raise SubmissionNotFoundError(f"You have no submission #{submission_id}; `/me` lists yours.")
    source = await submissions.get_source(pool, sub.source_sha256) or ""
    result = None
    if sub.status in SUBMISSION_STATUSES:  # a run ended: its result is stored
        result = await load_result(pool, sub)
    return SubmissionDetail(sub, owner.display_name, source, result)


# -- a user's stats --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    slug: str
    gpu_type: str
    dtype: str
    rank: int
    score: float
    score_metric: str
    submission_id: int
    method: str | None = None
    """The timing method of the board this rank is on."""


@dataclass(frozen=True)
class UserStats:
    display_name: str
    total: int
    by_status: dict[str, int]
    problems_tried: int
    standings: list[Standing]
    remaining: dict[str, int]
    recent: list[submissions.Submission]


HISTORY_LIMIT = 100


async def user_stats(pool: asyncpg.Pool, external_id: str, display_name: str, limits: RateLimitSettings) -> UserStats:
    """Counts over the user's latest 100 submissions, their place on each board, and their remaining quota."""
    user = await users.find_user(pool, external_id)
    if user is None:
        full = {mode: limits.for_mode(mode).burst for mode in MODES}
        return UserStats(display_name, 0, {}, 0, [], full, [])
    history = await submissions.history(pool, user.id, None, HISTORY_LIMIT)
    standings = await _standings(pool, user.external_id, history)
    left = {mode: await remaining(pool, user.id, mode, limits) for mode in MODES}
    by_status = dict(Counter(s.status for s in history))
    tried = len({s.problem_id for s in history})
    return UserStats(user.display_name, len(history), by_status, tried, standings, left, history[:5])


async def _standings(pool: asyncpg.Pool, external_id: str, history: list[submissions.Submission]) -> list[Standing]:
    boards = {
        (s.slug, s.problem_version, s.gpu_type, s.dtype, s.method)
        for s in history
        if s.mode == "ranked" and s.score and s.method is not None
    }
    found: list[Standing] = []
    for slug, version, gpu_type, dtype, method in sorted(boards):
        try:
            row = await get_rank(pool, slug, gpu_type, dtype, external_id, version=version, method=method)
        except UnknownProblemError:
            continue
        if row is not None:
            metric = next((s.score_metric for s in history if s.id == row.submission_id), None) or "gflops"
            found.append(Standing(slug, gpu_type, dtype, row.rank, row.score, metric, row.submission_id, method))
    return sorted(found, key=lambda s: (s.rank, s.slug))
